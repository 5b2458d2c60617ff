import { ErrorCode, RpcError, type WhatsAppQuickReply } from '@gw/contracts';
import type { ChatMutation, LTHashState, WASocket } from '@whiskeysockets/baileys';
import { readAppStateCollection } from './app-state-collection';
import { HISTORY_SYNC_CONFLICT } from './chat-notes';

/**
 * Reading WhatsApp Business quick replies: app-state `quick_reply` mutations (index `['quick_reply', id]`,
 * `SyncActionValue.quickReplyAction {shortcut, message, keywords, count, deleted}`) in the `regular`
 * collection. rc14 decodes the collection but drops these mutations (no event), so they are read
 * beside it (`readAppStateCollection`), from where the last read through the socket stopped. Both the `quickreply.*` ops and the inbound handler (the
 * phone changed the collection: server_sync) read through here, sharing the read state.
 */
export const QUICK_REPLY_COLLECTION = 'regular';
const INDEX = 'quick_reply';

type Socket = Pick<WASocket, 'authState' | 'query'>;

/**
 * What was read of the collection through each socket: the version it reached and the last mutation of
 * each index. Per socket (a new socket reads from the start), so nothing stays behind once an instance
 * leaves the worker.
 */
const readState = new WeakMap<object, { state: LTHashState; latest: Map<string, ChatMutation> }>();

/** The quick reply a mutation leaves (null: deleted), or undefined when it is no quick reply. */
export function quickReplyOf(mutation: Pick<ChatMutation, 'index' | 'syncAction'>): WhatsAppQuickReply | null | undefined {
  const [type, waId] = mutation.index ?? [];
  if (type !== INDEX || typeof waId !== 'string') return undefined;
  const action = mutation.syncAction?.value?.quickReplyAction;
  if (!action || action.deleted) return null;
  return { waId, shortcut: action.shortcut ?? '', message: action.message ?? '', keywords: action.keywords ?? [] };
}

/**
 * Every quick reply the phone's app state holds, reading only what changed since this worker last read
 * it; read again from the start when that fails (a re-paired account, a key that changed).
 */
export async function readQuickReplies(socket: Socket): Promise<WhatsAppQuickReply[]> {
  if (!socket.authState.creds.myAppStateKeyId) throw new RpcError(ErrorCode.Conflict, HISTORY_SYNC_CONFLICT);
  if (!readState.has(socket)) return readFrom(socket);
  try {
    return await readFrom(socket);
  } catch {
    readState.delete(socket);
    return readFrom(socket);
  }
}

async function readFrom(socket: Socket): Promise<WhatsAppQuickReply[]> {
  const known = readState.get(socket);
  // By index: the last mutation of each wins.
  const latest = new Map(known?.latest ?? []);
  const state = await readAppStateCollection(socket, QUICK_REPLY_COLLECTION, known?.state, {
    snapshot: () => latest.clear(),
    take: (mutations) => {
      for (const mutation of mutations) latest.set(mutation.index.join('\u0000'), mutation);
    },
  });
  // Only the quick replies are kept between reads.
  for (const [key, mutation] of latest) if (quickReplyOf(mutation) === undefined) latest.delete(key);
  readState.set(socket, { state, latest });
  const replies: WhatsAppQuickReply[] = [];
  for (const mutation of latest.values()) {
    const reply = quickReplyOf(mutation);
    if (reply) replies.push(reply);
  }
  return replies;
}
