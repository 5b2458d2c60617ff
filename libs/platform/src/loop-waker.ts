/** The first wait after a failed pass; each failure in a row doubles it, up to the loop's cap. */
const FIRST_BACKOFF_MS = 100;

/**
 * The pause of a work loop between passes: `sleep(ms)` ends after `ms`, or as soon as `wake()` is
 * called. A wake that comes while the loop is busy (between `begin()` and `sleep()`) is not lost: the
 * next `sleep()` returns at once. The poll-and-wake loops of the services (async dispatcher, campaign
 * scheduler, Chatwoot sync, webhook relay, outbox follower, chatbot runner) pause through one.
 *
 * After a pass that failed, a loop waits out `backoff()` instead: wakes do not shorten it (a loop
 * woken by every notice while its database is down would otherwise retry, and log, as fast as the
 * notices come), only `halt()` does. Every wait, even one that ends at once, lets I/O run first.
 */
export class LoopWaker {
  private requested = false;
  private interrupt?: () => void;
  private cancel?: () => void;
  private failures = 0;

  /** Starts a pass: wakes before this point are answered by it. */
  begin(): void {
    this.requested = false;
  }

  /** Whether a wake came since the pass began (the loop may go again without sleeping). */
  get woken(): boolean {
    return this.requested;
  }

  wake(): void {
    this.requested = true;
    this.interrupt?.();
  }

  /** The loop is stopping: ends a sleep or a backoff at once (and counts as a wake). */
  halt(): void {
    this.cancel?.();
    this.wake();
  }

  /** Resolves true when woken (or already woken since `begin()`), false when `ms` passed. */
  sleep(ms: number): Promise<boolean> {
    if (this.requested) return this.turn().then(() => true);
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        this.interrupt = undefined;
        resolve(false);
      }, ms);
      this.interrupt = () => {
        this.interrupt = undefined;
        clearTimeout(timer);
        resolve(true);
      };
    });
  }

  /** For a loop that goes again at once: lets timers and sockets run before the next pass. */
  turn(): Promise<void> {
    return new Promise((resolve) => setImmediate(resolve));
  }

  /**
   * After a failed pass: waits 100 ms, twice that after a second failure in a row, and so on up to
   * `maxMs` (the loop's poll interval), until `succeeded()`. Wakes do not end it; `halt()` does.
   */
  backoff(maxMs: number): Promise<void> {
    const ms = Math.min(maxMs, FIRST_BACKOFF_MS * 2 ** Math.min(this.failures, 20));
    this.failures++;
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.cancel = undefined;
        resolve();
      }, ms);
      this.cancel = () => {
        this.cancel = undefined;
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /** A pass did its work: the next failure waits the shortest again. */
  succeeded(): void {
    this.failures = 0;
  }
}
