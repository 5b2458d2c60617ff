import { formatPhone, jidUser } from '@gw/domain';
import type { ChatRow } from '../repositories/chat-row';

/**
 * The API's Chat record (uazapi-notes §4; the real captures' field set).
 *
 * Every field is named in one literal, lead fields too: every `messages` event builds one, and the
 * record built from spreads of two lead objects took ~5× as long to build and ~2× as long to write as
 * JSON (a dictionary-mode object; bench/send, issue #38). The fields keep their order.
 */
export function toChatRecord(row: ChatRow, owner: string) {
  const lead = row.lead ?? {};
  const text = (key: string) => (typeof lead[key] === 'string' ? (lead[key] as string) : '');
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
    lead_name: text('lead_name'),
    lead_fullName: text('lead_fullName'),
    lead_email: text('lead_email'),
    lead_personalid: text('lead_personalid'),
    lead_status: text('lead_status'),
    lead_notes: text('lead_notes'),
    lead_assignedAttendant_id: text('lead_assignedAttendant_id'),
    lead_tags: Array.isArray(lead.lead_tags) ? lead.lead_tags : [],
    lead_isTicketOpen: lead.lead_isTicketOpen === true,
    lead_kanbanOrder: typeof lead.lead_kanbanOrder === 'number' ? lead.lead_kanbanOrder : 0,
    lead_field01: text('lead_field01'),
    lead_field02: text('lead_field02'),
    lead_field03: text('lead_field03'),
    lead_field04: text('lead_field04'),
    lead_field05: text('lead_field05'),
    lead_field06: text('lead_field06'),
    lead_field07: text('lead_field07'),
    lead_field08: text('lead_field08'),
    lead_field09: text('lead_field09'),
    lead_field10: text('lead_field10'),
    lead_field11: text('lead_field11'),
    lead_field12: text('lead_field12'),
    lead_field13: text('lead_field13'),
    lead_field14: text('lead_field14'),
    lead_field15: text('lead_field15'),
    lead_field16: text('lead_field16'),
    lead_field17: text('lead_field17'),
    lead_field18: text('lead_field18'),
    lead_field19: text('lead_field19'),
    lead_field20: text('lead_field20'),
    chatbot_agentResetMemoryAt: 0,
    // Written by /chat/editLead with the lead fields.
    chatbot_disableUntil: typeof lead.chatbot_disableUntil === 'number' ? lead.chatbot_disableUntil : 0,
    // Written by the chatbot when a trigger starts or continues a conversation (unix seconds).
    chatbot_lastTriggerAt: typeof lead.chatbot_lastTriggerAt === 'number' ? lead.chatbot_lastTriggerAt : 0,
    chatbot_lastTrigger_id: typeof lead.chatbot_lastTrigger_id === 'string' ? lead.chatbot_lastTrigger_id : '',
  };
}
