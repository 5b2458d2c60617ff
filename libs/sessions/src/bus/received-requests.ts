/** How long a taken request's key is kept: well past any request's timeout. */
export const RECEIVED_TTL_MS = 10 * 60_000;
/** The most keys kept (the oldest go first): a busy worker's sends of the last minutes. */
export const RECEIVED_MAX = 100_000;

/**
 * The keys of the requests this worker took (heldRequestKey: a send's message id), per instance, for the asker's
 * holder check: a request the holder never took was lost on the bus, and the asker may try it again at once
 * instead of waiting out its timeout (TakeoverRequester). Kept in the order taken; the oldest are dropped past
 * the TTL or the bound.
 */
export class ReceivedRequests {
  private readonly taken = new Map<string, number>();

  constructor(
    private readonly ttlMs = RECEIVED_TTL_MS,
    private readonly max = RECEIVED_MAX,
    private readonly now: () => number = Date.now,
  ) {}

  add(instanceId: string, key: string): void {
    const entry = `${instanceId}\u0000${key}`;
    const at = this.now();
    // Taken again (a retry): moved to the end, so that the map stays in the order of the times.
    this.taken.delete(entry);
    this.taken.set(entry, at);
    for (const [oldest, takenAt] of this.taken) {
      if (this.taken.size <= this.max && at - takenAt < this.ttlMs) break;
      this.taken.delete(oldest);
    }
  }

  has(instanceId: string, key: string): boolean {
    const takenAt = this.taken.get(`${instanceId}\u0000${key}`);
    return takenAt !== undefined && this.now() - takenAt < this.ttlMs;
  }

  get size(): number {
    return this.taken.size;
  }
}
