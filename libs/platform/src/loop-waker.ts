/**
 * The pause of a work loop between passes: `sleep(ms)` ends after `ms`, or as soon as `wake()` is
 * called. A wake that comes while the loop is busy (between `begin()` and `sleep()`) is not lost: the
 * next `sleep()` returns at once. The poll-and-wake loops of the services (async dispatcher, campaign
 * scheduler, Chatwoot sync, webhook relay, outbox follower, chatbot runner) pause through one.
 */
export class LoopWaker {
  private requested = false;
  private interrupt?: () => void;

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

  /** Resolves true when woken (or already woken since `begin()`), false when `ms` passed. */
  sleep(ms: number): Promise<boolean> {
    if (this.requested) return Promise.resolve(true);
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
}
