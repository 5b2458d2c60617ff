/**
 * At most `limit` reconnect handshakes of this worker at once (HANDSHAKE_CONCURRENCY). After a server
 * restart every socket closes together; without a bound a worker with a thousand sessions opens a
 * thousand handshakes in the same second, each slow on a busy CPU, many time out and go round again
 * (a reconnect storm). A ticket is held from the moment a socket is opened until it logs in, closes,
 * or `holdMs` passes, whichever comes first; waiters are served in arrival order. At the hold's end the
 * holder's `onHoldEnd` is told (it closes the socket still handshaking, then gives the ticket back), so
 * the bound stays true however slow handshakes become: giving the ticket back while its socket went on
 * handshaking let 663 run at once against a bound of 32 in the 1,000-instance storm.
 */
export class HandshakeGate {
  private active = 0;
  private readonly waiting: Array<() => void> = [];
  private peakActive = 0;

  constructor(
    private readonly limit: number,
    readonly holdMs: number,
  ) {}

  /** Handshakes running now, and the most there were at once (metrics, tests). */
  get stats(): { active: number; waiting: number; peak: number } {
    return { active: this.active, waiting: this.waiting.length, peak: this.peakActive };
  }

  /**
   * Resolves with the release function once a handshake may start; releasing twice is harmless.
   * `onHoldEnd(release)` is called instead of releasing when the hold passes (it must release).
   */
  async acquire(onHoldEnd?: (release: () => void) => void): Promise<() => void> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    this.peakActive = Math.max(this.peakActive, this.active);
    let released = false;
    const timer = setTimeout(() => {
      if (!onHoldEnd) return release();
      try {
        onHoldEnd(release);
      } catch {
        release();
      }
    }, this.holdMs);
    timer.unref();
    const release = () => {
      if (released) return;
      released = true;
      clearTimeout(timer);
      const next = this.waiting.shift();
      // The slot passes straight to the next waiter (active stays the same).
      if (next) next();
      else this.active--;
    };
    return release;
  }
}
