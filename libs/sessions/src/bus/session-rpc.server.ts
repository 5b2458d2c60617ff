import type { Bus, BusSubscription } from '@gw/bus';
import {
  BROWSER_CHOICES,
  ErrorCode,
  RpcError,
  Subjects,
  type BrowserChoice,
  type ConnectRequest,
  type InstanceRpc,
  type PlaceRequest,
  type PresenceRequest,
  type PrivacySettings,
} from '@gw/contracts';
import { FencedOutError } from '@gw/persistence';
import type { Logger } from '@gw/platform';
import { SessionEndedError, type Session } from '../session/session';
import type { SessionLifecycleListener, SessionManager } from '../session/session-manager';

/** Queue group of `Subjects.place`: each placement goes to exactly one worker. */
export const SESSION_WORKERS_QUEUE = 'session-workers';

/** A handler for one `instance.<id>.<op>` subject, given the held session and the raw request. */
export type InstanceOpHandler = (session: Session, request: Record<string, unknown>) => Promise<unknown>;

/** Ops every worker answers itself; the outbound ones (`send`, `chat.presence`) come from outbound/. */
type BuiltInOps = {
  [
    Op in Exclude<
      keyof InstanceRpc,
      | 'send'
      | 'chat.presence'
      | 'read'
      | 'media.download'
      | 'history.request'
      | 'labels.refresh'
      | 'blocklist.get'
      | 'blocklist.set'
      | 'label.edit'
      | 'chat.labels'
    >
  ]: (session: Session, request: InstanceRpc[Op]['request']) => Promise<InstanceRpc[Op]['reply']>;
};

const BUILT_IN_OPS: BuiltInOps = {
  connect: (session, request) => session.connect(parseConnectRequest(request, session.instanceId)),
  logout: (session) => session.logout(),
  release: async (session) => {
    await session.release();
    return { released: true };
  },
  status: async (session) => session.status(),
  presence: async (session, request) => {
    await session.setPresence(parsePresence(request));
    return { ok: true };
  },
  'privacy.get': (session) => session.getPrivacy(),
  'privacy.set': (session, request) => session.setPrivacy(parsePrivacy(request.settings)),
  'status.privacy': (session) => session.getStatusPrivacy(),
};

/**
 * The worker's side of the bus: placements (queue group), the ops of every held instance
 * (`instance.<id>.>` while held; "no responders" tells the gateway nobody holds it), and the
 * restart-all broadcast. Errors travel as RpcError codes.
 */
export class SessionRpcServer implements SessionLifecycleListener {
  private readonly global: BusSubscription[] = [];
  private readonly perInstance = new Map<string, BusSubscription>();
  private readonly ops: Record<string, InstanceOpHandler>;

  constructor(
    private readonly bus: Bus,
    private readonly manager: SessionManager,
    private readonly logger: Logger,
    extraOps: Record<string, InstanceOpHandler> = {},
  ) {
    this.ops = { ...extraOps, ...(BUILT_IN_OPS as unknown as Record<string, InstanceOpHandler>) };
  }

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
    const handler = this.ops[op];
    if (!handler) throw new RpcError(ErrorCode.BadRequest, `unknown operation ${op}`);
    try {
      return await handler(session, asObject(data));
    } catch (error) {
      throw toRpcError(error);
    }
  }
}

/** Session-side failures in the bus's closed set of codes (anything else stays an internal error). */
function toRpcError(error: unknown): unknown {
  if (error instanceof FencedOutError) return new RpcError(ErrorCode.Fenced, 'instance is now held by another session worker');
  if (error instanceof SessionEndedError) return new RpcError(ErrorCode.NoSession, 'No session');
  return error;
}

function asObject(value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new RpcError(ErrorCode.BadRequest, 'request must be an object');
  return value as Record<string, unknown>;
}

/** Defensive parse of what the gateway sends; the gateway validated the HTTP body already. */
export function parseConnectRequest(raw: unknown, instanceId: string): ConnectRequest {
  const request = asObject(raw);
  const phone = typeof request.phone === 'string' && request.phone ? request.phone : undefined;
  if (phone !== undefined && !/^\d{10,15}$/.test(phone)) throw new RpcError(ErrorCode.BadRequest, 'phone must have 10 to 15 digits');
  const browser = (BROWSER_CHOICES as readonly string[]).includes(String(request.browser)) ? (request.browser as BrowserChoice) : 'auto';
  const history = typeof request.history === 'object' && request.history !== null ? (request.history as Record<string, unknown>) : {};
  const days = typeof history.days === 'number' && history.days >= 1 && history.days <= 365 ? Math.floor(history.days) : 90;
  return {
    instanceId,
    phone,
    browser,
    systemName: typeof request.systemName === 'string' ? request.systemName : undefined,
    history: { days, fullSync: history.fullSync === true },
    requestId: typeof request.requestId === 'string' ? request.requestId : '',
  };
}

function parsePresence(raw: unknown): PresenceRequest {
  const request = asObject(raw);
  if (request.presence !== 'available' && request.presence !== 'unavailable') {
    throw new RpcError(ErrorCode.BadRequest, 'presence must be available or unavailable');
  }
  return { presence: request.presence };
}

function parsePrivacy(settings: unknown): PrivacySettings {
  const object = asObject(settings);
  for (const value of Object.values(object)) {
    if (typeof value !== 'string') throw new RpcError(ErrorCode.BadRequest, 'privacy values must be strings');
  }
  return object as PrivacySettings;
}
