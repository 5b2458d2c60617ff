import { ErrorCode, RpcError, type WhatsAppQuickReply } from '@gw/contracts';
import type { ChatMutation, LTHashState, WAPatchName, WASocket } from '@whiskeysockets/baileys';
import { readAppStateCollection } from './app-state-collection';
import { HISTORY_SYNC_CONFLICT } from './chat-notes';

/**
 * Reading WhatsApp Business quick replies: app-state `quick_reply` mutations (index `['quick_reply', id]`,
 * `SyncActionValue.quickReplyAction {shortcut, message, keywords, count, deleted}`). Current WhatsApp Web writes
 * them to the `regular` collection (WAWebQuickRepliesSync); the 2023 bundle wrote them to `regular_low`
 * (521538.js:96,115), where replies made by such clients still live: both collections are read. rc14 decodes them
 * but drops these mutations (no event), so they are read beside it (`readAppStateCollection`), from where the last
 * read through the socket stopped. Both the `quickreply.*` ops and the inbound handler (the phone changed a
 * collection: server_sync) read through here, sharing the read state.
 */
export const QUICK_REPLY_COLLECTION = 'regular';
/** Every collection a quick reply may live in: where they are written now first. */
export const QUICK_REPLY_COLLECTIONS = [QUICK_REPLY_COLLECTION, 'regular_low'] as const;
const INDEX = 'quick_reply';

type Socket = Pick<WASocket, 'authState' | 'query'>;

/**
 * What was read of the collections through each socket: the version each reached and the last quick-reply
 * mutation of each index in each. Per socket (a new socket reads from the start), so nothing stays behind once an
 * instance leaves the worker.
 */
type CollectionRead = { state: LTHashState; latest: Map<string, ChatMutation> };
const readState = new WeakMap<object, Map<string, CollectionRead>>();

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
  const reads = new Map<string, CollectionRead>();
  for (const name of QUICK_REPLY_COLLECTIONS) reads.set(name, await readCollection(socket, name, known?.get(name)));
  readState.set(socket, reads);
  return mergeQuickReplies([...reads.values()].map((read) => [...read.latest.values()]));
}

/** One collection from where its last read stopped; only its quick-reply mutations are kept, the last of each index. */
async function readCollection(socket: Socket, name: WAPatchName, known: CollectionRead | undefined): Promise<CollectionRead> {
  const latest = new Map(known?.latest ?? []);
  const state = await readAppStateCollection(socket, name, known?.state, {
    snapshot: () => latest.clear(),
    take: (mutations) => {
      for (const mutation of mutations) if (quickReplyOf(mutation) !== undefined) latest.set(mutation.index.join('\u0000'), mutation);
    },
  });
  return { state, latest };
}

/**
 * The quick replies the collections leave, given the last mutation of each index in each (the collections in
 * the order of QUICK_REPLY_COLLECTIONS). Where both hold a reply, the later mutation (its action's timestamp)
 * wins, the current collection on a tie: a reply made in `regular_low` and deleted in `regular` is gone.
 */
export function mergeQuickReplies(collections: Array<Array<Pick<ChatMutation, 'index' | 'syncAction'>>>): WhatsAppQuickReply[] {
  const chosen = new Map<string, Pick<ChatMutation, 'index' | 'syncAction'>>();
  const at = (mutation: Pick<ChatMutation, 'syncAction'>) => Number(mutation.syncAction?.value?.timestamp ?? 0) || 0;
  for (const mutations of collections) {
    for (const mutation of mutations) {
      const reply = quickReplyOf(mutation);
      if (reply === undefined) continue;
      const key = mutation.index.join('\u0000');
      const before = chosen.get(key);
      if (!before || at(mutation) > at(before)) chosen.set(key, mutation);
    }
  }
  const replies: WhatsAppQuickReply[] = [];
  for (const mutation of chosen.values()) {
    const reply = quickReplyOf(mutation);
    if (reply) replies.push(reply);
  }
  return replies;
}
