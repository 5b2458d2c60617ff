import { ErrorCode, RpcError } from '@gw/contracts';
import type { InboundMessageObserver } from '../messaging/inbound-message.observer';
import type { OpHandlers, OpRequestParsers } from './op-handler';
import { socketHandlerOf } from './socket-handler';

/** The `blocklist.*` ops: the account's blocked contacts. */
export type BlocklistOps = 'blocklist.get' | 'blocklist.set';

const USER_JID = /^\d{5,20}@s\.whatsapp\.net$|^\d{1,20}@lid$/;

export const blocklistRequests = {
  'blocklist.get': (_raw, instanceId) => ({ instanceId }),
  'blocklist.set': (raw, instanceId) => {
    const jid = typeof raw.jid === 'string' ? raw.jid : '';
    if (!USER_JID.test(jid)) throw new RpcError(ErrorCode.BadRequest, 'jid must be a user JID');
    if (typeof raw.block !== 'boolean') throw new RpcError(ErrorCode.BadRequest, 'block must be a boolean');
    return { instanceId, jid, block: raw.block };
  },
} satisfies OpRequestParsers<BlocklistOps>;

export function blocklistOps(inbound: InboundMessageObserver): OpHandlers<BlocklistOps> {
  return {
    'blocklist.get': async (session) => ({ blockList: await socketHandlerOf(inbound, session).syncBlocklist() }),
    'blocklist.set': async (session, request) => ({ blockList: await socketHandlerOf(inbound, session).setBlocked(request.jid, request.block) }),
  };
}
