// The watch over one import's remote (DECISIONS.md §8 "Imports against hostile servers"). Every wait for
// the remote goes through `wait`, which a stop (a cancel, a limit, a stall) rejects at once, whatever the
// remote does; the stop also destroys the connection, so ssh2 drops its pending requests with it. A stall
// is measured on the app's clock (tests freeze and advance it): the remote has been silent for `stallMs`
// while something was asked of it. Silence between answers counts, not a request's age: a slow link with
// many reads in flight answers one now and then and is not stalled.
export type StopReason = { status: 'cancelled' } | { status: 'failed'; error: string };

/** What a wait rejects with once the import is stopped. */
export class ImportStopped extends Error {
  constructor(readonly reason: StopReason) {
    super(reason.status === 'cancelled' ? 'the import was cancelled' : reason.error);
  }
}

const TICK_MS = 250;

export class RemoteGuard {
  private pending = 0;
  private quietSince = 0;
  private doing = 'connecting';
  private stopped: StopReason | null = null;
  private readonly rejects = new Set<(err: Error) => void>();
  private readonly onStops: (() => void)[] = [];
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly options: {
      /** The app's clock, in milliseconds. */
      now: () => number;
      stallMs: number;
      /** How the remote is named in an error: `host:port`. */
      peer: string;
    },
  ) {
    this.timer = setInterval(() => this.watch(), TICK_MS);
    this.timer.unref();
  }

  get reason(): StopReason | null {
    return this.stopped;
  }

  /** Runs `fn` once stopped (at once when already): closes the connection. */
  onStop(fn: () => void): void {
    if (this.stopped) fn();
    else this.onStops.push(fn);
  }

  /** Throws when stopped: for the steps between waits (a local write, the next directory). */
  check(): void {
    if (this.stopped) throw new ImportStopped(this.stopped);
  }

  private watch(): void {
    if (this.stopped) return;
    const silent = this.options.now() - this.quietSince;
    if (this.pending > 0 && silent >= this.options.stallMs) {
      this.stop({
        status: 'failed',
        error: `The SFTP server at ${this.options.peer} stopped answering for ${Math.round(this.options.stallMs / 1000)} s while ${this.doing}.`,
      });
    }
  }

  /** `work` (an answer asked of the remote), or ImportStopped as soon as the import stops. */
  wait<T>(doing: string, work: Promise<T>): Promise<T> {
    if (this.stopped) {
      work.catch(() => undefined);
      return Promise.reject(new ImportStopped(this.stopped));
    }
    if (this.pending === 0) this.quietSince = this.options.now();
    this.pending += 1;
    this.doing = doing;
    return new Promise<T>((resolve, reject) => {
      this.rejects.add(reject);
      const settle = () => {
        this.rejects.delete(reject);
        this.pending -= 1;
        this.quietSince = this.options.now();
      };
      work.then(
        (value) => {
          settle();
          resolve(value);
        },
        (err: unknown) => {
          settle();
          reject(this.stopped ? new ImportStopped(this.stopped) : err);
        },
      );
    });
  }

  /** The first reason wins; every wait rejects with it and the connection is destroyed. */
  stop(reason: StopReason): void {
    if (this.stopped) return;
    this.stopped = reason;
    const err = new ImportStopped(reason);
    for (const reject of this.rejects) reject(err);
    this.rejects.clear();
    for (const fn of this.onStops.splice(0)) {
      try {
        fn();
      } catch {
        // Closing what is already closed.
      }
    }
  }

  close(): void {
    clearInterval(this.timer);
  }
}
