import { ErrorCode, RpcError, type WhatsAppQuickReply } from '@gw/contracts';
import { decodePatches, decodeSyncdSnapshot, extractSyncdPatches, newLTHashState, S_WHATSAPP_NET } from '@whiskeysockets/baileys';
import type { ChatMutation, LTHashState, WASocket } from '@whiskeysockets/baileys';
import type { InboundMessageObserver } from '../messaging/inbound-message.observer';
import type { OpHandlers, OpRequestParsers } from './op-handler';
import { patchAppState } from './socket-handler';

/**
 * WhatsApp Business quick replies: app-state `quick_reply` mutations (index `['quick_reply', id]`,
 * `SyncActionValue.quickReplyAction {shortcut, message, keywords, count, deleted}`) in the `regular`
 * collection, written with rc14's addOrEditQuickReply / removeQuickReply. rc14 decodes the collection
 * but drops these mutations (no event), so they are read here with its own codec, apart from its sync
 * state (reading never moves the versions Baileys keeps), from where the last read of this worker
 * stopped: each read after the first fetches only the patches since.
 */
export type QuickReplyOps = 'quickreply.read' | 'quickreply.save' | 'quickreply.remove';

const COLLECTION = 'regular';
const INDEX = 'quick_reply';
const MAX_ROUNDS = 50;
/** WhatsApp's limits in the Business app: a shortcut of up to 25 characters, a message of up to 1024. */
export const MAX_SHORTCUT = 25;
export const MAX_MESSAGE = 1024;
const WA_ID = /^[\w.-]{1,64}$/;
const HISTORY_SYNC_CONFLICT = 'history sync still in progress, try again in a moment';

type Socket = Pick<WASocket, 'authState' | 'query'>;

/** What this worker read of each held instance's collection: the version it reached and the last mutation of each index. */
const readState = new Map<string, { state: LTHashState; latest: Map<string, ChatMutation> }>();

export const quickReplyRequests = {
  'quickreply.read': (_raw, instanceId) => ({ instanceId }),
  'quickreply.save': (raw, instanceId) => {
    const shortcut = typeof raw.shortcut === 'string' ? raw.shortcut.trim() : '';
    const message = typeof raw.message === 'string' ? raw.message : '';
    if (!shortcut || shortcut.length > MAX_SHORTCUT) throw new RpcError(ErrorCode.BadRequest, `shortCut must be 1 to ${MAX_SHORTCUT} characters for WhatsApp`);
    if (!message.trim() || message.length > MAX_MESSAGE) throw new RpcError(ErrorCode.BadRequest, `text must be 1 to ${MAX_MESSAGE} characters for WhatsApp`);
    if (raw.waId !== undefined && (typeof raw.waId !== 'string' || !WA_ID.test(raw.waId)))
      throw new RpcError(ErrorCode.BadRequest, 'invalid WhatsApp quick reply id');
    return { instanceId, shortcut, message, ...(raw.waId ? { waId: raw.waId as string } : {}) };
  },
  'quickreply.remove': (raw, instanceId) => {
    if (typeof raw.waId !== 'string' || !WA_ID.test(raw.waId)) throw new RpcError(ErrorCode.BadRequest, 'invalid WhatsApp quick reply id');
    return { instanceId, waId: raw.waId };
  },
} satisfies OpRequestParsers<QuickReplyOps>;

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
export async function readQuickReplies(instanceId: string, socket: Socket): Promise<WhatsAppQuickReply[]> {
  if (!socket.authState.creds.myAppStateKeyId) throw new RpcError(ErrorCode.Conflict, HISTORY_SYNC_CONFLICT);
  if (!readState.has(instanceId)) return readFrom(instanceId, socket);
  try {
    return await readFrom(instanceId, socket);
  } catch {
    readState.delete(instanceId);
    return readFrom(instanceId, socket);
  }
}

async function readFrom(instanceId: string, socket: Socket): Promise<WhatsAppQuickReply[]> {
  const getKey = async (keyId: string) => (await socket.authState.keys.get('app-state-sync-key', [keyId]))[keyId];
  const known = readState.get(instanceId) ?? { state: newLTHashState(), latest: new Map<string, ChatMutation>() };
  let state = known.state;
  const latest = new Map(known.latest);
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const result = await socket.query({
      tag: 'iq',
      attrs: { to: S_WHATSAPP_NET, xmlns: 'w:sync:app:state', type: 'set' },
      content: [
        { tag: 'sync', attrs: {}, content: [{ tag: 'collection', attrs: { name: COLLECTION, version: String(state.version), return_snapshot: 'false' } }] },
      ],
    });
    const decoded = (await extractSyncdPatches(result, {}))[COLLECTION];
    if (!decoded) break;
    if (decoded.snapshot) {
      // A snapshot replaces everything read before.
      const snapshot = await decodeSyncdSnapshot(COLLECTION, decoded.snapshot, getKey, undefined, false);
      state = snapshot.state;
      latest.clear();
      for (const mutation of Object.values(snapshot.mutationMap)) latest.set(mutation.index.join('\u0000'), mutation);
    }
    if (decoded.patches.length) {
      const patched = await decodePatches(COLLECTION, decoded.patches, state, getKey, {}, undefined, undefined, false);
      state = patched.state;
      for (const mutation of Object.values(patched.mutationMap)) latest.set(mutation.index.join('\u0000'), mutation);
    }
    if (!decoded.hasMorePatches) break;
  }
  // Only the quick replies are kept between reads.
  for (const [key, mutation] of latest) if (quickReplyOf(mutation) === undefined) latest.delete(key);
  readState.set(instanceId, { state, latest });
  const replies: WhatsAppQuickReply[] = [];
  for (const mutation of latest.values()) {
    const reply = quickReplyOf(mutation);
    if (reply) replies.push(reply);
  }
  return replies;
}

/** A failure reading or writing the collection: the app-state key missing is the history sync still running (409); WhatsApp's refusal is Refused. */
function failure(what: string) {
  return (error: unknown): never => {
    if (error instanceof RpcError) throw error;
    const code = (error as { data?: unknown })?.data;
    if (typeof code === 'number') throw new RpcError(ErrorCode.Refused, `WhatsApp refused ${what} the quick replies (${code})`);
    throw new RpcError(ErrorCode.Internal, `failed ${what} the quick replies (${COLLECTION} app state): ${(error as Error)?.message ?? error}`);
  };
}

/** The phone's Business quick replies: read them, and write or delete one as the Business app does. */
export function quickReplyOps(inbound: InboundMessageObserver): OpHandlers<QuickReplyOps> {
  return {
    'quickreply.read': async (session) => ({ quickReplies: await readQuickReplies(session.instanceId, session.openSocket()).catch(failure('reading')) }),
    'quickreply.save': async (session, request) => {
      const socket = session.openSocket();
      let waId = request.waId;
      if (!waId) {
        // WhatsApp names a reply by its creation time in seconds: the next free second.
        const taken = new Set((await readQuickReplies(session.instanceId, socket).catch(failure('reading'))).map((reply) => reply.waId));
        let seconds = Math.floor(Date.now() / 1000);
        while (taken.has(String(seconds))) seconds++;
        waId = String(seconds);
      }
      const id = waId;
      await patchAppState(inbound, session, () => socket.addOrEditQuickReply({ timestamp: id, shortcut: request.shortcut, message: request.message })).catch(
        failure('writing'),
      );
      return { waId: id };
    },
    'quickreply.remove': async (session, request) => {
      const socket = session.openSocket();
      await patchAppState(inbound, session, () => socket.removeQuickReply(request.waId)).catch(failure('deleting'));
      return { ok: true };
    },
  };
}
