import {
  BROWSER_CHOICES,
  ErrorCode,
  RpcError,
  type BrowserChoice,
  type ConnectRequest,
  type InstanceResetReply,
  type PresenceRequest,
  type WaMessageLimitsReply,
} from '@gw/contracts';
import { asObject, type OpHandlers, type OpRequestParsers } from './op-handler';

/**
 * The ops of the gateway's `instance/` area: the session's own lifecycle and presence (ops named before
 * families were), and the `instance.*` ops: a controlled reset, and what WhatsApp says about its new chats.
 */
export type InstanceOps = 'connect' | 'logout' | 'release' | 'hibernate' | 'status' | 'presence' | 'instance.reset' | 'instance.limits';

/** Between two resets of one instance (a reset loop would only keep it from ever settling). */
export const RESET_COOLDOWN_MS = 10_000;
/** A reset still reconnecting this long after it began counts as in progress. */
const RESET_IN_PROGRESS_MS = 60_000;
/** When each held instance was last reset (the holder answers every op of its instances, so one map per worker suffices). */
const lastResets = new Map<string, number>();

const describe = (error: unknown) => (error as Error)?.message ?? String(error);
const unixToIso = (seconds: unknown) => {
  const value = Number(seconds);
  return Number.isFinite(value) && value > 0 ? new Date(value * 1000).toISOString() : '';
};

export const instanceOps = {
  connect: (session, request) => session.connect(request),
  logout: (session) => session.logout(),
  release: async (session) => {
    await session.release();
    return { released: true };
  },
  hibernate: async (session) => {
    await session.hibernate();
    return { hibernated: true };
  },
  status: async (session) => session.status(),
  presence: async (session, request) => {
    await session.setPresence({ presence: request.presence });
    return { ok: true };
  },
  /**
   * Closes the socket without logging out and reconnects from the stored credentials at once (backoff
   * forgotten): what a stuck session needs. A pairing in progress cannot be reset (Conflict, at the
   * gateway); a reset still reconnecting, or one made less than RESET_COOLDOWN_MS ago, is reported, not repeated —
   * unless `force` (a changed proxy must be taken at once, whatever the socket is doing).
   */
  'instance.reset': async (session, request): Promise<InstanceResetReply> => {
    const phase = session.currentPhase;
    if (phase === 'pairing' || phase === 'linking' || phase === 'idle' || phase === 'ended') return { outcome: 'not_resettable', phase, remainingMs: 0 };
    const now = Date.now();
    const last = lastResets.get(session.instanceId) ?? 0;
    if (!request.force && last && phase === 'connecting' && now - last < RESET_IN_PROGRESS_MS) return { outcome: 'in_progress', phase, remainingMs: 0 };
    if (!request.force && last && now - last < RESET_COOLDOWN_MS) return { outcome: 'cooldown', phase, remainingMs: RESET_COOLDOWN_MS - (now - last) };
    lastResets.set(session.instanceId, now);
    await session.restart(request.force ? 'reconnect requested: the proxy changed' : 'instance reset requested');
    return { outcome: 'started', phase: session.currentPhase, remainingMs: 0 };
  },
  /** WhatsApp's two answers about new chats (rc14's fetchNewChatMessageCap and fetchAccountReachoutTimelock); each may fail alone. */
  'instance.limits': async (session) => {
    const socket = session.openSocket();
    const [capping, timelock] = await Promise.allSettled([socket.fetchNewChatMessageCap(), socket.fetchAccountReachoutTimelock()]);
    const reply: WaMessageLimitsReply = { capping: null, cappingError: '', timelock: null, timelockError: '' };
    if (capping.status === 'fulfilled') {
      const info = capping.value;
      reply.capping = {
        status: String(info.capping_status ?? ''),
        usedQuota: typeof info.used_quota === 'number' ? info.used_quota : null,
        totalQuota: typeof info.total_quota === 'number' ? info.total_quota : null,
        cycleStart: unixToIso(info.cycle_start_timestamp),
        cycleEnd: unixToIso(info.cycle_end_timestamp),
        serverSentAt: unixToIso(info.server_sent_timestamp),
        oteStatus: String(info.ote_status ?? ''),
        mvStatus: String(info.mv_status ?? ''),
      };
    } else reply.cappingError = describe(capping.reason);
    if (timelock.status === 'fulfilled') {
      const state = timelock.value;
      reply.timelock = {
        active: state.isActive === true,
        until: state.timeEnforcementEnds instanceof Date ? state.timeEnforcementEnds.toISOString() : '',
        enforcementType: String(state.enforcementType ?? ''),
      };
    } else reply.timelockError = describe(timelock.reason);
    return reply;
  },
} satisfies OpHandlers<InstanceOps>;

export const instanceRequests = {
  connect: (raw, instanceId) => parseConnectRequest(raw, instanceId),
  logout: (_raw, instanceId) => ({ instanceId }),
  release: (_raw, instanceId) => ({ instanceId }),
  hibernate: (_raw, instanceId) => ({ instanceId }),
  status: (_raw, instanceId) => ({ instanceId }),
  presence: (raw, instanceId) => ({ instanceId, ...parsePresence(raw) }),
  'instance.reset': (raw, instanceId) => ({ instanceId, force: raw.force === true }),
  'instance.limits': (_raw, instanceId) => ({ instanceId }),
} satisfies OpRequestParsers<InstanceOps>;

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
