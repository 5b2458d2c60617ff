/** How long a taken request's key is kept: well past any request's timeout. */
export const RECEIVED_TTL_MS = 10 * 60_000;
/** The most keys kept (the oldest go first): a busy worker's sends of the last minutes. */
export const RECEIVED_MAX = 100_000;

/** What this worker did with a request: never took it, is running it, or has answered it. */
export type ReceivedState = 'none' | 'running' | 'answered';

/**
 * The keys of the requests this worker took (heldRequestKey: a send's message id), per instance, and whether each
 * was answered, for the asker's holder check: a request the holder never took was lost on its way, one it answered
 * whose asker still waits lost its answer on the way back; either way the asker may try it again at once instead
 * of waiting out its timeout (TakeoverRequester). Kept in the order taken; the oldest are dropped past the TTL or
 * the bound.
 */
export class ReceivedRequests {
  /** By instance and key: when last taken, how many of its tries are running, whether one was answered. */
  private readonly taken = new Map<string, { at: number; running: number; answered: boolean }>();

  constructor(
    private readonly ttlMs = RECEIVED_TTL_MS,
    private readonly max = RECEIVED_MAX,
    private readonly now: () => number = Date.now,
  ) {}

  add(instanceId: string, key: string): void {
    const entry = `${instanceId}\u0000${key}`;
    const at = this.now();
    // Taken again (a retry): moved to the end, so that the map stays in the order of the times.
    const before = this.taken.get(entry);
    this.taken.delete(entry);
    this.taken.set(entry, { at, running: (before?.running ?? 0) + 1, answered: before?.answered ?? false });
    for (const [oldest, { at: takenAt }] of this.taken) {
      if (this.taken.size <= this.max && at - takenAt < this.ttlMs) break;
      this.taken.delete(oldest);
    }
  }

  /** A try's answer is being sent. */
  answer(instanceId: string, key: string): void {
    const taken = this.taken.get(`${instanceId}\u0000${key}`);
    if (!taken) return;
    taken.running = Math.max(0, taken.running - 1);
    taken.answered = true;
  }

  state(instanceId: string, key: string): ReceivedState {
    const taken = this.taken.get(`${instanceId}\u0000${key}`);
    if (!taken || this.now() - taken.at >= this.ttlMs) return 'none';
    // A try still running (a retry beside an answered one): its answer is still to come.
    return taken.running > 0 ? 'running' : 'answered';
  }

  get size(): number {
    return this.taken.size;
  }
}
