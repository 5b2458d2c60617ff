import { ErrorCode, RpcError, type BlocklistReply, type LabelRefreshReply } from '@gw/contracts';
import type { InstanceOpHandler } from '../bus/session-rpc.server';
import type { Session } from '../session/session';
import type { InboundMessageObserver } from './inbound-message.observer';
import type { InboundSocketHandler } from './inbound-socket-handler';

const REQUEST_ID = /^[\w.:-]{1,128}$/;
const LABEL_ID = /^[\w.-]{1,64}$/;
const USER_JID = /^\d{5,20}@s\.whatsapp\.net$|^\d{1,20}@lid$/;

/**
 * The worker's label and blocklist ops. They run on the inbound handler of the instance's open
 * socket, so what they store is written in order with the socket's own events.
 */
export function createContactStateOps(inbound: InboundMessageObserver): Record<string, InstanceOpHandler> {
  const handlerOf = (session: Session): InboundSocketHandler => {
    const socket = session.openSocket();
    const handler = inbound.handlerFor(session.instanceId, socket);
    if (!handler) throw new RpcError(ErrorCode.NotConnected, 'instance is not connected');
    return handler;
  };

  const refresh = async (session: Session, raw: Record<string, unknown>): Promise<LabelRefreshReply> => {
    const requestId = typeof raw.requestId === 'string' ? raw.requestId : '';
    if (!REQUEST_ID.test(requestId)) throw new RpcError(ErrorCode.BadRequest, 'requestId must be 1 to 128 letters, digits or . _ : -');
    return handlerOf(session).refreshLabels(requestId, raw.force === true);
  };

  const blocklist = async (session: Session): Promise<BlocklistReply> => ({ blockList: await handlerOf(session).syncBlocklist() });

  const block = async (session: Session, raw: Record<string, unknown>): Promise<BlocklistReply> => {
    const jid = typeof raw.jid === 'string' ? raw.jid : '';
    if (!USER_JID.test(jid)) throw new RpcError(ErrorCode.BadRequest, 'jid must be a user JID');
    if (typeof raw.block !== 'boolean') throw new RpcError(ErrorCode.BadRequest, 'block must be a boolean');
    return { blockList: await handlerOf(session).setBlocked(jid, raw.block) };
  };

  /** Baileys emits the label events of its own patches before it resolves; they are stored before the answer. */
  const patch = async (session: Session, change: (handler: InboundSocketHandler) => Promise<void>): Promise<{ ok: true }> => {
    const handler = handlerOf(session);
    try {
      await change(handler);
    } catch (error) {
      if (/App state key not present/i.test((error as Error)?.message ?? ''))
        throw new RpcError(ErrorCode.Conflict, 'history sync still in progress, try again later');
      throw error;
    }
    await handler.idle();
    return { ok: true };
  };

  const editLabel = async (session: Session, raw: Record<string, unknown>): Promise<{ ok: true }> => {
    const labelId = typeof raw.labelId === 'string' ? raw.labelId : '';
    if (!LABEL_ID.test(labelId)) throw new RpcError(ErrorCode.BadRequest, 'labelid must be a label id');
    const color = Number(raw.color);
    if (!Number.isInteger(color) || color < 0 || color > 19) throw new RpcError(ErrorCode.BadRequest, 'color must be an integer from 0 to 19');
    const name = typeof raw.name === 'string' ? raw.name : '';
    const socket = session.openSocket();
    return patch(session, () => socket.addLabel('', { id: labelId, name, color, deleted: raw.deleted === true }));
  };

  const chatLabels = async (session: Session, raw: Record<string, unknown>): Promise<{ ok: true }> => {
    const chatJid = typeof raw.chatJid === 'string' ? raw.chatJid : '';
    const ids = (value: unknown) => (Array.isArray(value) && value.every((id) => typeof id === 'string' && LABEL_ID.test(id)) ? (value as string[]) : null);
    const add = ids(raw.add);
    const remove = ids(raw.remove);
    if (!chatJid.includes('@') || !add || !remove) throw new RpcError(ErrorCode.BadRequest, 'malformed chat labels request');
    const socket = session.openSocket();
    return patch(session, async () => {
      for (const labelId of add) await socket.addChatLabel(chatJid, labelId);
      for (const labelId of remove) await socket.removeChatLabel(chatJid, labelId);
    });
  };

  return { 'labels.refresh': refresh, 'blocklist.get': blocklist, 'blocklist.set': block, 'label.edit': editLabel, 'chat.labels': chatLabels };
}
