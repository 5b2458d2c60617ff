import type { Bus, BusSubscription } from '@gw/bus';
import { ErrorCode, RpcError, Subjects, type PlaceRequest } from '@gw/contracts';
import { FencedOutError } from '@gw/persistence';
import type { Logger } from '@gw/platform';
import { parseConnectRequest } from '../ops/instance.ops';
import { asObject, type OpRegistry } from '../ops/op-handler';
import { isInstanceOp, runOp } from '../ops/op-registry';
import { SessionEndedError, type Session } from '../session/session';
import type { SessionLifecycleListener, SessionManager } from '../session/session-manager';

/** Queue group of `Subjects.place`: each placement goes to exactly one worker. */
export const SESSION_WORKERS_QUEUE = 'session-workers';

/**
 * The worker's side of the bus: placements (queue group), the ops of every held instance
 * (`instance.<id>.>` while held; "no responders" tells the gateway nobody holds it), and the
 * restart-all broadcast. Errors travel as RpcError codes.
 */
export class SessionRpcServer implements SessionLifecycleListener {
  private readonly global: BusSubscription[] = [];
  private readonly perInstance = new Map<string, BusSubscription>();
  /** Ops being handled now (a drain waits for them). */
  private readonly inFlight = new Set<Promise<unknown>>();
  private draining = false;

  constructor(
    private readonly bus: Bus,
    private readonly manager: SessionManager,
    private readonly logger: Logger,
    private readonly ops: OpRegistry,
  ) {}

  start(): void {
    this.manager.setLifecycleListener(this);
    this.global.push(this.bus.subscribe(Subjects.place, (data) => this.place(data), { queue: SESSION_WORKERS_QUEUE }));
    this.global.push(
      this.bus.subscribe(Subjects.restartAll, async () => {
        this.logger.info('restart of all sessions requested');
        await this.manager.restartAll();
        return { ok: true };
      }),
    );
  }

  /** Stops taking placements and restarts (shutdown begins); instance ops stay until sessions end. */
  stopAccepting(): void {
    for (const subscription of this.global.splice(0)) subscription.unsubscribe();
  }

  /**
   * Drain (SIGTERM, issue #39): ops that arrive from now on answer `No session` (the gateway tries a
   * send again until the instance's next holder answers; `status` is still answered, so the gateway
   * does not take this worker for dead while it finishes), and the ops in flight, sends among them,
   * are finished first, for at most `timeoutMs`.
   */
  async drain(timeoutMs: number): Promise<void> {
    this.draining = true;
    if (this.inFlight.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    await Promise.race([Promise.allSettled([...this.inFlight]), expired]);
    clearTimeout(timer);
    if (this.inFlight.size) this.logger.warn({ inFlight: this.inFlight.size }, 'drain: ops still running after the wait; closing anyway');
  }

  stop(): void {
    this.stopAccepting();
    for (const subscription of this.perInstance.values()) subscription.unsubscribe();
    this.perInstance.clear();
  }

  sessionStarted(session: Session): void {
    const instanceId = session.instanceId;
    this.perInstance.get(instanceId)?.unsubscribe();
    const prefix = `instance.${instanceId}.`;
    const subscription = this.bus.subscribe(`${prefix}>`, (data, subject) => this.dispatch(instanceId, subject.slice(prefix.length), data));
    this.perInstance.set(instanceId, subscription);
  }

  sessionEnded(session: Session): void {
    // Only if no newer session for the instance took the subscription over.
    if (this.manager.get(session.instanceId)) return;
    this.perInstance.get(session.instanceId)?.unsubscribe();
    this.perInstance.delete(session.instanceId);
  }

  private async place(data: unknown): Promise<unknown> {
    const request = asObject(data) as Partial<PlaceRequest>;
    const connect = asObject(request.connect);
    const instanceId = typeof request.instanceId === 'string' ? request.instanceId : connect.instanceId;
    if (typeof instanceId !== 'string' || !instanceId) throw new RpcError(ErrorCode.BadRequest, 'instanceId is required');
    try {
      return await this.manager.place(parseConnectRequest(connect, instanceId));
    } catch (error) {
      throw toRpcError(error);
    }
  }

  private async dispatch(instanceId: string, op: string, data: unknown): Promise<unknown> {
    const session = this.manager.get(instanceId);
    if (!session) throw new RpcError(ErrorCode.NoSession, 'No session');
    if (!isInstanceOp(op)) throw new RpcError(ErrorCode.BadRequest, `unknown operation ${op}`);
    if (this.draining && op !== 'status') throw new RpcError(ErrorCode.NoSession, 'No session (the session worker is handing the instance over)');
    const running = runOp(this.ops, op, session, asObject(data));
    this.inFlight.add(running);
    try {
      return await running;
    } catch (error) {
      throw toRpcError(error);
    } finally {
      this.inFlight.delete(running);
    }
  }
}

/** Session-side failures in the bus's closed set of codes (anything else stays an internal error). */
function toRpcError(error: unknown): unknown {
  if (error instanceof FencedOutError) return new RpcError(ErrorCode.Fenced, 'instance is now held by another session worker');
  if (error instanceof SessionEndedError) return new RpcError(ErrorCode.NoSession, 'No session');
  return error;
}
