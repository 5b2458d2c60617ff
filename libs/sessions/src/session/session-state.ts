import { ErrorCode, RpcError } from '@gw/contracts';
import { FencedOutError, type InstanceEntity, type Lease } from '@gw/persistence';
import type { Logger } from '@gw/platform';
import type { PostgresAuthState } from '../auth-state/postgres-auth-state';
import { ChangeSignal, SerialQueue } from './serial-queue';
import type { StateChange } from './session-state-writer';
import { SessionEndedError, type Pairing, type SessionPhase, type SessionServices } from './session-types';

/**
 * What every part of a Session shares: its phase, credentials, pairing and row, and how they change:
 * every task on one serial queue, every state change written with its event under the lease.
 * Fencing anywhere aborts the session (`abort`, given by the Session: its endings do it).
 */
export class SessionState {
  phase: SessionPhase = 'idle';
  auth: PostgresAuthState | null = null;
  pairing: Pairing | null = null;
  /** Whether `row` is as the database last answered it (false after a write that failed and was applied in memory only). */
  rowFromDatabase = true;
  /**
   * The credentials' text an adoption read with the row, under this lease (undefined: not read). The first
   * load of the stored auth takes it instead of reading again; later loads read.
   */
  private storedCreds: string | null | undefined;
  /** The own picture URL as stored (SocketContext.ownPicture): from the row, then from each write of it. */
  readonly ownPicture: { url: string };
  readonly changed = new ChangeSignal();
  readonly logger: Logger;
  private readonly queue = new SerialQueue();

  constructor(
    public row: InstanceEntity,
    readonly lease: Lease,
    readonly services: SessionServices,
    private readonly abort: (reason: string) => void,
    storedCreds?: string | null,
  ) {
    this.logger = services.logger.child({ instanceId: row.id });
    this.storedCreds = storedCreds;
    this.ownPicture = { url: row.profilePicUrl };
  }

  /** The credentials' text the adoption read (once), or undefined: read them. */
  takeStoredCreds(): string | null | undefined {
    const stored = this.storedCreds;
    this.storedCreds = undefined;
    return stored;
  }

  get instanceId(): string {
    return this.lease.instanceId;
  }

  /**
   * Queues a task. Failures never escape as unhandled rejections: fencing aborts the session,
   * anything else is logged and re-thrown to the caller awaiting it (if any).
   */
  run<T>(task: () => Promise<T> | T): Promise<T> {
    const result = this.queue.run(task);
    result.catch((error: unknown) => {
      if (error instanceof FencedOutError) this.abort('fenced out');
      else if (!(error instanceof SessionEndedError) && !(error instanceof RpcError)) this.logger.error({ err: error }, 'session task failed');
    });
    this.changedAfter(result);
    return result;
  }

  private changedAfter(result: Promise<unknown>): void {
    void result.then(
      () => this.changed.notify(),
      () => this.changed.notify(),
    );
  }

  /**
   * Writes a state change with its event. Fencing always stops the session. Other failures (the
   * database is down) are logged and the state machine carries on with the in-memory view, so a
   * socket keeps reconnecting and ending even when its row cannot be updated; `required` writes
   * (the start of a pairing) fail the command instead.
   */
  async write(change: StateChange, options: { required?: boolean } = {}): Promise<void> {
    if (this.phase === 'ended') throw new SessionEndedError(this.instanceId);
    try {
      this.row = await this.guardFencing(() => this.services.writer.write(this.lease, this.row, change));
      this.rowFromDatabase = true;
    } catch (error) {
      if (error instanceof FencedOutError || options.required) throw error;
      this.logger.error({ err: error, patch: Object.keys(change.patch) }, 'writing the session state failed; carrying on');
      this.row = { ...this.row, ...change.patch } as InstanceEntity;
      this.rowFromDatabase = false;
    }
    this.changed.notify();
  }

  async guardFencing<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof FencedOutError) this.abort('fenced out');
      throw error;
    }
  }

  assertAlive(): void {
    if (this.phase === 'ended') throw new RpcError(ErrorCode.NoSession, 'No session');
  }

  /**
   * First flush of a new pairing's credentials. A database failure is logged and retried on the next
   * `creds.update` (the socket works from memory meanwhile); fencing stops the session.
   */
  async persistIfPending(): Promise<void> {
    const auth = this.auth;
    if (!auth || auth.isPersistent || this.phase === 'ended') return;
    try {
      await this.guardFencing(() => auth.persist());
    } catch (error) {
      if (error instanceof FencedOutError) throw error;
      this.logger.error({ err: error }, 'storing the new credentials failed; will retry');
    }
  }

  authOptions() {
    return {
      repository: this.services.authStates,
      lease: this.lease,
      logger: this.logger,
      onFenced: () => this.abort('auth-state write fenced out'),
      // Issue #39: a key write waits out a database outage as long as the keeper keeps the session (the
      // lease's lifetime, then the ride-out of ADR 0037); one that still fails stops the session before
      // Baileys goes on with keys that are not stored.
      outageWaitMs: this.services.config.leaseTtlMs + this.services.config.leaseOutageRideMs,
      onWriteFailed: () => this.abort('auth-state write failed'),
    };
  }
}
