import type { DescribedContent } from '@gw/domain';
import { type MessageRow, type NewMessage } from '@gw/persistence';
import type { WAMessage } from '../../baileys';
import { contactsEvent, messagesEvent } from '../event-payloads';
import { toNewMessage } from '../message-mapper';
import { chatObservationKeys, messageKey, senderObservationKeys, type InboundContext } from './inbound-context';
import { observeChat, observeSender, placeOf } from './message-places';

/** What a placeholder of an undecryptable message says about its (missing) content. */
const UNDECRYPTABLE: DescribedContent = {
  messageType: 'placeholder',
  type: 'unknown',
  mediaType: '',
  text: '',
  content: null,
  quoted: '',
  edited: '',
  reaction: '',
  buttonOrListid: '',
  vote: '',
  revokes: '',
  field: '',
};

/**
 * A message Baileys could not decrypt (a CIPHERTEXT stub: Bad MAC, no session, no `<enc>` at all):
 * stored as a placeholder — messageType `placeholder`, `content: {placeholder: "undecryptable",
 * reason}` — and announced as a `messages` event, so nothing a phone sent is silently missing.
 * Baileys has asked the sender for a retry (and its own phone for a resend); when the content
 * arrives under the same id, onMessage completes this row (it has no stored copy, `raw`) and
 * announces the message again with its content. A placeholder already stored, or the content,
 * is left as it is (Baileys emits the stub again on every failed retry).
 */
export async function storeUndecryptable(context: InboundContext, message: WAMessage, history?: MessageRow[]): Promise<void> {
  const key = message.key;
  const remote = key.remoteJid ?? '';
  if (remote.endsWith('@newsletter') || remote.endsWith('@broadcast')) return;
  if ((message as { category?: string }).category === 'peer') return;
  const place = await placeOf(context, message);
  const group = place.isGroup ? await context.groupInfo(remote) : null;
  const reason = message.messageStubParameters?.[0] ?? '';
  const fromMe = Boolean(key.fromMe);
  const senderName = message.pushName || '';
  const row: NewMessage = {
    ...toNewMessage(context.instanceId, { message, described: UNDECRYPTABLE, place, senderName, status: '' }),
    content: { placeholder: 'undecryptable', reason },
    raw: null,
  };
  const who = await context.who();
  const messageId = key.id as string;
  await context.write(
    async (tx, events) => {
      const prior = await context.services.messages.within(tx).findByMessageId(context.instanceId, messageId);
      if (prior) {
        if (history) history.push(prior);
        return;
      }
      const { row: stored } = await context.services.messages.within(tx).upsert(row);
      const contact = fromMe ? null : await observeSender(context, tx, place.sender, senderName);
      if (contact) events.push(contactsEvent([contact], who));
      // Not counted as unread: the content, when it comes, is (onMessage).
      const chat = await observeChat(context, tx, place, group, {
        waName: place.isGroup ? group?.subject : fromMe ? undefined : senderName || undefined,
        lastMessage: { timestamp: row.messageTimestamp, type: row.messageType, textVote: '', sender: row.sender, incoming: false },
      });
      if (history) {
        history.push(stored);
        return;
      }
      events.push(messagesEvent(chat, stored, who, group?.subject ?? ''));
    },
    [
      messageKey(messageId),
      ...chatObservationKeys([place.chatId, place.chatLid]),
      ...senderObservationKeys([place.sender.pn, place.sender.lid], fromMe ? '' : senderName),
    ],
  );
}
