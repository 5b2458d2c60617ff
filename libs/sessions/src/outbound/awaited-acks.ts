/**
 * Message ids whose server ack a send in progress records itself (with its result), per socket. The
 * inbound handler leaves those acks alone: one write per ack, and no race between two writers of the
 * same status. An id leaves the set once the send has written its result, or gave up waiting.
 */
const awaited = new WeakMap<object, Set<string>>();

export const AwaitedAcks = {
  add(socket: object, messageId: string): void {
    let ids = awaited.get(socket);
    if (!ids) awaited.set(socket, (ids = new Set()));
    ids.add(messageId);
  },
  delete(socket: object, messageId: string): void {
    awaited.get(socket)?.delete(messageId);
  },
  has(socket: object, messageId: string): boolean {
    return awaited.get(socket)?.has(messageId) ?? false;
  },
};
