import { failSpan, SpanKind, startSpan } from '@gw/platform';
import type { BinaryNode, WASocket } from '@whiskeysockets/baileys';
import { AwaitedAcks } from './awaited-acks';
import { refusalText } from './refusal';

/**
 * How a wait for the server's ack ended: its error attribute (null: accepted), no ack within the
 * time (`timeout`: the message stays Pending and the unacked sweep takes it over), or the socket
 * closed first (`closed`: the server may never have had it; the send goes again with the same id on
 * the next socket).
 */
export type AckOutcome = 'timeout' | 'closed' | { error: string | null; code?: string };

/**
 * The server's `<ack class="message" id=…>` for one message: error attribute → Failed. With tracing on,
 * a `whatsapp send` span (a child of the send op's) runs from here, just before the message is relayed,
 * to the ack (or the end of the wait: `wa.ack` says how it ended; a refusal marks it failed).
 */
export function waitForAck(socket: WASocket, messageId: string, timeoutMs: number): { result: Promise<AckOutcome>; cancel(): void } {
  const ws = socket.ws;
  const span = startSpan('session-worker', 'whatsapp send', { kind: SpanKind.CLIENT, attributes: { 'wa.message.id': messageId } });
  let finish: (value: AckOutcome) => void = () => undefined;
  const result = new Promise<AckOutcome>((resolve) => (finish = resolve));
  let finished = false;
  const listener = (node: BinaryNode) => {
    if (node.attrs.id !== messageId) return;
    const error = node.attrs.error;
    done(error ? { error: refusalText(error), code: error } : { error: null });
  };
  // Baileys' end() drops the websocket's own close listeners before closing it, then says so on `ev`.
  const onClose = () => done('closed');
  const onUpdate = (update: { connection?: string }) => {
    if (update.connection === 'close') done('closed');
  };
  const timer = setTimeout(() => done('timeout'), timeoutMs);
  const done = (value: AckOutcome, ended: string = typeof value === 'string' ? value : value.error ? 'refused' : 'acked') => {
    if (finished) return;
    finished = true;
    if (span) {
      span.setAttribute('wa.ack', ended);
      if (typeof value !== 'string' && value.error) failSpan(span, new Error(value.error));
      span.end();
    }
    clearTimeout(timer);
    ws.off('CB:ack,class:message', listener);
    ws.off('close', onClose);
    socket.ev.off('connection.update', onUpdate);
    // Given up: a late ack is the inbound handler's to record. (An ack received stays ours until
    // the send has written its result; the send then releases the id.)
    if (typeof value === 'string') AwaitedAcks.delete(socket, messageId);
    finish(value);
  };
  AwaitedAcks.add(socket, messageId);
  ws.on('CB:ack,class:message', listener);
  ws.on('close', onClose);
  socket.ev.on('connection.update', onUpdate);
  if (ws.isClosed || ws.isClosing) done('closed');
  // Cancelled: the relay itself failed (the span says so; the caller handles the error).
  return { result, cancel: () => done('timeout', 'not relayed') };
}
