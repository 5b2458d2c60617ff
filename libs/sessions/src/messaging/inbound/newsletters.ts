import { describeContent, type ProtoMessage } from '@gw/domain';
import { type MessageRow } from '@gw/persistence';
import { proto, type WAMessage } from '../../baileys';
import { newsletterMessagesEvent } from '../event-payloads';
import { toNewMessage, type MessagePlace } from '../message-mapper';
import type { InboundContext } from './inbound-context';

/** An admin's edit or deletion of a channel post, read from the raw stanza (applyNewsletterChange). */
export interface NewsletterChange {
  jid: string;
  messageId: string;
  serverId: string;
  edit: 'edited' | 'deleted';
  content?: Buffer;
  t: number;
}

/** A channel post (followed newsletter): stored like a message of that chat, announced as `newsletter_messages`. */
export async function storeNewsletterPost(context: InboundContext, message: WAMessage): Promise<void> {
  const described = describeContent(message.message as ProtoMessage);
  if (!described.field || described.type === 'protocol') return;
  const remote = message.key.remoteJid ?? '';
  const place: MessagePlace = { chatId: remote, chatLid: '', isGroup: false, sender: { jid: remote, pn: '', lid: '' } };
  const row = toNewMessage(context.instanceId, { message, described, place, senderName: '', status: '', vote: undefined });
  const who = await context.who();
  await context.write(async (tx, events) => {
    const prior = await context.services.messages.within(tx).findByMessageId(context.instanceId, row.messageId, true);
    if (prior?.raw) return;
    const { row: stored } = await context.services.messages.within(tx).upsert(row);
    const serverId = (message.key as { server_id?: string }).server_id ?? '';
    events.push(newsletterMessagesEvent(stored, serverId, who));
  });
}

/**
 * An admin edited (`edit="3"`, the new content) or deleted (`edit="8"`) a channel post: the stored post follows
 * and a `newsletter_messages` event says so (`edit`: edited / deleted). Baileys reads such a stanza as the post
 * again, under the same id, so the socket handler hands the raw stanza here.
 */
export async function applyNewsletterChange(context: InboundContext, change: NewsletterChange): Promise<void> {
  const who = await context.who();
  let content: ProtoMessage | undefined;
  if (change.edit === 'edited') {
    try {
      content = proto.Message.decode(change.content ?? Buffer.alloc(0)) as unknown as ProtoMessage;
    } catch {
      return;
    }
  }
  const described = content ? describeContent(content) : undefined;
  if (change.edit === 'edited' && (!described?.field || described.type === 'protocol')) return;
  await context.withRetry('newsletter edit', { messageId: change.messageId }, () =>
    context.write(async (tx, events) => {
      let row: MessageRow | null;
      if (change.edit === 'deleted') row = await context.services.messages.within(tx).markDeleted(context.instanceId, change.messageId);
      else {
        row = await context.services.messages.within(tx).applyEdit(context.instanceId, change.messageId, {
          text: described!.text,
          content: described!.content,
          editId: change.messageId,
        });
        if (!row) {
          // A post the instance had not stored: stored as it is now.
          const message = { key: { remoteJid: change.jid, id: change.messageId, fromMe: false }, message: content, messageTimestamp: change.t } as WAMessage;
          const place: MessagePlace = { chatId: change.jid, chatLid: '', isGroup: false, sender: { jid: change.jid, pn: '', lid: '' } };
          const created = toNewMessage(context.instanceId, { message, described: described!, place, senderName: '', status: '', vote: undefined });
          row = (await context.services.messages.within(tx).upsert(created)).row;
        }
      }
      if (row) events.push(newsletterMessagesEvent(row, change.serverId, who, change.edit));
    }),
  );
}
