import type { Logger } from '@gw/platform';
import { jidNormalizedUser, type BinaryNode, type WASocket } from '../baileys';

type NodeHandler = (node: BinaryNode) => unknown;

/**
 * Makes Baileys handle each sender's received messages one after the other, in the order the server
 * sent them. Messages of different senders still go concurrently.
 *
 * Baileys 7.0.0-rc14 handles every `message` stanza as it arrives, without a queue. Only the decryption
 * itself runs under a mutex, and several awaits come before it: the LID/phone-number mapping of the
 * sender, which for a new contact stores the mapping and migrates the Signal session first. So a new
 * contact's first message often entered the mutex after its second one, and `messages.upsert` gave
 * them to us in the reverse order. We store and announce in the order Baileys emits, so the chat's
 * history, its `messages` events, and the chatbot's context showed the second message first: 6 of 20
 * new contacts in a reproduction, each sending two messages back to back.
 *
 * The one listener of `CB:message` (Baileys' own) is wrapped: a stanza waits until the previous stanza
 * with the same `from` has been handled. `from` is the group for a group's messages, else the sender
 * (every device of a contact in one line; our own devices' messages, typed on the phone, share one line
 * whatever their chat). Offline messages are not affected; Baileys queues them itself, one at a time.
 * Call it before the socket connects.
 */
export function receiveMessagesInOrder(socket: Pick<WASocket, 'ws'>, logger: Logger): void {
  const ws = socket.ws;
  const handlers = ws.listeners('CB:message') as NodeHandler[];
  ws.removeAllListeners('CB:message');
  /** The last stanza in line of each chat; an entry goes when its chat has nothing more in line. */
  const tails = new Map<string, Promise<void>>();
  ws.on('CB:message', (node: BinaryNode) => {
    const chat = node.attrs.from ? jidNormalizedUser(node.attrs.from) : '';
    const handle = async () => {
      for (const handler of handlers) await handler(node);
    };
    const previous = tails.get(chat);
    // Baileys' handler catches and logs its own errors; one that escapes (an ack that could not be sent)
    // is logged here and must not stop the line.
    const tail = (previous ? previous.then(handle) : handle()).catch((error: unknown) =>
      logger.warn({ err: error, id: node.attrs.id }, 'handling a received message failed'),
    );
    tails.set(chat, tail);
    void tail.then(() => {
      if (tails.get(chat) === tail) tails.delete(chat);
    });
  });
}
