// Open sockets per user and per resource, in this gateway (CVE-2025-69199 was Wings having no cap).
// A slot is taken before the ticket is spent and given back when the socket closes or is refused.
export class ConnectionLimits {
  readonly #byUser = new Map<string, number>();
  readonly #byResource = new Map<string, number>();

  constructor(
    private readonly perUser: number,
    private readonly perResource: number,
  ) {}

  /** Takes a slot; false (nothing taken) when either cap is reached. */
  take(userId: string, resourceId: string): boolean {
    const user = this.#byUser.get(userId) ?? 0;
    const resource = this.#byResource.get(resourceId) ?? 0;
    if (user >= this.perUser || resource >= this.perResource) return false;
    this.#byUser.set(userId, user + 1);
    this.#byResource.set(resourceId, resource + 1);
    return true;
  }

  give(userId: string, resourceId: string): void {
    decrement(this.#byUser, userId);
    decrement(this.#byResource, resourceId);
  }

  get open(): number {
    let n = 0;
    for (const v of this.#byUser.values()) n += v;
    return n;
  }
}

function decrement(map: Map<string, number>, key: string): void {
  const n = (map.get(key) ?? 0) - 1;
  if (n > 0) map.set(key, n);
  else map.delete(key);
}
