import type { Logger } from '@gw/platform';

/** The pause between two moves of a rebalance: an heir opens one socket at a time from each giver. */
export const REBALANCE_MOVE_GAP_MS = 250;

export interface RebalancerDeps {
  /** How many instances should still move away (LeaseKeeper.surplus: asked again before each move). */
  surplus(): Promise<number>;
  /** The next instance to move (an open session with nothing in flight, preferably), or none. */
  next(): string | undefined;
  /** Moves one instance (a hand-over as a drain's); false when it could not (the rebalance stops). */
  move(instanceId: string): Promise<boolean>;
  gapMs?: number;
  logger: Logger;
}

/**
 * A worker holding more than its fair share while another worker has room (one that just started, came
 * back from a restart, or was added to scale out) hands the surplus over, one instance at a time
 * (ADR 0043). Without it a new worker took instances only from a drain or a crash: after a rolling restart
 * the last worker restarted held none, and the next drain gave all of a worker's instances to one cold
 * heir (bench/cluster runs 71–79: the slowest sends of the rolling restart were there).
 *
 * One move at a time, each a drain's hand-over of one instance (served until its own turn, its sends in
 * flight finished, its Signal state stored, its lease handed over and announced), REBALANCE_MOVE_GAP_MS
 * apart, and the surplus asked again before each: a drain elsewhere, a worker that dies or instances
 * that come and go change it. `nudge()` starts a rebalance unless one runs; `stop()` ends it after the
 * move under way.
 */
export class Rebalancer {
  private running: Promise<void> | null = null;
  private stopped = false;
  private current: string | null = null;
  private wake: (() => void) | null = null;

  constructor(private readonly deps: RebalancerDeps) {}

  /** A reconcile found a surplus: start moving unless a rebalance already runs. */
  nudge(): void {
    if (this.stopped || this.running) return;
    this.running = this.run().finally(() => (this.running = null));
  }

  /** The instance whose move is under way, if any. */
  get moving(): string | null {
    return this.current;
  }

  /** No further move; waits for the one under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.running;
  }

  /** Waits for the move under way (if any) without stopping the rebalance. */
  async settled(): Promise<void> {
    await this.running;
  }

  private async run(): Promise<void> {
    const startedAt = Date.now();
    let moved = 0;
    let surplus = 0;
    try {
      while (!this.stopped) {
        surplus = await this.deps.surplus();
        if (surplus <= 0 || this.stopped) break;
        const instanceId = this.deps.next();
        if (!instanceId) break;
        this.current = instanceId;
        const done = await this.deps.move(instanceId).finally(() => (this.current = null));
        if (!done) break;
        moved += 1;
        if (this.stopped) break;
        await this.pause(this.deps.gapMs ?? REBALANCE_MOVE_GAP_MS);
      }
    } catch (error) {
      this.deps.logger.warn({ err: error, moved }, 'rebalance stopped: the fair share could not be read');
    }
    if (moved > 0)
      this.deps.logger.info({ moved, tookMs: Date.now() - startedAt, lastSurplusRead: surplus }, 'rebalanced: instances moved to workers with room');
  }

  private pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    }).finally(() => (this.wake = null));
  }
}
