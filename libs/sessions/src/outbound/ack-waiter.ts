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

type Finish = (value: AckOutcome) => void;

/**
 * The waits in progress on one socket, by message id. One ack listener, one close listener and one
 * connection listener per socket, added with its first wait and kept while it lives, instead of three
 * added and removed on every send (each removal a walk of the socket's listeners; bench/send, issue #38).
 */
const waitsBySocket = new WeakMap<WASocket, Map<string, Set<Finish>>>();

function waitsOf(socket: WASocket): Map<string, Set<Finish>> {
  let waits = waitsBySocket.get(socket);
  if (waits) return waits;
  const byId = new Map<string, Set<Finish>>();
  waits = byId;
  waitsBySocket.set(socket, byId);
  // A copy: each finish removes itself from the set (and the set from the map) as it runs.
  const finishAll = (value: AckOutcome) => {
    for (const finishes of [...byId.values()]) for (const finish of [...finishes]) finish(value);
  };
  // Before Baileys' own listener: a refusal a send takes is claimed before Baileys announces it as a
  // Failed status, which the inbound side then leaves to the send (AwaitedAcks.takeRefusal).
  socket.ws.prependListener('CB:ack,class:message', (node: BinaryNode) => {
    const finishes = byId.get(node.attrs.id);
    if (!finishes) return;
    const error = node.attrs.error;
    if (error) AwaitedAcks.claimRefusal(socket, node.attrs.id);
    const value: AckOutcome = error ? { error: refusalText(error), code: error } : { error: null };
    for (const finish of [...finishes]) finish(value);
  });
  // Baileys' end() drops the websocket's own close listeners before closing it, then says so on `ev`.
  socket.ws.on('close', () => finishAll('closed'));
  socket.ev.on('connection.update', (update: { connection?: string }) => {
    if (update.connection === 'close') finishAll('closed');
  });
  return waits;
}

/**
 * The server's `<ack class="message" id=…>` for one message: error attribute → Failed. With tracing on,
 * a `whatsapp send` span (a child of the send op's) runs from here, just before the message is relayed,
 * to the ack (or the end of the wait: `wa.ack` says how it ended; a refusal marks it failed).
 */
export function waitForAck(socket: WASocket, messageId: string, timeoutMs: number): { result: Promise<AckOutcome>; cancel(): void } {
  const ws = socket.ws;
  const span = startSpan('session-worker', 'whatsapp send', { kind: SpanKind.CLIENT, attributes: { 'wa.message.id': messageId } });
  let resolve: (value: AckOutcome) => void = () => undefined;
  const result = new Promise<AckOutcome>((settle) => (resolve = settle));
  let finished = false;
  const waits = waitsOf(socket);
  const done = (value: AckOutcome, ended: string = typeof value === 'string' ? value : value.error ? 'refused' : 'acked') => {
    if (finished) return;
    finished = true;
    if (span) {
      span.setAttribute('wa.ack', ended);
      if (typeof value !== 'string' && value.error) failSpan(span, new Error(value.error));
      span.end();
    }
    clearTimeout(timer);
    const finishes = waits.get(messageId);
    if (finishes) {
      finishes.delete(finish);
      if (!finishes.size) waits.delete(messageId);
    }
    // Given up: a late ack is the inbound handler's to record. (An ack received stays ours until
    // the send has written its result; the send then releases the id.)
    if (typeof value === 'string') AwaitedAcks.delete(socket, messageId);
    resolve(value);
  };
  const finish: Finish = (value) => done(value);
  const timer = setTimeout(() => done('timeout'), timeoutMs);
  AwaitedAcks.add(socket, messageId);
  const finishes = waits.get(messageId);
  if (finishes) finishes.add(finish);
  else waits.set(messageId, new Set([finish]));
  if (ws.isClosed || ws.isClosing) done('closed');
  // Cancelled: the relay itself failed (the span says so; the caller handles the error).
  return { result, cancel: () => done('timeout', 'not relayed') };
}
