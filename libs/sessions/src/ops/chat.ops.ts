import { ErrorCode, RpcError } from '@gw/contracts';
import type { InboundMessageObserver } from '../messaging/inbound-message.observer';
import type { OpHandlers, OpRequestParsers } from './op-handler';
import { LABEL_ID, patchAppState, socketHandlerOf } from './socket-handler';

/** The ops of the gateway's `chat/` area: a chat's labels and the blocklist. */
export type ChatOps = 'chat.labels' | 'blocklist.get' | 'blocklist.set';

const USER_JID = /^\d{5,20}@s\.whatsapp\.net$|^\d{1,20}@lid$/;

const labelIds = (value: unknown): string[] | null =>
  Array.isArray(value) && value.every((id): id is string => typeof id === 'string' && LABEL_ID.test(id)) ? value : null;

export const chatRequests = {
  'chat.labels': (raw, instanceId) => {
    const chatJid = typeof raw.chatJid === 'string' ? raw.chatJid : '';
    const add = labelIds(raw.add);
    const remove = labelIds(raw.remove);
    if (!chatJid.includes('@') || !add || !remove) throw new RpcError(ErrorCode.BadRequest, 'malformed chat labels request');
    return { instanceId, chatJid, add, remove };
  },
  'blocklist.get': (_raw, instanceId) => ({ instanceId }),
  'blocklist.set': (raw, instanceId) => {
    const jid = typeof raw.jid === 'string' ? raw.jid : '';
    if (!USER_JID.test(jid)) throw new RpcError(ErrorCode.BadRequest, 'jid must be a user JID');
    if (typeof raw.block !== 'boolean') throw new RpcError(ErrorCode.BadRequest, 'block must be a boolean');
    return { instanceId, jid, block: raw.block };
  },
} satisfies OpRequestParsers<ChatOps>;

export function chatOps(inbound: InboundMessageObserver): OpHandlers<ChatOps> {
  return {
    'chat.labels': async (session, request) => {
      const socket = session.openSocket();
      return patchAppState(inbound, session, async () => {
        for (const labelId of request.add) await socket.addChatLabel(request.chatJid, labelId);
        for (const labelId of request.remove) await socket.removeChatLabel(request.chatJid, labelId);
      });
    },
    'blocklist.get': async (session) => ({ blockList: await socketHandlerOf(inbound, session).syncBlocklist() }),
    'blocklist.set': async (session, request) => ({ blockList: await socketHandlerOf(inbound, session).setBlocked(request.jid, request.block) }),
  };
}
