import type { ChatResponse, ChatTotals } from './chat.response';
import type { InstanceResponse } from './instance.response';
import type { MessageResponse } from './message.response';
import type { WebhookErrorResponse } from './webhook-error.response';

/**
 * Example bodies of the shared answers (the reference's examples where it has one, else what the e2e
 * specs assert, with made-up ids), typed as their response classes.
 */
const OWNER = '5511999999999';

export const INSTANCE_EXAMPLE: InstanceResponse = {
  id: 'r183e2ef9597845',
  token: '123e4567-e89b-12d3-a456-426614174000',
  status: 'connected',
  paircode: '',
  qrcode: '',
  name: 'minha-instancia',
  profileName: 'Meu WhatsApp',
  profilePicUrl: 'https://example.com/profile.jpg',
  isBusiness: false,
  plataform: 'android',
  systemName: 'uazapi',
  owner: OWNER,
  lastDisconnect: '',
  lastDisconnectReason: '',
  adminField01: '',
  adminField02: '',
  openai_apikey: '',
  chatbot_enabled: false,
  chatbot_ignoreGroups: true,
  chatbot_stopConversation: '',
  chatbot_stopMinutes: 0,
  chatbot_stopWhenYouSendMsg: 0,
  fieldsMap: {},
  msg_delay_min: 0,
  msg_delay_max: 0,
  currentPresence: 'available',
  currentTime: '2024-01-25T12:00:00.000Z',
  created: '2024-01-01T12:00:00.000Z',
  updated: '2024-01-01T12:30:00.000Z',
};

export const DISCONNECTED_INSTANCE_EXAMPLE: InstanceResponse = {
  ...INSTANCE_EXAMPLE,
  status: 'disconnected',
  profileName: '',
  profilePicUrl: '',
  owner: '',
  plataform: '',
};

export const MESSAGE_EXAMPLE: MessageResponse = {
  id: `${OWNER}:3EB0C767D71D2B5C`,
  messageid: '3EB0C767D71D2B5C',
  chatid: '5511888888888@s.whatsapp.net',
  sender: '5511888888888@s.whatsapp.net',
  senderName: 'Maria',
  isGroup: false,
  fromMe: false,
  messageType: 'Conversation',
  source: 'android',
  messageTimestamp: 1704067200000,
  status: 'Delivered',
  text: 'Olá!',
  quoted: '',
  edited: '',
  reaction: '',
  vote: '',
  convertOptions: '',
  buttonOrListid: '',
  owner: OWNER,
  error: '',
  content: { text: 'Olá!' },
  wasSentByApi: false,
  sendFunction: '',
  sendPayload: null,
  fileURL: '',
  send_folder_id: '',
  track_source: '',
  track_id: '',
  sender_pn: '5511888888888@s.whatsapp.net',
  sender_lid: '',
  ai_metadata: {},
  chatlid: '',
  type: 'text',
  mediaType: '',
  pinned: false,
};

export const WEBHOOK_ERROR_EXAMPLE: WebhookErrorResponse = {
  created: '2026-03-23T15:04:05.000Z',
  url: 'https://example.com/webhook/messages',
  type: 'local',
  event: 'messages',
  message_type: 'text',
  status_code: 502,
  attempts: 3,
  error: 'webhook returned non-success status: 502 Bad Gateway',
  payload: { EventType: 'messages', instanceName: 'minha-instancia' },
};

const LEAD_CUSTOM_FIELDS_EXAMPLE = Object.fromEntries(Array.from({ length: 20 }, (_, index) => [`lead_field${String(index + 1).padStart(2, '0')}`, '']));

/** `POST /chat/editLead` (and each of `/chat/find`'s chats): the Chat record with its lead fields, as the e2e specs assert it. */
export const CHAT_EXAMPLE: ChatResponse = {
  id: 'r5f2a9c1d04b7e3',
  wa_fastid: `${OWNER}:5511888888888`,
  wa_chatid: '5511888888888@s.whatsapp.net',
  wa_chatlid: '',
  owner: OWNER,
  name: 'Maria',
  phone: '+55 11 8888-88888',
  image: '',
  imagePreview: '',
  wa_name: 'Maria',
  wa_contactName: '',
  wa_archived: false,
  wa_isBlocked: false,
  wa_isGroup: false,
  wa_isGroup_admin: false,
  wa_isGroup_announce: false,
  wa_isGroup_community: false,
  wa_isGroup_member: false,
  wa_isPinned: false,
  wa_label: [],
  wa_notes: '',
  wa_ephemeralExpiration: 0,
  wa_lastMessageSender: '',
  wa_lastMessageTextVote: '',
  wa_lastMessageType: '',
  wa_lastMsgTimestamp: 0,
  wa_muteEndTime: 0,
  wa_unreadCount: 0,
  lead_name: 'João Silva',
  lead_fullName: 'João Silva Pereira',
  lead_email: 'joao@exemplo.com',
  lead_personalid: '123.456.789-00',
  lead_status: 'qualificado',
  lead_notes: 'Cliente interessado em plano premium',
  lead_assignedAttendant_id: 'att_123456',
  lead_tags: ['vip', 'suporte'],
  lead_isTicketOpen: true,
  lead_kanbanOrder: 1000,
  ...LEAD_CUSTOM_FIELDS_EXAMPLE,
  lead_field01: 'Plano premium',
  chatbot_agentResetMemoryAt: 0,
  chatbot_disableUntil: 1735686000,
  chatbot_lastTriggerAt: 0,
  chatbot_lastTrigger_id: '',
};

/** `/chat/find`'s `totalChatsStats`: counts over all the instance's chats. */
export const CHAT_TOTALS_EXAMPLE: ChatTotals = {
  total_chats: 42,
  unread_chats: 5,
  archived_chats: 3,
  pinned_chats: 1,
  blocked_chats: 0,
  groups: 7,
  groups_admin: 2,
  groups_announce: 1,
  groups_member: 7,
};
