import type { BinaryNode, WASocket } from '../baileys';

type NodeHandler = (node: BinaryNode) => unknown;

/**
 * Makes Baileys handle each chat's received messages one after the other, in the order the server sent
 * them. Messages of different chats still go concurrently.
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
 * of the same chat (`from`: the contact, or the group) has been handled. Offline messages are not
 * affected; Baileys queues them itself, one at a time. Call it before the socket connects.
 */
export function receiveMessagesInOrder(socket: Pick<WASocket, 'ws'>): void {
  const ws = socket.ws;
  const handlers = ws.listeners('CB:message') as NodeHandler[];
  ws.removeAllListeners('CB:message');
  /** The last stanza in line of each chat; an entry goes when its chat has nothing more in line. */
  const tails = new Map<string, Promise<void>>();
  ws.on('CB:message', (node: BinaryNode) => {
    const chat = node.attrs.from ?? '';
    // Baileys' handler catches and logs its own errors; a rejection here must not stop the chat's line.
    const handle = async () => {
      for (const handler of handlers) await handler(node);
    };
    const previous = tails.get(chat);
    const tail = (previous ? previous.then(handle) : handle()).catch(() => undefined);
    tails.set(chat, tail);
    void tail.then(() => {
      if (tails.get(chat) === tail) tails.delete(chat);
    });
  });
}
