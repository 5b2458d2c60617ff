import type { Lease, LeaseRepository } from '@gw/persistence';

/** A live worker as a candidate heir: its room is its fair share less the live leases it holds (0 when full). */
export interface Heir {
  readonly workerId: string;
  readonly room: number;
}

/** How long an instance announced for another heir is left to it before any worker may take it as an orphan. */
export const HEIR_HEAD_START_MS = 2_000;

/**
 * The instances other workers announced as handed over (a drain's `leasesHandedOver`), until this
 * worker's next reconcile claims its part of them. Each announced instance has one heir among the live
 * workers, the same for every worker that asks: weighted rendezvous hashing, each worker weighted by its
 * room under the fair share (Heir.room). So the heirs share a drain in proportion to their room: two
 * empty workers about evenly (opening a socket costs the heir's event loop: when one empty worker took
 * all of a drained worker's instances, the last of them opened 3.5 s after its claim, bench/cluster run
 * 34), and a worker at its share takes none of them. Weighted by nothing, the last worker of a rolling
 * restart had taken a part of every earlier drain, held 31-36 of 50 instances at its own SIGTERM, and
 * its drain (the store of their backlog) was the slowest (runs 45, 47, 49). An instance left to another
 * heir is kept out of this worker's orphan scans for HEIR_HEAD_START_MS, so that the workers do not race
 * for it; past that, an heir that did not claim it (it was full, or has just died) leaves it to whoever
 * scans.
 */
export class AnnouncedHandOvers {
  private readonly ids = new Set<string>();
  /** The heir the drainer named for an announced instance (ADR 0058), when it named one. */
  private readonly named = new Map<string, string>();
  /** Instances left to another heir: until when this worker leaves them out of its scans. */
  private readonly othersUntil = new Map<string, number>();
  private headStartTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly workerId: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** Instances handed over, with the heir the drainer named for each (`heirs`, ADR 0058) when it named one. */
  add(instanceIds: readonly string[], heirs: Readonly<Record<string, string>> = {}): void {
    for (const instanceId of instanceIds) {
      this.ids.add(instanceId);
      const heir = heirs[instanceId];
      if (typeof heir === 'string' && heir) this.named.set(instanceId, heir);
      else this.named.delete(instanceId);
    }
  }

  /**
   * The announced instances whose heir is this worker, at most `room` and skipping those `taken` says this worker
   * holds or claims already: the heir the drainer named (ADR 0058), else the heir among `workers` (the live
   * workers, this one included; a worker the list does not name counts with `ownRoom`) by rendezvous hashing. The
   * rest are remembered as another heir's for HEIR_HEAD_START_MS. All are forgotten as announced.
   */
  take(room: number, taken: (instanceId: string) => boolean, workers: readonly Heir[], ownRoom = room): string[] {
    if (this.ids.size === 0) return [];
    const heirs = workers.some((heir) => heir.workerId === this.workerId) ? workers : [...workers, { workerId: this.workerId, room: Math.max(0, ownRoom) }];
    const until = this.now() + HEIR_HEAD_START_MS;
    const mine: string[] = [];
    for (const id of this.ids) {
      if (taken(id)) continue;
      if ((this.named.get(id) ?? heirOf(id, heirs)) === this.workerId) mine.push(id);
      else this.othersUntil.set(id, until);
    }
    this.ids.clear();
    this.named.clear();
    return mine.slice(0, Math.max(0, room));
  }

  /** Whether an orphan was announced for another heir a moment ago (this worker leaves it to that heir). */
  leftToAnother(instanceId: string): boolean {
    const until = this.othersUntil.get(instanceId);
    if (until === undefined) return false;
    if (until > this.now()) return true;
    this.othersUntil.delete(instanceId);
    return false;
  }

  /** Runs `scan` once the last head start given to another heir ends, if any runs: a scan then finds what they left. */
  afterHeadStarts(scan: () => void): void {
    clearTimeout(this.headStartTimer);
    let last: number | null = null;
    const now = this.now();
    for (const [id, until] of this.othersUntil) {
      if (until <= now) this.othersUntil.delete(id);
      else last = Math.max(last ?? 0, until);
    }
    if (last !== null) this.headStartTimer = setTimeout(scan, last - now + 10);
  }

  stop(): void {
    clearTimeout(this.headStartTimer);
  }
}

/**
 * The live workers (those `heldBy` names, with the live leases each holds) as heirs, each with its room under
 * `share` and its own capacity (`capacityBy`, when known: a smaller worker's share is its capacity).
 */
export function heirsByRoom(share: number, heldBy: Readonly<Record<string, number>>, capacityBy: Readonly<Record<string, number>> = {}): Heir[] {
  return Object.entries(heldBy).map(([workerId, held]) => ({ workerId, room: Math.max(0, Math.min(share, capacityBy[workerId] ?? share) - held) }));
}

