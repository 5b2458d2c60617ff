import { getBinaryNodeChild, type BinaryNode, type WASocket } from '../baileys';

/**
 * Calls `onRefresh` when WhatsApp retires the registration material a companion shows in its QR:
 * `<notification type="companion_reg_refresh">` with a `companion_reg_refresh` or
 * `pair-device-rotate-qr` child (WA Web's WAWebHandleCompanionReqRefreshNotification as quoted in
 * Baileys PR #2765). rc14 acks it and drops it, so its QR keeps a retired ADV secret and the pairing
 * never completes (Baileys issue #2737). Returns the detach function.
 */
export function onCompanionRegRefresh(socket: WASocket, onRefresh: () => void): () => void {
  const listener = (stanza: BinaryNode) => {
    if (getBinaryNodeChild(stanza, 'companion_reg_refresh') || getBinaryNodeChild(stanza, 'pair-device-rotate-qr')) onRefresh();
  };
  const event = 'CB:notification,type:companion_reg_refresh';
  socket.ws.on(event, listener);
  return () => socket.ws.off(event, listener);
}

/**
 * The QR text with `advSecret` in place of the one Baileys put there: Baileys reads the secret once
 * per socket when the refs arrive, the QR (ref,noise,identity,adv,platform) must show the current one.
 */
export function withAdvSecret(qr: string, advSecret: string): string {
  const hash = qr.lastIndexOf('#');
  const fields = qr.slice(hash + 1).split(',');
  if (fields.length < 4) return qr;
  fields[3] = advSecret;
  return `${qr.slice(0, hash + 1)}${fields.join(',')}`;
}
