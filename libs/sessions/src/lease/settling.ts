import type { Logger } from '@gw/platform';

export interface SettlingDeps {
  /** At most this long after the start the worker counts as settled whatever it still waits for; 0: at once. */
  maxMs: number;
  /** Its first look for instances ran, and none runs now (LeaseKeeper.looked). */
  looked(): boolean;
  /** Sessions whose socket is on its way to `open` with no failed try yet (Session.opening). */
  opening(): number;
  /** Instances the others' rebalance still owes it (LeaseKeeper.owed; 0 when the rebalance is off). */
  owed(): Promise<number>;
  logger: Logger;
  now?: () => number;
}

/**
 * Whether a session worker that just started has settled (ADR 0057): it looked for its instances, took its part of
 * the others' surplus (the rebalance, ADR 0043), and the sessions it took are open. Until then its `/ready` answers
 * 503 saying what it waits for, so that a rolling deploy, which stops the next worker once this one is ready, does
 * not drain a worker into an heir still busy opening what it was just given (bench/cluster: the slowest sends of a
 * rolling restart were on such an heir). Bounded by `maxMs`: a session that cannot reach WhatsApp, or a surplus
 * that does not move, delays a rollout by that much at most. Once settled, it stays so.
 */
export class Settling {
  private readonly now: () => number;
  private readonly startedAt: number;
  private settledAt: number | null = null;

  constructor(private readonly deps: SettlingDeps) {
    this.now = deps.now ?? Date.now;
    this.startedAt = this.now();
  }

  get settled(): boolean {
    return this.settledAt !== null;
  }

  /** Resolves once settled (and from then on); otherwise rejects, saying what the worker still waits for. */
  async check(): Promise<void> {
    if (this.settledAt !== null) return;
    const waited = this.now() - this.startedAt;
    if (waited >= this.deps.maxMs) return this.settle(this.deps.maxMs > 0 ? `after ${this.deps.maxMs} ms, its bound` : 'at once (no bound)');
    if (!this.deps.looked()) throw new Error('settling: its first look for instances has not run yet');
    const opening = this.deps.opening();
    if (opening > 0) throw new Error(`settling: ${opening} session${opening === 1 ? '' : 's'} opening`);
    const owed = await this.deps.owed();
    if (owed > 0) throw new Error(`settling: ${owed} instance${owed === 1 ? '' : 's'} still to come (over another worker's share, or held by nobody)`);
    this.settle('its part taken, its sessions open');
  }

  private settle(how: string): void {
    if (this.settledAt !== null) return;
    this.settledAt = this.now();
    this.deps.logger.info({ afterMs: this.settledAt - this.startedAt, how }, 'session worker settled (ready for a rollout to go on)');
  }
}
