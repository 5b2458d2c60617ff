import type { MessageRepository } from '@gw/persistence';
import { BufferJSON, type proto, type WAMessage } from '../baileys';

/** Our own message as we stored it, for Baileys' `getMessage`. */
export type StoredMessageLookup = (instanceId: string, messageId: string) => Promise<proto.IMessage | undefined>;

/**
 * Baileys' `getMessage` from our store (issue 34): a phone that cannot decrypt one of our messages
 * answers a retry receipt, and Baileys relays the message again — from its recent-message cache, which
 * lives and dies with one socket, or else from `getMessage`, which answered nothing (rc14's default).
 * A retry that comes on the next socket (a 440 conflict, a 500/515, a restart between the message and
 * the phone's retry) was never answered: the message stayed `Sent`, acked by the server, and never
 * reached the phone (bench/chaos: 11 of 408 under `conflict` on the loaded machine). Only our own
 * messages, from the copy stored when they went out (`raw`).
 */
export function storedMessageLookup(messages: Pick<MessageRepository, 'findOne'>): StoredMessageLookup {
  return async (instanceId, messageId) => {
    const row = await messages.findOne(instanceId, messageId);
    if (!row?.fromMe || !row.raw) return undefined;
    return (JSON.parse(row.raw, BufferJSON.reviver) as WAMessage).message ?? undefined;
  };
}
