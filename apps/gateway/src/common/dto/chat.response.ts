import { ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';

/** A chat with its lead fields (`/chat/editLead`, `/chat/find`, webhooks' `chat`). */
@ApiSchema({ name: 'Chat', description: 'A chat of the instance (a contact, group or channel) with its CRM lead fields' })
export class ChatResponse {
  @ApiPropertyOptional({ description: "The chat's own id in the gateway (r + hex)" })
  id?: string;
  @ApiPropertyOptional({ description: "The chat's short id: `<owner>:<number>`" })
  wa_fastid?: string;
  @ApiPropertyOptional({ description: "The chat's WhatsApp id (a JID)" })
  wa_chatid?: string;
  @ApiPropertyOptional({ description: 'The chat as a LID, when known' })
  wa_chatlid?: string;
  @ApiPropertyOptional({ description: "The instance's phone number" })
  owner?: string;
  @ApiPropertyOptional({ description: 'The best name known: lead, address book or profile' })
  name?: string;
  @ApiPropertyOptional({ description: 'The phone number, formatted (e.g. +55 11 98888-8888); empty for a group' })
  phone?: string;
  @ApiPropertyOptional({ description: "The chat's picture URL" })
  image?: string;
  @ApiPropertyOptional({ description: "The chat's picture thumbnail URL" })
  imagePreview?: string;
  @ApiPropertyOptional({ description: 'The name the contact set on their WhatsApp profile (push name)' })
  wa_name?: string;
  @ApiPropertyOptional({ description: "The name the instance's address book saved for the number (empty when not saved)" })
  wa_contactName?: string;
  @ApiPropertyOptional({ description: 'The chat is archived' })
  wa_archived?: boolean;
  @ApiPropertyOptional({ description: 'The contact is blocked' })
  wa_isBlocked?: boolean;
  @ApiPropertyOptional({ description: 'The chat is a group' })
  wa_isGroup?: boolean;
  @ApiPropertyOptional({ description: 'The instance is an admin of the group' })
  wa_isGroup_admin?: boolean;
  @ApiPropertyOptional({ description: 'Only admins can send to the group (announcements)' })
  wa_isGroup_announce?: boolean;
  @ApiPropertyOptional({ description: 'The group is a community' })
  wa_isGroup_community?: boolean;
  @ApiPropertyOptional({ description: 'The instance is a member of the group' })
  wa_isGroup_member?: boolean;
  @ApiPropertyOptional({ description: 'The chat is pinned' })
  wa_isPinned?: boolean;
  @ApiPropertyOptional({ type: [String], description: "The ids of the chat's labels" })
  wa_label?: string[];
  @ApiPropertyOptional({ description: "The chat's notes, as the phone's app state syncs them" })
  wa_notes?: string;
  @ApiPropertyOptional({ type: 'integer', description: 'How long disappearing messages last, in seconds (0: off)' })
  wa_ephemeralExpiration?: number;
  @ApiPropertyOptional({ description: 'Who sent the last message' })
  wa_lastMessageSender?: string;
  @ApiPropertyOptional({ description: "The last message's text (or vote)" })
  wa_lastMessageTextVote?: string;
  @ApiPropertyOptional({ description: "The last message's type" })
  wa_lastMessageType?: string;
  @ApiPropertyOptional({ type: 'integer', description: 'When the last message was sent (Unix milliseconds)' })
  wa_lastMsgTimestamp?: number;
  @ApiPropertyOptional({ type: 'integer', description: 'Until when the chat is muted (0: not muted)' })
  wa_muteEndTime?: number;
  @ApiPropertyOptional({ type: 'integer', description: 'How many messages are unread' })
  wa_unreadCount?: number;
  @ApiPropertyOptional({ description: 'The groups in common, comma-separated, as `(group name)group id`' })
  common_groups?: string;
  @ApiPropertyOptional({ description: "The lead's name" })
  lead_name?: string;
  @ApiPropertyOptional({ description: "The lead's full name" })
  lead_fullName?: string;
  @ApiPropertyOptional({ description: "The lead's email" })
  lead_email?: string;
  @ApiPropertyOptional({ description: "The lead's identity document" })
  lead_personalid?: string;
  @ApiPropertyOptional({ description: "The lead's status" })
  lead_status?: string;
  @ApiPropertyOptional({ type: [String], description: "The lead's tags" })
  lead_tags?: string[];
  @ApiPropertyOptional({ description: 'Notes on the lead' })
  lead_notes?: string;
  @ApiPropertyOptional({ description: 'The lead has an open ticket' })
  lead_isTicketOpen?: boolean;
  @ApiPropertyOptional({ description: 'The id of the attendant the lead is assigned to' })
  lead_assignedAttendant_id?: string;
  @ApiPropertyOptional({ type: 'integer', description: "The lead's position on the kanban board" })
  lead_kanbanOrder?: number;
  @ApiPropertyOptional({ description: "Custom lead field 01 (its name is the instance's `fieldsMap` entry)" })
  lead_field01?: string;
  @ApiPropertyOptional({ description: "Custom lead field 02 (its name is the instance's `fieldsMap` entry)" })
  lead_field02?: string;
  @ApiPropertyOptional({ description: "Custom lead field 03 (its name is the instance's `fieldsMap` entry)" })
  lead_field03?: string;
  @ApiPropertyOptional({ description: "Custom lead field 04 (its name is the instance's `fieldsMap` entry)" })
  lead_field04?: string;
  @ApiPropertyOptional({ description: "Custom lead field 05 (its name is the instance's `fieldsMap` entry)" })
  lead_field05?: string;
  @ApiPropertyOptional({ description: "Custom lead field 06 (its name is the instance's `fieldsMap` entry)" })
  lead_field06?: string;
  @ApiPropertyOptional({ description: "Custom lead field 07 (its name is the instance's `fieldsMap` entry)" })
  lead_field07?: string;
  @ApiPropertyOptional({ description: "Custom lead field 08 (its name is the instance's `fieldsMap` entry)" })
  lead_field08?: string;
  @ApiPropertyOptional({ description: "Custom lead field 09 (its name is the instance's `fieldsMap` entry)" })
  lead_field09?: string;
  @ApiPropertyOptional({ description: "Custom lead field 10 (its name is the instance's `fieldsMap` entry)" })
  lead_field10?: string;
  @ApiPropertyOptional({ description: "Custom lead field 11 (its name is the instance's `fieldsMap` entry)" })
  lead_field11?: string;
  @ApiPropertyOptional({ description: "Custom lead field 12 (its name is the instance's `fieldsMap` entry)" })
  lead_field12?: string;
  @ApiPropertyOptional({ description: "Custom lead field 13 (its name is the instance's `fieldsMap` entry)" })
  lead_field13?: string;
  @ApiPropertyOptional({ description: "Custom lead field 14 (its name is the instance's `fieldsMap` entry)" })
  lead_field14?: string;
  @ApiPropertyOptional({ description: "Custom lead field 15 (its name is the instance's `fieldsMap` entry)" })
  lead_field15?: string;
  @ApiPropertyOptional({ description: "Custom lead field 16 (its name is the instance's `fieldsMap` entry)" })
  lead_field16?: string;
  @ApiPropertyOptional({ description: "Custom lead field 17 (its name is the instance's `fieldsMap` entry)" })
  lead_field17?: string;
  @ApiPropertyOptional({ description: "Custom lead field 18 (its name is the instance's `fieldsMap` entry)" })
  lead_field18?: string;
  @ApiPropertyOptional({ description: "Custom lead field 19 (its name is the instance's `fieldsMap` entry)" })
  lead_field19?: string;
  @ApiPropertyOptional({ description: "Custom lead field 20 (its name is the instance's `fieldsMap` entry)" })
  lead_field20?: string;
  @ApiPropertyOptional({ type: 'integer', description: "When the chatbot's AI agent memory was last reset for this chat (Unix seconds; 0: never)" })
  chatbot_agentResetMemoryAt?: number;
  @ApiPropertyOptional({ description: 'The id of the chatbot trigger that ran last in this chat' })
  chatbot_lastTrigger_id?: string;
  @ApiPropertyOptional({ type: 'integer', description: 'When a chatbot trigger last ran in this chat (Unix seconds)' })
  chatbot_lastTriggerAt?: number;
  @ApiPropertyOptional({ type: 'integer', description: 'Until when the chatbot stays off for this chat (Unix seconds; 0: on)' })
  chatbot_disableUntil?: number;
}

/** `/chat/find`'s `totalChatsStats`: counts over all the instance's chats. */
@ApiSchema({ name: 'ChatTotals', description: "Counts over all the instance's chats, whatever the filter" })
export class ChatTotals {
  @ApiPropertyOptional({ type: 'integer', description: 'How many chats the instance has' })
  total_chats?: number;
  @ApiPropertyOptional({ type: 'integer', description: 'How many have unread messages' })
  unread_chats?: number;
  @ApiPropertyOptional({ type: 'integer', description: 'How many are archived' })
  archived_chats?: number;
  @ApiPropertyOptional({ type: 'integer', description: 'How many are pinned' })
  pinned_chats?: number;
  @ApiPropertyOptional({ type: 'integer', description: 'How many are blocked' })
  blocked_chats?: number;
  @ApiPropertyOptional({ type: 'integer', description: 'How many are groups' })
  groups?: number;
  @ApiPropertyOptional({ type: 'integer', description: 'How many groups the instance is an admin of' })
  groups_admin?: number;
  @ApiPropertyOptional({ type: 'integer', description: 'How many groups are announcement-only' })
  groups_announce?: number;
  @ApiPropertyOptional({ type: 'integer', description: 'How many groups the instance is a member of' })
  groups_member?: number;
}

/** `/chat/find`'s paging. */
@ApiSchema({ name: 'ChatPagination', description: 'Where a page of chats sits among all those the filter matched' })
export class ChatPagination {
  @ApiPropertyOptional({ type: 'integer', description: 'How many chats the filter matched' })
  totalRecords?: number;
  @ApiPropertyOptional({ type: 'integer', description: 'The page size asked for' })
  limit?: number;
  @ApiPropertyOptional({ type: 'integer', description: 'How many matched chats the page skipped' })
  offset?: number;
  @ApiPropertyOptional({ type: 'integer', description: 'The page number (1 is the first)' })
  page?: number;
  @ApiPropertyOptional({ type: 'integer', description: 'The page size' })
  pageSize?: number;
  @ApiPropertyOptional({ type: 'integer', description: 'The number of the last page' })
  lastPage?: number;
}

/** `POST /chat/find`: a page of chats, counts over all the instance's chats, and the paging. */
@ApiSchema({ name: 'ChatPage', description: "A page of chats, counts over all the instance's chats, and the paging" })
export class ChatPageResponse {
  @ApiPropertyOptional({ type: () => ChatResponse, isArray: true, description: 'The chats of this page' })
  chats?: ChatResponse[];
  @ApiPropertyOptional({ type: () => ChatTotals, description: "Counts over all the instance's chats" })
  totalChatsStats?: ChatTotals;
  @ApiPropertyOptional({ type: () => ChatPagination, description: 'Where the page sits' })
  pagination?: ChatPagination;
}
