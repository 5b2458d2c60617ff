import type { OutboundContent, SendRequest } from '@gw/contracts';
import { resolvePlaceholders, type PlaceholderContext } from './placeholders';

/** What placeholders read of a chat: its names and its lead (a chat row has them). */
export interface PlaceholderChat {
  waName?: string | null;
  waContactName?: string | null;
  lead?: Record<string, unknown> | null;
}

/**
 * Where the chat is read from (ChatRepository has this method). The lookup is the caller's: the rules
 * below do no I/O of their own, so they live in the domain beside resolvePlaceholders.
 */
export interface PlaceholderChats {
  findByJid(instanceId: string, chatJid: string): Promise<PlaceholderChat | null>;
}

/** What placeholders need of the instance. */
export interface PlaceholderInstance {
  id: string;
  fieldsMap: Record<string, string> | null;
}

/**
 * Replaces placeholders with what is known of the chat and its lead. Shared by the gateway (immediate
 * sends: at accept) and the dispatcher (async sends: when the message is sent, so a lead updated
 * while the message waited is what the recipient sees).
 */
export async function resolveChatPlaceholders(chats: PlaceholderChats, instance: PlaceholderInstance, chatJid: string, text: string): Promise<string> {
  if (!text.includes('{{')) return text;
  const chat = await chats.findByJid(instance.id, chatJid);
  const lead = (chat?.lead ?? {}) as Record<string, unknown>;
  const str = (key: string) => (typeof lead[key] === 'string' ? (lead[key] as string) : '');
  const leadFields: Record<string, string> = {};
  for (let n = 1; n <= 20; n++) {
    const key = `lead_field${String(n).padStart(2, '0')}`;
    leadFields[key] = str(key);
  }
  const context: PlaceholderContext = {
    wa_name: chat?.waName ?? '',
    wa_contactName: chat?.waContactName ?? '',
    lead_name: str('lead_name'),
    lead_fullName: str('lead_fullName'),
    lead_personalid: str('lead_personalid'),
    lead_email: str('lead_email'),
    lead_status: str('lead_status'),
    lead_notes: str('lead_notes'),
    lead_assignedAttendant_id: str('lead_assignedAttendant_id'),
    leadFields,
    fieldsMap: instance.fieldsMap ?? {},
  };
  return resolvePlaceholders(text, context);
}

/** The request as it goes out: placeholders of its text (or caption) and of the stored payload resolved. */
export async function resolveRequestPlaceholders(chats: PlaceholderChats, instance: PlaceholderInstance, request: SendRequest): Promise<SendRequest> {
  const content: OutboundContent = request.content;
  const original = content.kind === 'text' ? content.text : content.kind === 'media' ? content.caption : '';
  if (!original.includes('{{')) return request;
  const resolved = await resolveChatPlaceholders(chats, instance, request.chatJid, original);
  const nextContent: OutboundContent =
    content.kind === 'text' ? { ...content, text: resolved } : content.kind === 'media' ? { ...content, caption: resolved } : content;
  const payload = request.record.sendPayload;
  const sendPayload = typeof payload.text === 'string' && payload.text === original ? { ...payload, text: resolved } : payload;
  return { ...request, content: nextContent, record: { ...request.record, sendPayload } };
}
