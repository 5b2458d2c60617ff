import type { Bus, BusSubscription } from '@gw/bus';
import { ErrorCode, heldRequestKey, RpcError, Subjects, type PlaceRequest, type StatusReply } from '@gw/contracts';
import { databaseUnavailable, FencedOutError } from '@gw/persistence';
import type { Logger } from '@gw/platform';
import { parseConnectRequest } from '../ops/instance.ops';
import { asObject, type OpRegistry } from '../ops/op-handler';
import { isInstanceOp, runOp } from '../ops/op-registry';
import { SessionEndedError, type Session } from '../session/session';
import { ReceivedRequests } from './received-requests';
import type { SessionLifecycleListener, SessionManager } from '../session/session-manager';

/** Queue group of `Subjects.place`: each placement goes to exactly one worker. */
export const SESSION_WORKERS_QUEUE = 'session-workers';

/**
 * Ops that do not wait for an arriving session's socket: they answer from what the session knows (status,
 * asked by the gateway's holder check), start or end it (connect, logout, release, hibernate, reset), or
 * wait for the open themselves (send). Every other op reaching an instance adopted a moment ago (a drain's
 * hand-over, a takeover) waits for its first socket to open, as a send does, instead of NotConnected.
 */
const NO_ARRIVAL_WAIT: ReadonlySet<string> = new Set(['status', 'connect', 'logout', 'release', 'hibernate', 'instance.reset', 'send']);

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
  /** The same, per instance: a drain hands each instance over once its own ops are done. */
  private readonly inFlightOf = new Map<string, Set<Promise<unknown>>>();
  private draining = false;
  /** Instances being handed over (a drain's): their ops are refused while the others' still run. */
  private readonly handingOver = new Set<string>();
  private accepting = true;
  /** Subscriptions of ended sessions still draining (close waits for them). */
  private readonly closing = new Set<Promise<void>>();
  /** The requests taken that carry their own id (sends), for the askers' holder checks (`status`'s `awaiting`). */
  private readonly received = new ReceivedRequests();

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

  /**
   * Stops taking placements and restarts (shutdown begins); instance ops stay until sessions end. A
   * placement the bus had already routed here is answered CapacityExhausted (the gateway asks the next
   * worker), not dropped.
   */
  async stopAccepting(): Promise<void> {
    this.accepting = false;
    await Promise.allSettled(this.global.splice(0).map((subscription) => subscription.drain()));
  }

  /**
   * Drain (SIGTERM, issue #39): ops that arrive from now on are refused `No session`, marked not run
   * (the gateway tries them again until the instance's next holder answers; `status` is still answered,
   * so the gateway does not take this worker for dead while it finishes). The ops in flight are
   * finished first: `settleInstance` waits for one instance's, so that it can be handed over at once.
   */
  beginDrain(): void {
    this.draining = true;
  }

  /**
   * The same for one instance (a drain hands each instance over on its own): the other instances keep
   * answering until their own turn, so a client sees an instance unavailable only from its hand-over on.
   */
  beginDrainOf(instanceId: string): void {
    this.handingOver.add(instanceId);
  }

  /** A move given up (a rebalance's hand-over failed with the session still here): its ops are served again. */
  resumeInstance(instanceId: string): void {
    this.handingOver.delete(instanceId);
  }

  /** Whether this instance is being handed over (its ops refused). */
  isHandingOver(instanceId: string): boolean {
    return this.handingOver.has(instanceId);
  }

  /** How many of this instance's ops are running now. */
  inFlightCount(instanceId: string): number {
    return this.inFlightOf.get(instanceId)?.size ?? 0;
  }

  /** Drain and wait for every instance's ops in flight, for at most `timeoutMs` (see beginDrain). */
  async drain(timeoutMs: number): Promise<void> {
    this.beginDrain();
    await this.settle(this.inFlight, timeoutMs);
  }

  /** Waits for this instance's ops in flight for at most `timeoutMs`; true when none is left. */
  async settleInstance(instanceId: string, timeoutMs: number): Promise<boolean> {
    const running = this.inFlightOf.get(instanceId);
    return running ? this.settle(running, timeoutMs, instanceId) : true;
  }

  /** Waits for the ops of `running` (those that start meanwhile too) for at most `timeoutMs`; true when none is left. */
  private async settle(running: Set<Promise<unknown>>, timeoutMs: number, instanceId?: string): Promise<boolean> {
    if (running.size === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), Math.max(0, timeoutMs))));
    while (running.size > 0) {
      const settled = await Promise.race([Promise.allSettled([...running]).then(() => true), expired]);
      if (!settled) break;
    }
    clearTimeout(timer);
    if (running.size) this.logger.warn({ inFlight: running.size, instanceId }, 'drain: ops still running after the wait; closing anyway');
    return running.size === 0;
  }

  /**
   * The end of a drain, once the sessions ended: the subscriptions left stop, each request they had
   * taken answered, and the ops still running (past the drain's wait) are awaited for at most
   * `timeoutMs`, so that every request this worker took is answered before its bus closes.
   */
  async close(timeoutMs: number): Promise<void> {
    this.accepting = false;
    this.draining = true;
    const subscriptions = [...this.global.splice(0), ...this.perInstance.values()];
    this.perInstance.clear();
    await Promise.allSettled([...subscriptions.map((subscription) => subscription.drain()), ...this.closing]);
    await this.settle(this.inFlight, timeoutMs);
  }

  /** Like `kill -9`: every subscription dropped at once, nothing answered any more. */
  stop(): void {
    this.accepting = false;
    for (const subscription of this.global.splice(0)) subscription.unsubscribe();
    for (const subscription of this.perInstance.values()) subscription.unsubscribe();
    this.perInstance.clear();
  }

  sessionStarted(session: Session): void {
    const instanceId = session.instanceId;
    // An instance moved away and back (a rebalance, then a drain elsewhere) is served again.
    this.handingOver.delete(instanceId);
    this.perInstance.get(instanceId)?.unsubscribe();
    const prefix = `instance.${instanceId}.`;
    const subscription = this.bus.subscribe(`${prefix}>`, (data, subject) => this.dispatch(instanceId, subject.slice(prefix.length), data));
    this.perInstance.set(instanceId, subscription);
    // After the subscription (sent before it on the same connection): whoever waits for this instance's new
    // holder tries again now, and reaches this one (TakeoverRequester; issue #39).
    this.bus.publish(Subjects.instanceArrived(instanceId), null);
  }

  sessionEnded(session: Session): void {
    // Only if no newer session for the instance took the subscription over.
    if (this.manager.get(session.instanceId)) return;
    const subscription = this.perInstance.get(session.instanceId);
    this.perInstance.delete(session.instanceId);
    // Drained, not dropped: a request NATS routed here before it saw the UNSUB is answered (No session:
    // the gateway tries again and reaches the next holder) instead of waiting out its timeout (issue #39).
    if (!subscription) return;
    const drained = subscription.drain().catch((error: unknown) => this.logger.warn({ err: error }, 'draining an instance subscription failed'));
    this.closing.add(drained);
    void drained.finally(() => this.closing.delete(drained));
  }

  private async place(data: unknown): Promise<unknown> {
    const request = asObject(data) as Partial<PlaceRequest>;
    const connect = asObject(request.connect);
    const instanceId = typeof request.instanceId === 'string' ? request.instanceId : connect.instanceId;
    if (typeof instanceId !== 'string' || !instanceId) throw new RpcError(ErrorCode.BadRequest, 'instanceId is required');
    if (!this.accepting) throw new RpcError(ErrorCode.CapacityExhausted, 'session worker is draining');
    try {
      return await this.manager.place(parseConnectRequest(connect, instanceId));
    } catch (error) {
      throw toRpcError(error);
    }
  }

  private async dispatch(instanceId: string, op: string, data: unknown): Promise<unknown> {
    // Taken, whatever follows (an answer of any kind reaches the asker): a holder check that asks about it is told so,
    // and once its answer is sent, that it was answered.
    const key = heldRequestKey(op, data);
    if (!key) return this.dispatchOp(instanceId, op, data);
    this.received.add(instanceId, key);
    try {
      return await this.dispatchOp(instanceId, op, data);
    } finally {
      // The bus sends the answer next, before it reads another message.
      this.received.answer(instanceId, key);
    }
  }

  private async dispatchOp(instanceId: string, op: string, data: unknown): Promise<unknown> {
    const session = this.manager.get(instanceId);
    if (!session) throw new RpcError(ErrorCode.NoSession, 'No session', { notRun: true });
    if (!isInstanceOp(op)) throw new RpcError(ErrorCode.BadRequest, `unknown operation ${op}`);
    if ((this.draining || this.handingOver.has(instanceId)) && op !== 'status')
      throw new RpcError(ErrorCode.NoSession, 'No session (the session worker is handing the instance over)', { notRun: true });
    const ran = this.run(session, op, asObject(data));
    const running = op === 'status' ? ran.then((reply) => this.withReceived(instanceId, data, reply)) : ran;
    let ofInstance = this.inFlightOf.get(instanceId);
    if (!ofInstance) this.inFlightOf.set(instanceId, (ofInstance = new Set()));
    this.inFlight.add(running);
    ofInstance.add(running);
    try {
      return await running;
    } catch (error) {
      throw toRpcError(error);
    } finally {
      this.inFlight.delete(running);
      ofInstance.delete(running);
      if (ofInstance.size === 0 && this.inFlightOf.get(instanceId) === ofInstance) this.inFlightOf.delete(instanceId);
    }
  }

  /** A holder check (`status`) that names a request it awaits is told whether this worker took it, and answered it. */
  private withReceived(instanceId: string, data: unknown, reply: unknown): unknown {
    const awaiting = asObject(data).awaiting;
    if (typeof awaiting !== 'string' || !reply || typeof reply !== 'object') return reply;
    const state = this.received.state(instanceId, awaiting);
    return { ...(reply as StatusReply), received: state !== 'none', answered: state === 'answered' };
  }

  /** Runs the op; on an instance arriving from another worker, once its first socket is open (see NO_ARRIVAL_WAIT). */
  private async run(session: Session, op: Parameters<typeof runOp>[1], data: Record<string, unknown>): Promise<unknown> {
    // Not arriving (or not open within the wait): the op answers as it would have (NotConnected, for one that needs the socket).
    if (!NO_ARRIVAL_WAIT.has(op)) await session.openSocketOnArrival().catch(() => undefined);
    return runOp(this.ops, op, session, data);
  }
}

/** Session-side failures in the bus's closed set of codes (anything else stays an internal error). */
function toRpcError(error: unknown): unknown {
  if (error instanceof FencedOutError) return new RpcError(ErrorCode.Fenced, 'instance is now held by another session worker');
  if (error instanceof SessionEndedError) return new RpcError(ErrorCode.NoSession, 'No session');
  // A failover under way (bench/cluster pg: 86 answers "Internal server error"). Not "try again": what the op
  // did at WhatsApp before its write is not known here (a send's own ledger answers for sends).
  if (databaseUnavailable(error))
    return new RpcError(ErrorCode.Unavailable, 'Database unavailable on the session worker: the operation may not have completed');
  return error;
}
