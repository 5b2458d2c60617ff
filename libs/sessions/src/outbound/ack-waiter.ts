import type { BinaryNode, WASocket } from '@whiskeysockets/baileys';
import { AwaitedAcks } from './awaited-acks';
import { refusalText } from './refusal';

/** How long a send waits for the server's ack before answering with the message still Pending. */
const ACK_TIMEOUT_MS = 15_000;

export type AckOutcome = 'timeout' | { error: string | null };

/** The server's `<ack class="message" id=…>` for one message: error attribute → Failed. */
export function waitForAck(socket: WASocket, messageId: string): { result: Promise<AckOutcome>; cancel(): void } {
  const ws = socket.ws;
  let finish: (value: AckOutcome) => void = () => undefined;
  const result = new Promise<AckOutcome>((resolve) => (finish = resolve));
  const listener = (node: BinaryNode) => {
    if (node.attrs.id !== messageId) return;
    const error = node.attrs.error;
    done(error ? { error: refusalText(error) } : { error: null });
  };
  const timer = setTimeout(() => done('timeout'), ACK_TIMEOUT_MS);
  const done = (value: AckOutcome) => {
    clearTimeout(timer);
    ws.off('CB:ack,class:message', listener);
    // Given up: a late ack is the inbound handler's to record. (An ack received stays ours until
    // the send has written its result; the send then releases the id.)
    if (value === 'timeout') AwaitedAcks.delete(socket, messageId);
    finish(value);
  };
  AwaitedAcks.add(socket, messageId);
  ws.on('CB:ack,class:message', listener);
  return { result, cancel: () => done('timeout') };
}
