import type { WASocket } from '../baileys';

/**
 * How long after its close a socket's events still reach the listeners left for them: a message handled
 * when the socket closed is emitted within this time (its upsert waits on a few store round trips).
 */
export const LATE_EVENTS_MS = 10_000;

/**
 * Keeps a closing socket's last events. Baileys 7.0.0-rc14 decrypts a message, sends its delivery
 * receipt, and only then emits its `messages.upsert` — into the event buffer while a stanza is being
 * handled. Its end() announces the close and then destroys the event buffer: what the buffer held is
 * discarded and every listener removed, so an upsert buffered then, or emitted by the handling still
 * under way, reaches no one. WhatsApp had the receipt: it counts the message delivered and never sends
 * it again (bench/chaos `stream-error-500`: 2 of 86 inbound messages never stored; neither the
 * decrypted-message buffer of 3822e35, which answers a redelivery, nor a retry can bring them back).
 *
 * Here the buffer is flushed to the listeners still attached when end() destroys it, and its listeners
 * are removed LATE_EVENTS_MS later: the inbound handler keeps its `messages.upsert` listener that long
 * after its socket goes (InboundSocketHandler), so the late ones are stored too. Call it on every socket.
 */
export function keepEventsAtClose(socket: Pick<WASocket, 'ev'>, graceMs = LATE_EVENTS_MS): void {
  const ev = socket.ev;
  const destroy = ev.destroy.bind(ev);
  ev.destroy = () => {
    ev.flush();
    setTimeout(destroy, graceMs).unref();
  };
}
