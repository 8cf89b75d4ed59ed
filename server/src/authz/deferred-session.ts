// A session check folded into the operation's own statement. Every session-authenticated request reads
// its session (DECISIONS.md §3: a revoked session ends at once, on every API process); for the route
// clients poll while they wait (GET .../operations/{id}, 800 requests a second for 200 pollers) that read
// was a second PostgreSQL round trip of two, a quarter of the request's CPU. An operation that folds it
// (http/bind.ts: GET only, declared there) gets a session credential whose liveness is still pending: its
// statement asks PostgreSQL `liveSessionCondition` beside the rest and settles the check with the answer,
// before anything it read is used. Whatever the handler does, bind.ts settles a check still pending
// itself (the ordinary read) before it answers: a revoked session always gets the same 401 as anywhere.
import { liveSessionCondition, findLiveSession } from '../auth/sessions.js';
import type { Db } from '../db/client.js';
import { unauthenticated } from '../http/authenticate.js';

export class DeferredSessionCheck {
  #state: 'pending' | 'live' | 'ended' = 'pending';

  constructor(
    readonly sessionId: string,
    readonly userId: string,
    /** The request's time: the session must be live then. */
    readonly at: Date,
  ) {}

  get pending(): boolean {
    return this.#state === 'pending';
  }

  /** The SQL boolean: the session is live and is this user's. */
  condition(db: Db) {
    return liveSessionCondition(db, this.sessionId, this.userId, this.at);
  }

  /** Records what the folded statement answered: a session no longer live is the 401 of any request. */
  settle(live: boolean): void {
    this.#state = live ? 'live' : 'ended';
    if (!live) throw unauthenticated();
  }

  /**
   * Before the request is answered (bind.ts): the ordinary read when the handler did not settle the
   * check, and the 401 whenever the session was found ended, whatever the handler made of it.
   */
  async settleAlone(db: Db): Promise<void> {
    if (this.#state === 'pending') {
      const live = await findLiveSession(db, this.sessionId, this.at);
      this.settle(live !== undefined && live.user_id === this.userId);
    }
    if (this.#state === 'ended') throw unauthenticated();
  }
}
