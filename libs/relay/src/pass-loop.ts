import { LoopWaker } from '@gw/platform';

/**
 * Runs `pass` whenever poked (pokes during a pass make one more), and every `intervalMs` anyway; a
 * poke within `minGapMs` of the last pass's start waits for the rest of that gap (not after a pass
 * that asked to run again at once). After a pass that threw, the next waits out the waker's backoff
 * whatever the pokes.
 */
export class PassLoop {
  private polled = true;
  private running = false;
  private readonly waker = new LoopWaker();
  private done?: Promise<void>;

  /** `pass` is told whether the poll interval (rather than a poke) started it; true runs it again at once. */
  constructor(
    private readonly pass: (polled: boolean) => Promise<boolean>,
    private readonly intervalMs: number,
    private readonly onError: (error: unknown) => void,
    private readonly minGapMs = 0,
  ) {}

  start(): void {
    this.running = true;
    this.done = this.loop();
  }

  poke(): void {
    this.waker.wake();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.waker.halt();
    await this.done;
  }

  private async loop(): Promise<void> {
    while (this.running) {
      const polled = this.polled;
      this.waker.begin();
      this.polled = false;
      const started = Date.now();
      let again = false;
      try {
        again = await this.pass(polled);
      } catch (error) {
        this.onError(error);
        // Pokes keep coming while the database is down: wait before the next pass, a poll that retries it all.
        if (this.running) await this.waker.backoff(this.intervalMs);
        this.polled = true;
        continue;
      }
      this.waker.succeeded();
      if (again) {
        await this.waker.turn();
        continue;
      }
      if (this.running && !this.waker.woken) this.polled = !(await this.waker.sleep(this.intervalMs));
      // A poke (during the pass or since) soon after it started waits out the gap; the poll does not.
      const gap = started + this.minGapMs - Date.now();
      if (this.running && !this.polled && gap > 0) await new Promise((resolve) => setTimeout(resolve, gap));
    }
  }
}
