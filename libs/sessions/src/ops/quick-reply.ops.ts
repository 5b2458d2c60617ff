import { ErrorCode, RpcError } from '@gw/contracts';
import type { InboundMessageObserver } from '../messaging/inbound-message.observer';
import { QUICK_REPLY_COLLECTION as COLLECTION, readQuickReplies } from '../messaging/quick-replies';
import type { OpHandlers, OpRequestParsers } from './op-handler';
import { patchAppState } from './socket-handler';

/**
 * WhatsApp Business quick replies: app-state `quick_reply` mutations (index `['quick_reply', id]`,
 * `SyncActionValue.quickReplyAction {shortcut, message, keywords, count, deleted}`) in the `regular`
 * collection, written with rc14's addOrEditQuickReply / removeQuickReply and read by
 * `messaging/quick-replies` (rc14 drops them).
 */
export type QuickReplyOps = 'quickreply.read' | 'quickreply.save' | 'quickreply.remove';

/** WhatsApp's limits in the Business app: a shortcut of up to 25 characters, a message of up to 1024. */
export const MAX_SHORTCUT = 25;
export const MAX_MESSAGE = 1024;
const WA_ID = /^[\w.-]{1,64}$/;

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
    'quickreply.read': async (session) => ({ quickReplies: await readQuickReplies(session.openSocket()).catch(failure('reading')) }),
    'quickreply.save': async (session, request) => {
      const socket = session.openSocket();
      let waId = request.waId;
      if (!waId) {
        // WhatsApp names a reply by its creation time in seconds: the next free second.
        const taken = new Set((await readQuickReplies(socket).catch(failure('reading'))).map((reply) => reply.waId));
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
