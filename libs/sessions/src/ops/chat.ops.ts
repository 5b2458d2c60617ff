import { ErrorCode, RpcError, type ChatPresenceRequest, type InstanceRpc } from '@gw/contracts';
import type { ChatModification, ChatUpdate } from '@whiskeysockets/baileys';
import type { InboundMessageObserver } from '../messaging/inbound-message.observer';
import { MAX_DELAY_MS } from './delays';
import type { OpHandlers, OpRequestParsers } from './op-handler';
import { chatTimers } from '../outbound/chat-timers';
import { HISTORY_SYNC_CONFLICT, noteOfChat, NOTES_COLLECTION, readNotes, writeNote } from '../messaging/chat-notes';
import { retryOnAppStateConflict } from '../socket/app-state-conflicts';
import { LABEL_ID, patchAppState, socketHandlerOf } from './socket-handler';

/** The `chat.*` ops: a chat's presence (typing, recording), labels, settings, disappearing messages and notes. */
export type ChatOps = 'chat.presence' | 'chat.labels' | 'chat.modify' | 'chat.ephemeral' | 'chat.notes.read' | 'chat.notes.edit' | 'chat.picture';

/** How long WhatsApp is given to answer a picture's URL. */
const PICTURE_URL_TIMEOUT_MS = 5_000;

/** WhatsApp's disappearing-message timers (seconds): off, 1 day, 7 days, 90 days. */
const EPHEMERAL_SECONDS: ReadonlySet<number> = new Set([0, 86_400, 604_800, 7_776_000]);
const USER_CHAT_JID = /^\d{5,20}@s\.whatsapp\.net$|^\d{1,20}@lid$/;
/** WhatsApp Business caps a chat's note well below this; the bus refuses anything larger. */
const MAX_NOTE_LENGTH = 10_000;

/** The chat's JIDs (its number and LID): one to three user JIDs. */
function chatJidsOf(value: unknown): string[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > 3 || !value.every((jid) => typeof jid === 'string' && USER_CHAT_JID.test(jid)))
    throw new RpcError(ErrorCode.BadRequest, 'chatJids must name the chat by its user JIDs');
  return value as string[];
}

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
    case 'unread':
      return { id: chatJid, unreadCount: -1 };
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

/** A notes failure: the app-state key missing is the history sync still running (409); WhatsApp's refusal stays Refused. */
function notesFailure(what: string) {
  return (error: unknown): never => {
    if (error instanceof RpcError) throw error;
    if (/App state key not present/i.test((error as Error)?.message ?? '')) throw new RpcError(ErrorCode.Conflict, HISTORY_SYNC_CONFLICT);
    throw new RpcError(ErrorCode.Internal, `failed ${what} the chat notes (${NOTES_COLLECTION} app state): ${(error as Error)?.message ?? error}`);
  };
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
  'chat.ephemeral': (raw, instanceId) => {
    const chatJid = typeof raw.chatJid === 'string' ? raw.chatJid : '';
    if (!USER_CHAT_JID.test(chatJid)) throw new RpcError(ErrorCode.BadRequest, 'chatJid must be a user JID');
    const seconds = Number(raw.seconds);
    if (!EPHEMERAL_SECONDS.has(seconds)) throw new RpcError(ErrorCode.BadRequest, 'seconds must be 0, 86400, 604800 or 7776000');
    return { instanceId, chatJid, seconds };
  },
  'chat.picture': (raw, instanceId) => {
    const chatJid = typeof raw.chatJid === 'string' ? raw.chatJid : '';
    if (!CHAT_JID.test(chatJid)) throw new RpcError(ErrorCode.BadRequest, 'chatJid must be a chat JID');
    return { instanceId, chatJid, type: raw.type === 'preview' ? 'preview' : 'image' };
  },
  'chat.notes.read': (raw, instanceId) => ({ instanceId, chatJids: chatJidsOf(raw.chatJids), force: raw.force === true }),
  'chat.notes.edit': (raw, instanceId) => {
    if (typeof raw.text !== 'string' || raw.text.length > MAX_NOTE_LENGTH) throw new RpcError(ErrorCode.BadRequest, 'text must be a string');
    return { instanceId, chatJids: chatJidsOf(raw.chatJids), text: raw.text };
  },
  'chat.presence': (raw, instanceId): ChatPresenceRequest => {
    const presence = raw.presence;
    if (presence !== 'composing' && presence !== 'recording' && presence !== 'paused')
      throw new RpcError(ErrorCode.BadRequest, 'presence must be composing, recording or paused');
    if (typeof raw.chatJid !== 'string') throw new RpcError(ErrorCode.BadRequest, 'chatJid is required');
    return { instanceId, chatJid: raw.chatJid, presence, delayMs: Number(raw.delayMs) || 0 };
  },
} satisfies OpRequestParsers<ChatOps>;

