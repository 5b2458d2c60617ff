// The Chatwoot text of a WhatsApp message: locations, contact cards and reactions written out, the reply
// context (the Chatwoot message it quotes, reacts to or edits) and the media kind to attach.
import type { ChatwootRepository } from '@gw/persistence';
import { objectOf, type WaMessageFields } from './chatwoot-jobs';

/** The Chatwoot text of a WhatsApp message, its reply context, and the media kind to attach (if any). */
export async function renderMessage(
  repository: Pick<ChatwootRepository, 'linkOfWhatsApp'>,
  instanceId: string,
  message: WaMessageFields,
): Promise<{ content: string; contentAttributes?: Record<string, unknown>; media?: string }> {
  const content = objectOf(message.content);
  const text = typeof message.text === 'string' ? message.text : '';
  let body = text;
  let media: string | undefined;
  const attributes: Record<string, unknown> = {};
  const replyTo = async (waId: string) => {
    const target = waId ? await repository.linkOfWhatsApp(instanceId, waId) : null;
    if (target?.cwMessageId) attributes.in_reply_to = target.cwMessageId;
  };
  switch (message.messageType) {
    case 'LocationMessage':
    case 'LiveLocationMessage': {
      const lat = Number(content.degreesLatitude);
      const lng = Number(content.degreesLongitude);
      body = ['📍 Location', content.name, content.address, Number.isFinite(lat) && Number.isFinite(lng) ? `https://www.google.com/maps?q=${lat},${lng}` : '']
        .filter((line) => typeof line === 'string' && line)
        .join('\n');
      break;
    }
    case 'ContactMessage':
    case 'ContactsArrayMessage': {
      const cards = message.messageType === 'ContactMessage' ? [content] : Array.isArray(content.contacts) ? content.contacts : [];
      body = cards
        .map((entry: unknown) => {
          const card = objectOf(entry);
          const phones = [...String(card.vcard ?? '').matchAll(/TEL[^:]*:([^\r\n]+)/g)].map((match) => match[1].trim());
          return [`👤 ${card.displayName ?? ''}`.trim(), ...phones].join('\n');
        })
        .join('\n\n');
      break;
    }
    case 'ReactionMessage':
      await replyTo(String(message.reaction ?? ''));
      // An empty reaction takes the earlier one back.
      body = text || '↩️ reaction removed';
      if (text) attributes.is_reaction = true;
      break;
    default:
      if (message.type === 'media' && ['image', 'video', 'gif', 'ptv', 'audio', 'ptt', 'document', 'sticker'].includes(message.mediaType ?? ''))
        media = message.mediaType;
      else if (!body) body = message.vote ? String(message.vote) : `[${message.messageType}]`;
  }
  if (message.messageType !== 'ReactionMessage') await replyTo(String(message.quoted ?? ''));
  if (message.edited) {
    await replyTo(String(message.edited));
    body = `✏️ ${body}`;
  }
  if (message.isGroup && !message.fromMe) {
    const who = String(message.senderName || String(message.sender_pn || message.sender || '').split('@')[0]);
    body = `**${who}:**${body ? `\n${body}` : ''}`;
  }
  return { content: body, contentAttributes: Object.keys(attributes).length ? attributes : undefined, media };
}
