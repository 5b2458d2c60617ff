import { formatPhone, jidUser } from '@gw/domain';
import type { ChatRow } from '../repositories/chat-row';

const LEAD_TEXT = ['lead_name', 'lead_fullName', 'lead_email', 'lead_personalid', 'lead_status', 'lead_notes', 'lead_assignedAttendant_id'] as const;
/** lead_field01 … lead_field20, named once: every `messages` event builds a chat record. */
const LEAD_FIELDS = Array.from({ length: 20 }, (_, i) => `lead_field${String(i + 1).padStart(2, '0')}`);

/** The API's Chat record (uazapi-notes §4; the real captures' field set). */
export function toChatRecord(row: ChatRow, owner: string) {
  const lead = row.lead ?? {};
  const text = (key: string) => (typeof lead[key] === 'string' ? (lead[key] as string) : '');
  const leadText: Record<string, string> = {};
  for (const key of LEAD_TEXT) leadText[key] = text(key);
  const fields: Record<string, string> = {};
  for (const key of LEAD_FIELDS) fields[key] = text(key);
  const number = row.isGroup ? jidUser(row.waChatId) : jidUser(row.waChatId || row.waChatLid);
  const flags = row.groupFlags ?? {};
  return {
    id: row.id,
    wa_fastid: `${owner}:${number}`,
    wa_chatid: row.waChatId,
    wa_chatlid: row.waChatLid,
    owner,
    name: row.name || row.waContactName || row.waName,
    phone: !row.isGroup && row.waChatId.endsWith('@s.whatsapp.net') ? formatPhone(jidUser(row.waChatId)) : '',
    image: row.image,
    imagePreview: row.imagePreview,
    wa_name: row.waName,
    wa_contactName: row.waContactName,
    wa_archived: row.archived,
    wa_isBlocked: row.blocked,
    wa_isGroup: row.isGroup,
    wa_isGroup_admin: Boolean(flags.admin),
    wa_isGroup_announce: Boolean(flags.announce),
    wa_isGroup_community: Boolean(flags.community),
    wa_isGroup_member: Boolean(flags.member),
    wa_isPinned: row.pinned,
    wa_label: row.labels,
    wa_notes: row.notes,
    wa_ephemeralExpiration: row.ephemeralExpiration,
    wa_lastMessageSender: row.lastMessageSender,
    wa_lastMessageTextVote: row.lastMessageTextVote,
    wa_lastMessageType: row.lastMessageType,
    wa_lastMsgTimestamp: row.lastMsgTimestamp,
    wa_muteEndTime: row.muteEndTime,
    wa_unreadCount: row.unreadCount,
    ...leadText,
    lead_tags: Array.isArray(lead.lead_tags) ? lead.lead_tags : [],
    lead_isTicketOpen: lead.lead_isTicketOpen === true,
    lead_kanbanOrder: typeof lead.lead_kanbanOrder === 'number' ? lead.lead_kanbanOrder : 0,
    ...fields,
    chatbot_agentResetMemoryAt: 0,
    // Written by /chat/editLead with the lead fields.
    chatbot_disableUntil: typeof lead.chatbot_disableUntil === 'number' ? lead.chatbot_disableUntil : 0,
    // Written by the chatbot when a trigger starts or continues a conversation (unix seconds).
    chatbot_lastTriggerAt: typeof lead.chatbot_lastTriggerAt === 'number' ? lead.chatbot_lastTriggerAt : 0,
    chatbot_lastTrigger_id: typeof lead.chatbot_lastTrigger_id === 'string' ? lead.chatbot_lastTrigger_id : '',
  };
}
