import { type InstanceResetReply, type WaMessageLimitsReply } from '@gw/contracts';
import type { OpHandlers, OpRequestParsers } from './op-handler';

/** The instance's runtime beyond its lifecycle: a controlled reset, and what WhatsApp says about its new chats. */
export type InstanceRuntimeOps = 'instance.reset' | 'instance.limits';

/** Between two resets of one instance (a reset loop would only keep it from ever settling). */
export const RESET_COOLDOWN_MS = 10_000;
/** A reset still reconnecting this long after it began counts as in progress. */
const RESET_IN_PROGRESS_MS = 60_000;
/** When each held instance was last reset (the holder answers every op of its instances, so one map per worker suffices). */
const lastResets = new Map<string, number>();

export const instanceRuntimeRequests = {
  'instance.reset': (raw, instanceId) => ({ instanceId, force: raw.force === true }),
  'instance.limits': (_raw, instanceId) => ({ instanceId }),
} satisfies OpRequestParsers<InstanceRuntimeOps>;

const describe = (error: unknown) => (error as Error)?.message ?? String(error);
const unixToIso = (seconds: unknown) => {
  const value = Number(seconds);
  return Number.isFinite(value) && value > 0 ? new Date(value * 1000).toISOString() : '';
};

export const instanceRuntimeOps: OpHandlers<InstanceRuntimeOps> = {
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
};
