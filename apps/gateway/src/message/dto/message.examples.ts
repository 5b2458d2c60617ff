import { MESSAGE_EXAMPLE } from '../../common/dto/common.examples';
import type {
  HistorySyncResponse,
  MarkReadResponse,
  MessageActionResponse,
  MessageDeletedResponse,
  MessageDownloadResponse,
  MessagePageResponse,
  MessagePinnedResponse,
} from './message.response';

/** The bodies the `/message/*` routes answer, as the OpenAPI document shows them. */
export const MESSAGE_DOWNLOAD_EXAMPLE: MessageDownloadResponse = {
  fileURL: 'https://gateway.example.com/files/f9a8b7c6d5e4f3a2',
  mimetype: 'audio/ogg; codecs=opus',
  base64Data: '',
  transcription: '',
};

export const MESSAGE_PAGE_EXAMPLE: MessagePageResponse = {
  returnedMessages: 1,
  messages: [MESSAGE_EXAMPLE],
  limit: 100,
  offset: 0,
  nextOffset: 1,
  hasMore: false,
};

export const MESSAGE_REACTED_EXAMPLE: MessageActionResponse = {
  id: '5511999999999:3EB0A1B2C3D4E5F6',
  messageid: '3EB0A1B2C3D4E5F6',
  content: { text: '👍' },
  messageTimestamp: 1704067200000,
  messageType: 'reaction',
  status: 'Pending',
  owner: '5511999999999',
  reaction: '3EB0C767D71D2B5C',
};

export const MESSAGE_EDITED_EXAMPLE: MessageActionResponse = {
  id: '5511999999999:3EB0C767D71D2B5C',
  messageid: '3EB0C767D71D2B5C',
  content: { text: 'Texto editado da mensagem' },
  messageTimestamp: 1704067200000,
  messageType: 'Conversation',
  status: 'Sent',
  owner: '5511999999999',
};

export const MESSAGE_DELETED_EXAMPLE: MessageDeletedResponse = { timestamp: 1704067200000, id: '5511999999999:3EB0C767D71D2B5C' };

export const MESSAGE_PINNED_EXAMPLE: MessagePinnedResponse = {
  ...MESSAGE_EXAMPLE,
  id: '5511999999999:3EB0F1E2D3C4B5A6',
  messageid: '3EB0F1E2D3C4B5A6',
  fromMe: true,
  messageType: 'PinInChatMessage',
  status: 'Pending',
  text: '',
  reaction: '📌',
  targetMessageID: '3EB0C767D71D2B5C',
  pinned: true,
};

export const HISTORY_SYNC_EXAMPLE: HistorySyncResponse = {
  success: true,
  mode: 'history',
  message: 'History sync request sent. Messages will be received as history sync events.',
  details: {
    request_id: 'req_01HQ5Z8K3M',
    chatid: '5511888888888@s.whatsapp.net',
    anchor_messageid: '3EB0C767D71D2B5C',
    anchor_timestamp: 1704067200000,
    count: 50,
  },
};

export const MARK_READ_EXAMPLE: MarkReadResponse = {
  results: [
    { message_id: '62AD1AD844E518180227BF68DA7ED710', status: 'success' },
    { message_id: 'ECB9DE48EB41F77BFA8491BFA8D6EF9B', status: 'error', error: 'Message not found' },
  ],
};
