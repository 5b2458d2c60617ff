import { ErrorCode, RpcError } from '@gw/contracts';
import { FencedOutError, type InstanceEntity, type Lease } from '@gw/persistence';
import type { Logger } from '@gw/platform';
import type { PostgresAuthState } from '../auth-state/postgres-auth-state';
import type { WASocket, WAVersion } from '../baileys';
import type { PacedWait } from './reconnect-pacer';
import { ChangeSignal, SerialQueue } from './serial-queue';
import type { StateChange } from './session-state-writer';
import { SessionEndedError, type Pairing, type SessionOwner, type SessionPhase, type SessionServices } from './session-types';

/**
 * What a Session knows (its phase, socket, credentials, pairing, reconnect bookkeeping and its row),
 * and how it changes it: every task on one serial queue, every state change written under the lease.
 * The layers above (SessionEndings, SessionConnection, SessionPairing, Session) share these fields.
 */
export abstract class SessionState {
  protected phase: SessionPhase = 'idle';
  protected auth: PostgresAuthState | null = null;
  protected socket: WASocket | null = null;
  protected detachObservers: Array<() => void> = [];
  protected generation = 0;
  protected pairing: Pairing | null = null;
  protected expiryTimer: NodeJS.Timeout | undefined;
  protected reconnectTimer: PacedWait | undefined;
  /** Frees this session's slot in the worker's HandshakeGate (held from a reconnect's socket until it logs in or closes). */
  protected handshakeRelease: (() => void) | undefined;
  /** The reconnect waiting for its delay or for the gate; an older one that gets its turn steps aside. */
  protected reconnectTicket = 0;
  /**
   * The reconnect ticket whose request read or wrote the row (the adoption's read, startReconnect's
   * write answering the row as stored): its socket opens with that row, not read once more (issue #38).
   */
  protected rowReadForTicket = -1;
  /** When this session last dropped a socket of its own that was still open or logging in (see onClose's 440). */
  protected replacedOwnSocketAt = 0;
  protected attempt = 0;
  /** The WhatsApp Web version the current socket logs in with (a 405 names it). */
  protected socketVersion: WAVersion | undefined;
  /** Why WhatsApp refused the pairing this session ended on; the connect waiting for it gets the error. */
  protected pairingRefusal: string | undefined;
  /** Why the last socket could not reach WhatsApp (refused, no route, no DNS); cleared once it is reached. */
  protected connectFailure: string | undefined;
  /** The last close's reason and how many closes in a row had it: the same failure is logged once, then every 10th. */
  protected lastClose = { reason: '', repeats: 0 };
  /** Until when a send waits for the first open of a session adopted from another worker (0: not arriving). */
  protected arrivingUntil = 0;
  /** Whether `row` is as the database last answered it (false after a write that failed and was applied in memory only). */
  protected rowFromDatabase = true;
  private readonly queue = new SerialQueue();
  protected readonly changed = new ChangeSignal();
  protected readonly logger: Logger;

  constructor(
    protected row: InstanceEntity,
    readonly lease: Lease,
    protected readonly services: SessionServices,
    protected readonly owner: SessionOwner,
  ) {
    this.logger = services.logger.child({ instanceId: row.id });
  }

  get instanceId(): string {
    return this.lease.instanceId;
  }

  get currentPhase(): SessionPhase {
    return this.phase;
  }

  get instance(): InstanceEntity {
    return this.row;
  }

  /** See SessionEndings.abort: the lease is gone, stop everything at once and write nothing. */
  abstract abort(reason: string, options?: { hard?: boolean }): void;

  /**
   * Queues a task. Failures never escape as unhandled rejections: fencing aborts the session,
   * anything else is logged and re-thrown to the caller awaiting it (if any).
   */
  protected run<T>(task: () => Promise<T> | T): Promise<T> {
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
  protected async write(change: StateChange, options: { required?: boolean } = {}): Promise<void> {
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

  protected async guardFencing<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof FencedOutError) this.abort('fenced out');
      throw error;
    }
  }

  protected assertAlive(): void {
    if (this.phase === 'ended') throw new RpcError(ErrorCode.NoSession, 'No session');
  }

  protected authOptions() {
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
