/**
 * Example bodies of the routes' answers (`@ApiReply(…, { example })`): the reference's examples where it
 * has one, else what the e2e specs assert, with made-up ids.
 */
const OWNER = '5511999999999';

export const INSTANCE_EXAMPLE = {
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

export const DISCONNECTED_INSTANCE_EXAMPLE = { ...INSTANCE_EXAMPLE, status: 'disconnected', profileName: '', profilePicUrl: '', owner: '', plataform: '' };

export const MESSAGE_EXAMPLE = {
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
};

export const WEBHOOK_EXAMPLE = {
  id: 'r1a2b3c4d5e6f7a',
  enabled: true,
  url: 'https://example.com/webhook',
  events: ['messages', 'messages_update'],
  excludeMessages: ['wasSentByApi'],
  addUrlEvents: false,
  addUrlTypesMessages: false,
  includeToken: false,
  created: '2024-01-01T12:00:00.000Z',
  updated: '2024-01-01T12:00:00.000Z',
};

export const WEBHOOK_ERROR_EXAMPLE = {
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

export const PROXY_EXAMPLE = {
  mode: 'custom',
  effective_mode: 'custom',
  fallback: { active: false, reason: '', since: 0 },
  proxy_url: 'http://***:***@proxy.example:8080',
  proxy_fallback: 'internal_proxy',
  managed: false,
  last_test_at: 0,
  last_test_error: '',
  validation_error: false,
};

export const LABEL_EXAMPLE = {
  id: `${OWNER}:10`,
  name: 'Cliente VIP',
  color: 2,
  colorHex: '#FF9DFF',
  labelid: '10',
  owner: OWNER,
  created: '2024-01-01T12:00:00.000Z',
  updated: '2024-01-01T12:00:00.000Z',
};

export const FOLDER_EXAMPLE = {
  id: 'f4a1b2c3d4e5f',
  info: 'Campanha Janeiro',
  status: 'done',
  scheduled_for: 1706198400000,
  delayMin: 10,
  delayMax: 30,
  log_delivered: 2,
  log_failed: 0,
  log_played: 0,
  log_read: 1,
  log_sucess: 2,
  log_total: 2,
  owner: OWNER,
  created: '2024-01-25T15:00:00.000Z',
  updated: '2024-01-25T15:01:00.000Z',
};
