import type { SseEventResponse } from './sse.response';

/** A `messages` event as `GET /sse` streams it (the message shortened to its main fields). */
export const SSE_EVENT_EXAMPLE: SseEventResponse = {
  id: '1042',
  event: 'messages',
  data: {
    BaseUrl: 'https://gateway.example.com',
    EventType: 'messages',
    instanceName: 'minha-instancia',
    owner: '5511999999999',
    chatSource: 'updated',
    chat: { wa_chatid: '5511888888888@s.whatsapp.net', wa_chatlid: '', name: 'Maria' },
    message: {
      id: '5511999999999:3EB0C767D71D2B5C',
      messageid: '3EB0C767D71D2B5C',
      chatid: '5511888888888@s.whatsapp.net',
      messageType: 'Conversation',
      fromMe: false,
      isGroup: false,
      wasSentByApi: false,
      groupName: '',
      text: 'Olá!',
    },
  },
};
