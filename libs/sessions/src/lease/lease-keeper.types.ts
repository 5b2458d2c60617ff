import type { Lease } from '@gw/persistence';

export interface LeaseKeeperOptions {
  workerId: string;
  /** Most sessions this worker holds at once (WORKER_CAPACITY). */
  capacity: number;
  /** Lease lifetime; renewed every ttl/3 (LEASE_TTL_MS). */
  ttlMs: number;
  /** How often to look for orphaned instances to adopt. */
  reconcileIntervalMs: number;
  /**
   * The first look, this long after `start` (default: one `reconcileIntervalMs`, so that workers starting
   * together all count in its fair share; 0 for a worker that is the only one).
   */
  firstReconcileDelayMs?: number;
  /**
   * How long past the lease's lapse the sessions ride out a database that cannot be reached at all
   * (LEASE_OUTAGE_RIDE_MS, ADR 0037); 0 stops them at the cut-off as for a database that hangs.
   */
  outageRideMs?: number;
}

/** What the keeper tells the owner of the sessions. */
export interface LeaseListener {
  /** The lease is gone (expired, taken over, or no longer provable): stop the session, write nothing. */
  leaseLost(instanceId: string): void;
  /**
   * Orphaned paired instances were claimed for this worker (a batch of a reconcile): start their sessions from
   * stored auth. A rejection gives back every lease of the batch still held.
   */
  orphansClaimed(leases: Lease[]): Promise<void>;
}

/** Told when this worker holds more than its fair share while another worker has room (a rebalance is due). */
export type SurplusListener = () => void;

/** Told which instances a draining worker just handed over, and the heir it chose for each (the worker announces them on the bus). */
export type HandOverListener = (instanceIds: string[], heirs: Record<string, string>) => void;

export type ClaimResult = { kind: 'claimed'; lease: Lease } | { kind: 'full' } | { kind: 'held-elsewhere' };
