import { ErrorCode, RpcError, type ConnectReply, type ConnectRequest } from '@gw/contracts';
import type { InstanceEntity, InstanceRepository, Lease } from '@gw/persistence';
import type { Logger } from '@gw/platform';
import type { LeaseKeeper, LeaseListener } from '../lease/lease-keeper';
import type { DeviceListEntry } from '../socket/device-lists';
import { Session, type SessionOwner, type SessionServices } from './session';

/** Told when this worker starts or stops holding an instance (the bus layer subscribes/unsubscribes). */
export interface SessionLifecycleListener {
  sessionStarted(session: Session): void;
  sessionEnded(session: Session): void;
}

/**
 * The sessions this worker holds, one per leased instance. It places new instances (claiming their
 * lease first), adopts orphans the lease keeper found, and stops sessions whose lease is lost.
 */
export class SessionManager implements LeaseListener, SessionOwner {
  private readonly sessions = new Map<string, Session>();
  private lifecycle: SessionLifecycleListener | null = null;

  constructor(
    private readonly instances: InstanceRepository,
    private readonly keeper: LeaseKeeper,
    private readonly services: SessionServices,
    private readonly logger: Logger,
  ) {}

  setLifecycleListener(listener: SessionLifecycleListener): void {
    this.lifecycle = listener;
  }

  get size(): number {
    return this.sessions.size;
  }

  get(instanceId: string): Session | undefined {
    return this.sessions.get(instanceId);
  }

  all(): Session[] {
    return [...this.sessions.values()];
  }

  /**
   * A connect for an instance nobody holds: claim its lease (refused when this worker is full or
   * another worker holds it), start the session and answer the connect.
   */
  async place(request: ConnectRequest): Promise<ConnectReply> {
    const existing = this.sessions.get(request.instanceId);
    if (existing) return existing.connect(request);
    const row = await this.instances.findById(request.instanceId);
    if (!row) throw new RpcError(ErrorCode.NotFound, 'instance not found');
    const claim = await this.keeper.claim(request.instanceId);
    if (claim.kind === 'full') throw new RpcError(ErrorCode.CapacityExhausted, 'session worker is at capacity');
    if (claim.kind === 'held-elsewhere') throw new RpcError(ErrorCode.Conflict, 'instance is held by another session worker');
    // A concurrent place for the same instance may have created it while we claimed.
    const session = this.sessions.get(request.instanceId) ?? this.create(row, claim.lease);
    return session.connect(request);
  }

  /** LeaseListener: paired orphans were claimed for us; start them from stored auth (not awaited to `open`). */
  async orphansClaimed(leases: Lease[]): Promise<void> {
    const fresh = leases.filter((lease) => !this.sessions.has(lease.instanceId));
    if (fresh.length === 0) return;
    // The rows and the stored credentials in one statement for the batch: the leases are ours already, so
    // nobody else writes the credentials any more (issue #38: a round trip less per adoption).
    const found = await this.instances.findManyWithCreds(fresh.map((lease) => lease.instanceId));
    for (const lease of fresh) {
      const row = found.get(lease.instanceId);
      if (!row) {
        await this.keeper.release(lease).catch(() => undefined); // deleted meanwhile
        continue;
      }
      if (this.sessions.has(lease.instanceId)) continue; // a connect request placed it meanwhile
      // The device lists its last holder had, each until its own expiry (socket/device-lists.ts).
      this.services.sockets.deviceLists.of(lease.instanceId).seed(row.deviceLists as DeviceListEntry[]);
      void this.create(row.entity, lease, row.creds)
        .adopt()
        .catch(() => undefined); // logged by the session
    }
  }

  /** LeaseListener: stop at once, write nothing. */
  leaseLost(instanceId: string): void {
    this.sessions.get(instanceId)?.abort('lease lost');
  }

  /** SessionOwner: forget the session; give the lease back unless it was lost. */
  async sessionEnded(session: Session, outcome: { release: boolean }): Promise<void> {
    if (this.sessions.get(session.instanceId) === session) {
      this.sessions.delete(session.instanceId);
      // Its sockets are done here: the device lists they cached go (socket/device-lists.ts).
      this.services.sockets.deviceLists.forget(session.instanceId);
    }
    this.lifecycle?.sessionEnded(session);
    if (!outcome.release) {
      if (this.keeper.holds(session.instanceId) === session.lease) this.keeper.forget(session.instanceId);
      return;
    }
    try {
      await this.keeper.release(session.lease);
    } catch (error) {
      // The row expires on its own; the keeper also gives back unknown rows on its next renewal.
      this.logger.warn({ err: error, instanceId: session.instanceId }, 'lease release failed');
    }
  }

  /** Gracefully reconnects every held session (Subjects.restartAll). */
  async restartAll(): Promise<void> {
    await Promise.allSettled(this.all().map((session) => session.restart()));
  }

  /** Worker shutdown: every session closes without logout and releases its lease. */
  async shutdownAll(): Promise<void> {
    await Promise.allSettled(this.all().map((session) => session.shutdown()));
    // Whatever could not shut down cleanly is dropped without writing.
    for (const session of this.all()) session.abort('worker shutdown');
  }

  /** Test aid that behaves like `kill -9`: sockets dropped, nothing written, nothing released. */
  haltAll(): void {
    for (const session of this.all()) session.abort('worker halted', { hard: true });
  }

  private create(row: InstanceEntity, lease: Lease, storedCreds?: string | null): Session {
    const session = new Session(row, lease, this.services, this, storedCreds);
    this.sessions.set(row.id, session);
    this.lifecycle?.sessionStarted(session);
    return session;
  }
}
