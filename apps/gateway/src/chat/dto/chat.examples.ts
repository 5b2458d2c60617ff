import type { ChatPageResponse } from '../../common/dto/chat.response';
import { CHAT_EXAMPLE, CHAT_TOTALS_EXAMPLE } from '../../common/dto/common.examples';
import type { ReplyResponse } from '../../common/dto/reply.response';
import type {
  BlocklistResponse,
  ChatDeletedResponse,
  ChatEphemeralResponse,
  ChatLabelsResponse,
  ChatNotesEditedResponse,
  ChatNotesResponse,
} from './chat.response';

/** The bodies the `/chat/*` routes answer, as the OpenAPI document shows them. */
const NOTE = 'Cliente prefere contato no período da tarde';
const BLOCKED = ['5511999999999@s.whatsapp.net', '5511888888888@s.whatsapp.net'];

export const CHAT_LABELS_EXAMPLE: ChatLabelsResponse = {
  response: 'Labels updated successfully',
  editions: ['Added label 10 to chat', 'Removed label 5 from chat'],
};

export const CHAT_BLOCKED_EXAMPLE: BlocklistResponse = { response: 'Blocked successfully', blockList: BLOCKED };

export const BLOCKLIST_EXAMPLE: BlocklistResponse = { blockList: BLOCKED };

export const CHAT_PINNED_EXAMPLE: ReplyResponse = { response: 'Chat pinned' };
export const CHAT_ARCHIVED_EXAMPLE: ReplyResponse = { response: 'Chat updated successfully' };
export const CHAT_READ_EXAMPLE: ReplyResponse = { response: 'Chat read status updated successfully' };
export const CHAT_MUTED_EXAMPLE: ReplyResponse = { response: 'Chat mute settings updated successfully' };

export const CHAT_EPHEMERAL_EXAMPLE: ChatEphemeralResponse = {
  response: 'Ephemeral timer updated successfully',
  chat: { ...CHAT_EXAMPLE, wa_ephemeralExpiration: 604800 },
  ephemeral: { enabled: true, seconds: 604800, label: '7d' },
};

export const CHAT_NOTES_EXAMPLE: ChatNotesResponse = { chat: { ...CHAT_EXAMPLE, wa_notes: NOTE }, wa_notes: NOTE, source: 'local' };

export const CHAT_NOTES_REFRESHED_EXAMPLE: ChatNotesResponse = { ...CHAT_NOTES_EXAMPLE, source: 'appstate_reload' };

export const CHAT_NOTES_EDITED_EXAMPLE: ChatNotesEditedResponse = {
  response: 'Chat notes updated',
  chat: { ...CHAT_EXAMPLE, wa_notes: NOTE },
  wa_notes: NOTE,
  source: 'api',
};

export const CHAT_DELETED_EXAMPLE: ChatDeletedResponse = {
  response: 'Chat deletion process completed',
  actions: ['Chat deleted from WhatsApp', 'Chat deleted from database', 'Messages associated with chat deleted from database: 42'],
  errors: [],
};

export const CHAT_PAGE_EXAMPLE: ChatPageResponse = {
  chats: [CHAT_EXAMPLE],
  totalChatsStats: CHAT_TOTALS_EXAMPLE,
  pagination: { totalRecords: 1, limit: 20, offset: 0 },
};
