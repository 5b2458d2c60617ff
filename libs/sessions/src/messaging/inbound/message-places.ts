import { type ChatObservation, type ChatRow, type ContactRow, type Tx } from '@gw/persistence';
import { recordId } from '@gw/platform';
import { isJidGroup, type WAMessage } from '../../baileys';
import { InboundBatch, unchanged } from '../inbound-batch';
import type { GroupInfo } from '../group-info-cache';
import { isLid, isPhoneJid, type Party } from '../identity-resolver';
import type { MessagePlace } from '../message-mapper';
import type { InboundContext } from './inbound-context';

// Where a message is stored and who it is from: its chat row and its author's contact row.

/** The chat of a message as one row (phone JID + LID, or the group) and its author. */
export async function placeOf(context: InboundContext, message: WAMessage): Promise<MessagePlace> {
  const key = message.key;
  const remote = key.remoteJid ?? '';
  const me = context.identities.me();
  if (isJidGroup(remote)) {
    const sender = key.fromMe ? me : await context.identities.party(key.participant, key.participantAlt);
    return { chatId: remote, chatLid: '', isGroup: true, sender };
  }
  const chat = await context.identities.party(remote, key.remoteJidAlt);
  return { chatId: chat.pn || chat.jid, chatLid: chat.lid, isGroup: false, sender: key.fromMe ? me : chat };
}

/** The other side of a 1:1 chat (who sends its receipts); the group JID for groups. */
export async function chatParty(place: MessagePlace): Promise<Party> {
  if (place.isGroup) return { jid: place.chatId, pn: '', lid: '' };
  return { jid: place.chatLid || place.chatId, pn: isPhoneJid(place.chatId) ? place.chatId : '', lid: place.chatLid };
}

/** The chat row a message observes (its last message, its name), stored if new. */
export async function observeChat(
  context: InboundContext,
  tx: Tx,
  place: MessagePlace,
  group: GroupInfo | null,
  extra: Omit<ChatObservation, 'waChatId' | 'waChatLid' | 'isGroup'>,
): Promise<ChatRow> {
  return (await observeChatAndSender(context, tx, place, group, extra, null)).chat;
}

/**
 * The chat row a message observes, and its author's contact as its push name shows it (`pushName`;
 * null: the author is not observed). Through the group's batch, the chat goes in the round's statement
 * and the author in the round's statement of senders beside it (ADR 0017, 0055). The contact is
 * answered only when this observation changed it.
 */
export async function observeChatAndSender(
  context: InboundContext,
  tx: Tx,
  place: MessagePlace,
  group: GroupInfo | null,
  extra: Omit<ChatObservation, 'waChatId' | 'waChatLid' | 'isGroup'>,
  pushName: string | null,
): Promise<{ chat: ChatRow; contact: ContactRow | null }> {
  const observation: ChatObservation = {
    waChatId: isLid(place.chatId) ? undefined : place.chatId,
    waChatLid: place.chatLid || undefined,
    isGroup: place.isGroup,
    ...extra,
  };
  if (group && !observation.waName) observation.waName = group.subject || undefined;
  const { sender } = place;
  const author =
    pushName !== null && (sender.pn || sender.lid) ? { key: senderKey(context, sender, pushName), pn: sender.pn, lid: sender.lid, pushName } : null;
  // Through the group's batch: the chats of a group transaction's messages are updated in one statement (ADR 0017).
  const observed = await InboundBatch.observeChatAndSender(
    context.services.chats,
    context.services.contacts,
    tx,
    context.instanceId,
    observation,
    () => recordId(14),
    author,
  );
  return { chat: observed.chat, contact: observed.sender?.changed ? observed.sender.contact : null };
}

/** once()'s key of a sender observed with a push name (observePushName, observeChatAndSender). */
function senderKey(context: InboundContext, sender: { pn: string; lid: string }, pushName: string): string {
  return `sender ${context.instanceId}\u0000${sender.pn}\u0000${sender.lid}\u0000${pushName}`;
}

/** The author's contact row (push name, LID pair); returned only when it changed. */
export async function observeSender(context: InboundContext, tx: Tx, sender: Party, pushName: string): Promise<ContactRow | null> {
  if (!sender.pn && !sender.lid) return null;
  const { contact, changed } = await observePushName(context, tx, sender, pushName);
  return changed ? contact : null;
}

/**
 * A sender's contact as a push name shows it (a message's author, or Baileys' `contacts.update` repeating
 * it). Writes of one wave observing it alike (a busy chat's messages and their push names) observe it
 * once: after the first, the others would find it unchanged (waves(), senderObservationKeys).
 */
export function observePushName(
  context: InboundContext,
  tx: Tx,
  sender: { pn: string; lid: string },
  pushName: string,
): Promise<{ contact: ContactRow; changed: boolean }> {
  return InboundBatch.once(
    tx,
    senderKey(context, sender, pushName),
    () => context.services.contacts.within(tx).observe(context.instanceId, { jid: sender.pn, lid: sender.lid, pushName }),
    unchanged,
  );
}