export function chatOps(inbound: InboundMessageObserver): OpHandlers<ChatOps> {
  return {
    'chat.presence': async (session, request) => {
      const socket = session.openSocket();
      await socket.sendPresenceUpdate(request.presence, request.chatJid);
      if (request.presence !== 'paused' && request.delayMs > 0) {
        // The presence lasts the delay, then stops, as the phone would.
        setTimeout(() => void socket.sendPresenceUpdate('paused', request.chatJid).catch(() => undefined), Math.min(request.delayMs, MAX_DELAY_MS)).unref();
      }
      return { ok: true };
    },
    'chat.labels': async (session, request) => {
      const socket = session.openSocket();
      // One upload each; a try again after a 409 starts with the first that has not landed.
      const uploads = [
        ...request.add.map((labelId) => () => socket.addChatLabel(request.chatJid, labelId)),
        ...request.remove.map((labelId) => () => socket.removeChatLabel(request.chatJid, labelId)),
      ];
      return patchAppState(inbound, session, async () => {
        while (uploads.length > 0) {
          await uploads[0]();
          uploads.shift();
        }
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
    'chat.ephemeral': async (session, request) => {
      const socket = session.openSocket();
      const handler = socketHandlerOf(inbound, session);
      // The EPHEMERAL_SETTING protocol message WhatsApp sends; Baileys reports it back as a chats.update, stored in order.
      await socket.sendMessage(request.chatJid, { disappearingMessagesInChat: request.seconds });
      await handler.idle();
      // What the next sends into the chat carry, whether or not the chat is stored yet.
      chatTimers.set(request.instanceId, request.chatJid, request.seconds);
      return { ok: true };
    },
    'chat.picture': async (session, request) => {
      const socket = session.openSocket();
      try {
        return { url: (await socket.profilePictureUrl(request.chatJid, request.type, PICTURE_URL_TIMEOUT_MS)) ?? '' };
      } catch (error) {
        // WhatsApp's 404 (no picture) and 401 (hidden by the owner's privacy) both mean: none to show.
        const code =
          (error as { data?: unknown; output?: { statusCode?: number } })?.data ?? (error as { output?: { statusCode?: number } })?.output?.statusCode;
        if (code === 404 || code === 401 || code === 403) return { url: '' };
        throw chatRefusal(error);
      }
    },
    'chat.notes.read': async (session, request) => {
      socketHandlerOf(inbound, session);
      const notes = await readNotes(session.openSocket(), request.force).catch(notesFailure('reading'));
      return { note: noteOfChat(notes, request.chatJids) };
    },
    'chat.notes.edit': async (session, request) => {
      socketHandlerOf(inbound, session);
      try {
        // After a 409 the notes are read again (with the other device's change) and the note written on them.
        return { note: await retryOnAppStateConflict(() => writeNote(session.openSocket(), request.chatJids, request.text)) };
      } catch (error) {
        return notesFailure('writing')(chatRefusal(error));
      }
    },
  };
}
