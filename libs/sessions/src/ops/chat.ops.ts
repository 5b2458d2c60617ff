import { ErrorCode, RpcError, type InstanceRpc } from '@gw/contracts';
import type { ChatModification, ChatUpdate } from '@whiskeysockets/baileys';
import type { InboundMessageObserver } from '../messaging/inbound-message.observer';
import type { OpHandlers, OpRequestParsers } from './op-handler';
import { LABEL_ID, patchAppState, socketHandlerOf } from './socket-handler';

/** The ops of the gateway's `chat/` area: a chat's labels and the blocklist. */
export type ChatOps = 'chat.labels' | 'blocklist.get' | 'blocklist.set' | 'chat.modify';

const USER_JID = /^\d{5,20}@s\.whatsapp\.net$|^\d{1,20}@lid$/;

type ChatModifyRequest = InstanceRpc['chat.modify']['request'];
type ChatLastMessage = ChatModifyRequest['lastMessages'][number];

const CHAT_JID = /^\d{5,20}@s\.whatsapp\.net$|^\d{1,20}@lid$|^\d{5,}(-\d+)?@g\.us$/;
const MODIFY_ACTIONS: ReadonlySet<string> = new Set(['pin', 'unpin', 'archive', 'unarchive', 'mute', 'unmute', 'read', 'unread', 'clear', 'delete']);
const MAX_LAST_MESSAGES = 20;

function lastMessagesOf(value: unknown): ChatLastMessage[] | null {
  if (!Array.isArray(value) || value.length > MAX_LAST_MESSAGES) return null;
  const messages: ChatLastMessage[] = [];
  for (const item of value as Array<Partial<ChatLastMessage> | null>) {
    const key = item?.key;
    const timestamp = Number(item?.messageTimestamp);
    if (!key || typeof key.remoteJid !== 'string' || typeof key.id !== 'string' || !key.id || !Number.isSafeInteger(timestamp) || timestamp <= 0) return null;
    if (key.participant !== undefined && typeof key.participant !== 'string') return null;
    messages.push({
      key: { remoteJid: key.remoteJid, id: key.id, fromMe: key.fromMe === true, ...(key.participant ? { participant: key.participant } : {}) },
      messageTimestamp: timestamp,
    });
  }
  return messages;
}

/** The request as Baileys' chatModify takes it. */
function chatModification({ action, muteEndTime, lastMessages }: ChatModifyRequest): ChatModification {
  switch (action) {
    case 'pin':
    case 'unpin':
      return { pin: action === 'pin' };
    case 'archive':
    case 'unarchive':
      return { archive: action === 'archive', lastMessages };
    case 'mute':
      return { mute: muteEndTime ?? -1 };
    case 'unmute':
      return { mute: null };
    case 'read':
    case 'unread':
      return { markRead: action === 'read', lastMessages };
    case 'clear':
      return { clear: true, lastMessages };
    case 'delete':
      return { delete: true, lastMessages };
  }
}

/** What the stored chat becomes once WhatsApp took the change (as Baileys reports it); clear and delete leave the row. */
function chatUpdate({ chatJid, action, muteEndTime }: ChatModifyRequest): ChatUpdate | null {
  switch (action) {
    case 'pin':
    case 'unpin':
      return { id: chatJid, pinned: action === 'pin' ? Date.now() : null };
    case 'archive':
    case 'unarchive':
      return { id: chatJid, archived: action === 'archive' };
    case 'mute':
      return { id: chatJid, muteEndTime: muteEndTime ?? -1 };
    case 'unmute':
      return { id: chatJid, muteEndTime: null };
    case 'read':
      return { id: chatJid, unreadCount: 0 };
    default:
      return null;
  }
}

/** WhatsApp's answer to a refused patch (an IQ error, Baileys' Boom) as the bus's Refused; ours stay as they are. */
function chatRefusal(error: unknown): unknown {
  if (!error || typeof error !== 'object' || error instanceof RpcError || !(error as { isBoom?: boolean }).isBoom) return error;
  const { data, message } = error as { data?: unknown; message?: string };
  return new RpcError(ErrorCode.Refused, `WhatsApp refused the chat change${typeof data === 'number' ? ` (${data})` : ''}: ${message || 'error'}`);
}

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
  'chat.modify': (raw, instanceId) => {
    const chatJid = typeof raw.chatJid === 'string' ? raw.chatJid : '';
    if (!CHAT_JID.test(chatJid)) throw new RpcError(ErrorCode.BadRequest, 'chatJid must be a chat JID');
    const action = typeof raw.action === 'string' && MODIFY_ACTIONS.has(raw.action) ? (raw.action as ChatModifyRequest['action']) : null;
    if (!action) throw new RpcError(ErrorCode.BadRequest, 'unknown chat action');
    const muteEndTime = raw.muteEndTime === undefined ? undefined : Number(raw.muteEndTime);
    if (muteEndTime !== undefined && !(muteEndTime === -1 || (Number.isSafeInteger(muteEndTime) && muteEndTime > 0)))
      throw new RpcError(ErrorCode.BadRequest, 'muteEndTime must be a time in ms or -1');
    const lastMessages = lastMessagesOf(raw.lastMessages ?? []);
    if (!lastMessages) throw new RpcError(ErrorCode.BadRequest, 'malformed lastMessages');
    return { instanceId, chatJid, action, muteEndTime, lastMessages };
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
    'chat.modify': async (session, request) => {
      const socket = session.openSocket();
      try {
        return await patchAppState(inbound, session, async (handler) => {
          await socket.chatModify(chatModification(request), request.chatJid);
          const update = chatUpdate(request);
          if (update) await handler.chatChanged(update);
        });
      } catch (error) {
        throw chatRefusal(error);
      }
    },
    'blocklist.get': async (session) => ({ blockList: await socketHandlerOf(inbound, session).syncBlocklist() }),
    'blocklist.set': async (session, request) => ({ blockList: await socketHandlerOf(inbound, session).setBlocked(request.jid, request.block) }),
  };
}
