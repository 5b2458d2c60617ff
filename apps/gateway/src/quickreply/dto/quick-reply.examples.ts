/** Example bodies of the quick-reply routes (`@ApiReply`), as the e2e spec asserts them, with made-up ids. */
import type { QuickReplyEditedResponse, QuickReplyResponse } from './quick-reply.response';

export const QUICK_REPLY_EXAMPLE: QuickReplyResponse = {
  id: 'rb9da9c03637452',
  shortCut: 'saudacao1',
  aiDescription: '',
  onWhatsApp: false,
  message: { kind: 'text', text: 'Olá {{first_name}}! Como posso ajudar hoje?' },
  createdAt: '2026-11-24T12:00:00.000Z',
  updatedAt: '2026-11-24T12:00:00.000Z',
  type: 'text',
  text: 'Olá {{first_name}}! Como posso ajudar hoje?',
  file: '',
  docName: '',
  owner: '5511999999999',
  created: '2026-11-24T12:00:00.000Z',
  updated: '2026-11-24T12:00:00.000Z',
};

export const QUICK_REPLY_MEDIA_EXAMPLE: QuickReplyResponse = {
  ...QUICK_REPLY_EXAMPLE,
  id: 'r4f1c2a9e07d3b6',
  shortCut: 'catalogo',
  message: {
    kind: 'media',
    type: 'document',
    docName: 'catalogo.pdf',
    text: 'Nosso catálogo',
    file: 'http://localhost:8080/files/5f0c6b1e2d7a4c3b9e8f1a2b3c4d5e6f',
  },
  type: 'document',
  text: 'Nosso catálogo',
  file: 'http://localhost:8080/files/5f0c6b1e2d7a4c3b9e8f1a2b3c4d5e6f',
  docName: 'catalogo.pdf',
};

export const QUICK_REPLY_EDITED_EXAMPLE: QuickReplyEditedResponse = {
  message: 'Quick reply created',
  quickReply: QUICK_REPLY_EXAMPLE,
  quickReplies: [QUICK_REPLY_EXAMPLE, QUICK_REPLY_MEDIA_EXAMPLE],
};
