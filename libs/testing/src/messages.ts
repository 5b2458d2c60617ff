import type { NewMessage } from '@gw/persistence';

/**
 * A `messages` row as a test writes it: every column filled with a plain outgoing text ("hi", sent
 * by the API), a random row id and message id, and the given fields on top. Tests name only the
 * fields they are about.
 */
export function newMessageFixture(instanceId: string, overrides: Partial<NewMessage> = {}): NewMessage {
  return {
    instanceId,
    id: `r${Math.random().toString(16).slice(2, 9)}`,
    messageId: `M${Math.random().toString(16).slice(2)}`,
    chatId: '5511999990000@s.whatsapp.net',
    chatLid: '',
    sender: '',
    senderPn: '',
    senderLid: '',
    senderName: '',
    isGroup: false,
    fromMe: true,
    messageType: 'Conversation',
    type: 'text',
    mediaType: '',
    source: 'api',
    messageTimestamp: Date.now(),
    status: 'Sent',
    text: 'hi',
    quoted: '',
    edited: '',
    reaction: '',
    vote: '',
    convertOptions: '',
    buttonOrListId: '',
    error: '',
    content: 'hi',
    raw: null,
    wasSentByApi: true,
    pinned: false,
    sendFunction: 'SendTextMessage',
    sendPayload: { text: 'hi' },
    fileUrl: '',
    sendFolderId: '',
    trackSource: '',
    trackId: '',
    ...overrides,
  };
}
