import { BROWSER_CHOICES, ErrorCode, RpcError, type BrowserChoice, type ConnectRequest, type PresenceRequest, type PrivacySettings } from '@gw/contracts';
import { asObject, type OpHandlers, type OpRequestParsers } from './op-handler';

/** The ops of the gateway's `instance/` area: the session's own lifecycle, presence and privacy. */
export type InstanceOps = 'connect' | 'logout' | 'release' | 'hibernate' | 'status' | 'presence' | 'privacy.get' | 'privacy.set' | 'status.privacy';

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
  'privacy.get': (session) => session.getPrivacy(),
  'privacy.set': (session, request) => session.setPrivacy(request.settings),
  'status.privacy': (session) => session.getStatusPrivacy(),
} satisfies OpHandlers<InstanceOps>;

export const instanceRequests = {
  connect: (raw, instanceId) => parseConnectRequest(raw, instanceId),
  logout: (_raw, instanceId) => ({ instanceId }),
  release: (_raw, instanceId) => ({ instanceId }),
  hibernate: (_raw, instanceId) => ({ instanceId }),
  status: (_raw, instanceId) => ({ instanceId }),
  presence: (raw, instanceId) => ({ instanceId, ...parsePresence(raw) }),
  'privacy.get': (_raw, instanceId) => ({ instanceId }),
  'privacy.set': (raw, instanceId) => ({ instanceId, settings: parsePrivacy(raw.settings) }),
  'status.privacy': (_raw, instanceId) => ({ instanceId }),
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

function parsePrivacy(settings: unknown): PrivacySettings {
  const object = asObject(settings);
  for (const value of Object.values(object)) {
    if (typeof value !== 'string') throw new RpcError(ErrorCode.BadRequest, 'privacy values must be strings');
  }
  return object as PrivacySettings;
}