/**
 * A drainer's (or a rebalance's) choice of heir for each instance it hands over (ADR 0058): the heir with the most
 * room left, each instance taking one from it, ties broken by rendezvous hashing. The heirs once chose for
 * themselves, each by the rooms it read at its own reconcile; as their claims of a drain's first instances changed
 * those rooms, two heirs could each take an instance for the other's, and it waited HEIR_HEAD_START_MS or longer
 * for a scan (bench/cluster 2026-12-06: the slowest waits of a rolling restart, 2.3 s after the drain). One choice,
 * made by the drainer and named in its notice, leaves nothing to disagree on, and splits the drain by room exactly.
 */
export class HeirPlan {
  private readonly left: Map<string, number>;

  constructor(heirs: readonly Heir[]) {
    this.left = new Map(heirs.map((heir) => [heir.workerId, heir.room]));
  }

  /** The heir of one more instance; undefined when there is no heir. */
  assign(instanceId: string): string | undefined {
    if (this.left.size === 0) return undefined;
    const most = Math.max(...this.left.values());
    const tied = [...this.left.entries()].filter(([, room]) => room === most).map(([workerId]) => ({ workerId, room: 1 }));
    const heir = heirOf(instanceId, tied) as string;
    this.left.set(heir, most - 1);
    return heir;
  }
}

/**
 * The heirs of a worker that drains (`workerId`), each with its room under the fair share of the workers left
 * (the drainer no longer counts): from LeaseRepository.fairShare's reading.
 */
export function drainHeirs(
  workerId: string,
  standing: { wanted: number; workerIds: readonly string[]; heldBy: Readonly<Record<string, number>>; capacityBy: Readonly<Record<string, number>> },
): Heir[] {
  const others = standing.workerIds.filter((id) => id !== workerId);
  if (others.length === 0) return [];
  const share = Math.ceil(standing.wanted / others.length);
  return others.map((id) => ({ workerId: id, room: Math.max(0, Math.min(share, standing.capacityBy[id] ?? share) - (standing.heldBy[id] ?? 0)) }));
}

/**
 * How many instances may still come to `workerId` (ADR 0057): what the other workers hold over their share
 * (`share`, or a smaller worker's capacity), which their rebalance (ADR 0043) moves to the workers with room, and
 * the instances that want a session and nobody live holds (`wanted` less every live lease: orphans, and instances
 * between a hand-over and their heir's claim), within its room under its own share. A worker that just started has
 * taken in its part once this is 0 (what is left is the share's rounding). Without the rebalance (`rebalance`
 * false) nothing moves from the others: only what nobody holds counts.
 */
export function intakeOf(
  workerId: string,
  share: number,
  heldBy: Readonly<Record<string, number>>,
  capacityBy: Readonly<Record<string, number>> = {},
  wanted = 0,
  rebalance = true,
): number {
  const shareOf = (id: string) => Math.min(share, capacityBy[id] ?? share);
  const room = Math.max(0, shareOf(workerId) - (heldBy[workerId] ?? 0));
  const excess = !rebalance
    ? 0
    : Object.entries(heldBy)
        .filter(([id]) => id !== workerId)
        .reduce((sum, [id, held]) => sum + Math.max(0, held - shareOf(id)), 0);
  const unheld = Math.max(0, wanted - Object.values(heldBy).reduce((sum, held) => sum + held, 0));
  return Math.min(room, excess + unheld);
}

/**
 * How many instances a worker holding `held` should hand to the others (a rebalance, ADR 0043): what it
 * holds over its `share`, no more than the others have room for under theirs. Each move goes from a worker
 * over its share to one under it (so it holds at least two fewer), and makes them nearer: the moves end,
 * nothing moves back, and what is left is the share's rounding (none over the share).
 */
export function surplusOf(workerId: string, held: number, share: number, heirs: readonly Heir[]): number {
  const room = heirs.filter((heir) => heir.workerId !== workerId).reduce((sum, heir) => sum + heir.room, 0);
  return Math.max(0, Math.min(held - share, room));
}

/**
 * The heir of an instance among workers: weighted rendezvous hashing (the highest room / -ln(u), u the
 * worker's and instance's hash in (0, 1)), so each worker is the heir of a part of the instances in
 * proportion to its room, and a worker's part changes only by what its own room does. When no worker has
 * room, every one weighs the same. Ties: the lower worker id.
 */
export function heirOf(instanceId: string, workers: readonly Heir[]): string | undefined {
  const anyRoom = workers.some((heir) => heir.room > 0);
  let best: string | undefined;
  let bestScore = -1;
  for (const { workerId, room } of workers) {
    const weight = anyRoom ? Math.max(0, room) : 1;
    if (weight === 0) continue;
    const unit = (fnv1a(`${workerId}\u0000${instanceId}`) + 1) / 4_294_967_297;
    const score = weight / -Math.log(unit);
    if (score > bestScore || (score === bestScore && best !== undefined && workerId < best)) {
      best = workerId;
      bestScore = score;
    }
  }
  return best;
}

/** 32-bit FNV-1a of a string's UTF-16 code units, then murmur3's finaliser (so that near strings spread): a cheap, stable hash. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  hash = Math.imul(hash ^ (hash >>> 16), 0x85ebca6b);
  hash = Math.imul(hash ^ (hash >>> 13), 0xc2b2ae35);
  return (hash ^ (hash >>> 16)) >>> 0;
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
