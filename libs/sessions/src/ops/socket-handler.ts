import { ErrorCode, RpcError } from '@gw/contracts';
import type { InboundMessageObserver } from '../messaging/inbound-message.observer';
import type { InboundSocketHandler } from '../messaging/inbound-socket-handler';
import type { Session } from '../session/session';
import { retryOnAppStateConflict } from '../socket/app-state-conflicts';

/**
 * The inbound handler of the instance's open socket. Label and blocklist ops run on it, so what they
 * store is written in order with the socket's own events.
 */
export function socketHandlerOf(inbound: InboundMessageObserver, session: Session): InboundSocketHandler {
  const socket = session.openSocket();
  const handler = inbound.handlerFor(session.instanceId, socket);
  if (!handler) throw new RpcError(ErrorCode.NotConnected, 'instance is not connected');
  return handler;
}

/**
 * An app-state patch: Baileys emits the label events of its own patches before it resolves; they are
 * stored before the answer. A patch WhatsApp refused as stale (another device changed the collection
 * meanwhile, a 409) is sent again after a resync, so `change` may run more than once: it must upload
 * once, or skip the uploads that landed (`retryOnAppStateConflict`).
 */
export async function patchAppState(
  inbound: InboundMessageObserver,
  session: Session,
  change: (handler: InboundSocketHandler) => Promise<void>,
): Promise<{ ok: true }> {
  const handler = socketHandlerOf(inbound, session);
  try {
    await retryOnAppStateConflict(() => change(handler));
  } catch (error) {
    if (/App state key not present/i.test((error as Error)?.message ?? ''))
      throw new RpcError(ErrorCode.Conflict, 'history sync still in progress, try again later');
    throw error;
  }
  await handler.idle();
  return { ok: true };
}

export const LABEL_ID = /^[\w.-]{1,64}$/;
