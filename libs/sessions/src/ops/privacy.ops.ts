import { ErrorCode, RpcError, type PrivacySettings } from '@gw/contracts';
import { asObject, type OpHandlers, type OpRequestParsers } from './op-handler';

/** The `privacy.*` ops: the account's privacy settings; and the status audience's (`status.privacy`, a name kept for the bus). */
export type PrivacyOps = 'privacy.get' | 'privacy.set' | 'status.privacy';

export const privacyOps = {
  'privacy.get': (session) => session.getPrivacy(),
  'privacy.set': (session, request) => session.setPrivacy(request.settings),
  'status.privacy': (session) => session.getStatusPrivacy(),
} satisfies OpHandlers<PrivacyOps>;

export const privacyRequests = {
  'privacy.get': (_raw, instanceId) => ({ instanceId }),
  'privacy.set': (raw, instanceId) => ({ instanceId, settings: parsePrivacy(raw.settings) }),
  'status.privacy': (_raw, instanceId) => ({ instanceId }),
} satisfies OpRequestParsers<PrivacyOps>;

function parsePrivacy(settings: unknown): PrivacySettings {
  const object = asObject(settings);
  for (const value of Object.values(object)) {
    if (typeof value !== 'string') throw new RpcError(ErrorCode.BadRequest, 'privacy values must be strings');
  }
  return object as PrivacySettings;
}
