import type { Lease, LeaseRepository } from '@gw/persistence';

/**
 * The instances other workers announced as handed over (a drain's `leasesHandedOver`), until this
 * worker's next reconcile claims them first: `findOrphans` gives every heir the same oldest rows, so
 * heirs that only scanned raced for each claim (bench/cluster: 150–550 ms from a hand-over to its claim).
 */
export class AnnouncedHandOvers {
  private readonly ids = new Set<string>();

  constructor(private readonly workerId: string) {}

  add(instanceIds: readonly string[]): void {
    for (const instanceId of instanceIds) this.ids.add(instanceId);
  }

  /**
   * Up to `room` of them that `taken` does not say this worker holds or claims already, in an order of
   * this worker's own (a hash of its id and the instance's), so that two heirs start on different
   * instances instead of racing for the same ones. All are forgotten: those not taken are orphans like
   * any other, for the scan to find.
   */
  take(room: number, taken: (instanceId: string) => boolean): string[] {
    if (this.ids.size === 0) return [];
    const order = new Map([...this.ids].filter((id) => !taken(id)).map((id) => [id, fnv1a(`${this.workerId}\u0000${id}`)]));
    this.ids.clear();
    return [...order.keys()].sort((a, b) => (order.get(a) as number) - (order.get(b) as number)).slice(0, Math.max(0, room));
  }
}

/** 32-bit FNV-1a of a string's UTF-16 code units: a cheap, stable order. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

/**
 * A draining worker's side: the leases its sessions give back in one event-loop turn are handed over in
 * one statement (LeaseRepository.handOver), then announced so that the heirs claim them at once.
 */
export class HandOverBatch {
  private batch: { leases: Lease[]; done: Promise<void> } | null = null;

  constructor(
    private readonly leases: LeaseRepository,
    private readonly announce: (instanceIds: string[]) => void,
  ) {}

  /** Resolves once the lease is handed over (rejects with the statement's error). */
  add(lease: Lease): Promise<void> {
    if (!this.batch) {
      const batch: { leases: Lease[]; done: Promise<void> } = { leases: [], done: Promise.resolve() };
      batch.done = new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
        if (this.batch === batch) this.batch = null;
        await this.leases.handOver(batch.leases);
        this.announce(batch.leases.map((one) => one.instanceId));
      });
      this.batch = batch;
    }
    this.batch.leases.push(lease);
    return this.batch.done;
  }

  /** Waits for the batch under way, if any (its failure is the callers' to see). */
  async settled(): Promise<void> {
    await this.batch?.done.catch(() => undefined);
  }
}
