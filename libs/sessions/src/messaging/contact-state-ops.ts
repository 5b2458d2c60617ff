import { ErrorCode, RpcError, type BlocklistReply, type LabelRefreshReply } from '@gw/contracts';
import type { InstanceOpHandler } from '../bus/session-rpc.server';
import type { Session } from '../session/session';
import type { InboundMessageObserver } from './inbound-message.observer';
import type { InboundSocketHandler } from './inbound-socket-handler';

const REQUEST_ID = /^[\w.:-]{1,128}$/;
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

  return { 'labels.refresh': refresh, 'blocklist.get': blocklist, 'blocklist.set': block };
}
