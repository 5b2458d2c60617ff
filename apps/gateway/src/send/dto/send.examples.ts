import { MESSAGE_EXAMPLE } from '../../common/dto/common.examples';
import type { ReplyResponse } from '../../common/dto/reply.response';
import type { MessageResponse, SendOutcome, SentMessageResponse, StatusSentResponse } from '../../common/dto/message.response';

/**
 * The bodies the send routes answer, as the OpenAPI document shows them (the e2e specs' assertions, with
 * made-up ids), typed as their response classes.
 */
const OWNER = '5511999999999';
const CONTACT = '5511888888888';

/** What a send answers (the e2e specs' assertions): the Message record of what this instance sent, and `response`. */
function sent(fields: Partial<MessageResponse>, response: Partial<SendOutcome> = {}): SentMessageResponse {
  return {
    ...MESSAGE_EXAMPLE,
    id: 'r9ac43f9',
    messageid: '3EB08CE6DEC543F8CD1489',
    sender: `${OWNER}@s.whatsapp.net`,
    sender_pn: `${OWNER}@s.whatsapp.net`,
    senderName: '',
    fromMe: true,
    source: 'api',
    messageTimestamp: 1704067200000,
    status: 'Sent',
    wasSentByApi: true,
    ...fields,
    response: { status: 'success', message: 'Message sent successfully', ...response },
  };
}

/**
 * A send's two answers: sent now, and accepted with `async: true` (the same record `Queued`, sent later
 * by the async queue; GET /message/async follows it).
 */
function sendExamples(body: SentMessageResponse): Record<'sent' | 'queued', { summary: string; value: SentMessageResponse }> {
  return {
    sent: { summary: 'Sent', value: body },
    queued: {
      summary: 'async: true (accepted, sent later)',
      value: {
        ...body,
        status: 'Queued',
        sendPayload: { ...(body.sendPayload as object), async: true },
        response: { ...body.response, message: 'Message queued successfully' },
      },
    },
  };
}

export const SEND_TEXT_EXAMPLES = sendExamples(
  sent({
    messageType: 'ExtendedTextMessage',
    text: 'Olá! Como posso ajudar?',
    content: { text: 'Olá! Como posso ajudar?' },
    sendFunction: 'SendTextMessage',
    sendPayload: { number: CONTACT, text: 'Olá! Como posso ajudar?' },
    track_source: 'crm',
    track_id: 'T-1',
  }),
);

export const SEND_MEDIA_EXAMPLES = sendExamples(
  sent(
    {
      messageType: 'ImageMessage',
      type: 'media',
      mediaType: 'image',
      text: 'Veja esta foto!',
      content: { caption: 'Veja esta foto!', mimetype: 'image/jpeg', fileName: '', PTT: false, gifPlayback: false },
      sendFunction: 'SendMediaMessage',
      sendPayload: { number: CONTACT, type: 'image', file: 'https://exemplo.com/foto.jpg', text: 'Veja esta foto!' },
      fileURL: 'https://exemplo.com/foto.jpg',
    },
    { fileUrl: 'https://exemplo.com/foto.jpg' },
  ),
);

export const SEND_CONTACT_EXAMPLES = sendExamples(
  sent({
    messageType: 'ContactMessage',
    type: 'media',
    mediaType: 'vcard',
    text: 'João Silva',
    content: {
      displayName: 'João Silva',
      vcard: 'BEGIN:VCARD\nVERSION:3.0\nFN:João Silva\nN:João Silva;;;;\nTEL;type=CELL;type=VOICE;waid=5511999999999:+5511999999999\nEND:VCARD',
    },
    sendFunction: 'SendContactMessage',
    sendPayload: { number: CONTACT, fullName: 'João Silva', phoneNumber: '5511999999999' },
  }),
);

export const SEND_LOCATION_EXAMPLES = sendExamples(
  sent({
    messageType: 'LocationMessage',
    type: 'media',
    mediaType: 'location',
    text: 'Avenida Paulista',
    content: { degreesLatitude: -23.5505, degreesLongitude: -46.6333, name: 'Avenida Paulista', address: 'Av. Paulista, São Paulo' },
    sendFunction: 'SendLocationMessage',
    sendPayload: { number: CONTACT, latitude: -23.5505, longitude: -46.6333, name: 'Avenida Paulista', address: 'Av. Paulista, São Paulo' },
  }),
);

export const SEND_MENU_EXAMPLES = sendExamples(
  sent({
    messageType: 'PollCreationMessageV3',
    type: 'poll',
    text: 'Qual horário?',
    content: { name: 'Qual horário?', options: [{ optionName: 'Manhã' }, { optionName: 'Tarde' }], selectableOptionsCount: 1 },
    sendFunction: 'SendMenuMessage',
    sendPayload: { number: CONTACT, type: 'poll', text: 'Qual horário?', choices: ['Manhã', 'Tarde'] },
  }),
);

/** The interactive sends' record: an InteractiveMessage whose content is the built message. */
const interactive = (sendFunction: string, content: object, sendPayload: object) =>
  sendExamples(sent({ messageType: 'InteractiveMessage', type: 'media', mediaType: 'interactive', text: '', content, sendFunction, sendPayload }));

/** The content of an interactive message with one native-flow button (PIX, payment request, location request). */
const oneButton = (text: string, name: string, buttonParamsJson: string) => ({
  body: { text },
  nativeFlowMessage: { buttons: [{ name, buttonParamsJson }], messageVersion: 1, messageParamsJson: '' },
});

export const SEND_CAROUSEL_EXAMPLES = interactive(
  'SendCarouselMessage',
  {
    body: { text: 'Produtos' },
    carouselMessage: {
      cards: [
        {
          header: { title: '', hasMediaAttachment: false },
          body: { text: 'Camiseta' },
          nativeFlowMessage: { buttons: [{ name: 'quick_reply', buttonParamsJson: '{"display_text":"Comprar","id":"buy1"}' }], messageVersion: 1 },
        },
      ],
      messageVersion: 1,
    },
  },
  {
    number: CONTACT,
    text: 'Produtos',
    carousel: [{ text: 'Camiseta', image: 'https://exemplo.com/camiseta.jpg', buttons: [{ id: 'buy1', text: 'Comprar', type: 'REPLY' }] }],
  },
);

export const SEND_PIX_BUTTON_EXAMPLES = interactive(
  'SendPixButton',
  oneButton(
    '',
    'payment_info',
    '{"currency":"BRL","total_amount":{"value":0,"offset":100},"reference_id":"WST84F25JSN","type":"physical-goods","order":{"status":"pending","subtotal":{"value":0,"offset":100},"order_type":"ORDER","items":[{"name":"","amount":{"value":0,"offset":100},"quantity":0,"sale_amount":{"value":0,"offset":100}}]},"payment_settings":[{"type":"pix_static_code","pix_static_code":{"merchant_name":"Loja Exemplo","key":"123e4567-e89b-12d3-a456-426614174000","key_type":"EVP"}}],"share_payment_status":false}',
  ),
  { number: CONTACT, pixType: 'EVP', pixKey: '123e4567-e89b-12d3-a456-426614174000', pixName: 'Loja Exemplo' },
);

export const SEND_REQUEST_PAYMENT_EXAMPLES = interactive(
  'SendRequestPayment',
  oneButton(
    'Pedido 7',
    'review_and_pay',
    '{"currency":"BRL","total_amount":{"value":4990,"offset":100},"reference_id":"YJCM9Z73V8B","type":"physical-goods","payment_status":"pending","payment_type":"pix","order":{"status":"payment_requested","subtotal":{"value":4990,"offset":100},"order_type":"PAYMENT_REQUEST","items":[{"retailer_id":"item-1","name":"Pagamento","amount":{"value":4990,"offset":100},"quantity":1}]},"payment_settings":[{"type":"pix_static_code","pix_static_code":{"merchant_name":"minha-instancia","key":"123e4567-e89b-12d3-a456-426614174000","key_type":"EVP"}}],"share_payment_status":false}',
  ),
  { number: CONTACT, amount: 49.9, text: 'Pedido 7', pixKey: '123e4567-e89b-12d3-a456-426614174000', pixType: 'EVP', currency: 'BRL' },
);

export const SEND_LOCATION_BUTTON_EXAMPLES = interactive('SendLocationButton', oneButton('Compartilhe sua localização', 'send_location', ''), {
  number: CONTACT,
  text: 'Compartilhe sua localização',
});

const { response: STATUS_RESPONSE, ...STATUS_RECORD } = sent(
  {
    chatid: 'status@broadcast',
    messageType: 'ExtendedTextMessage',
    text: 'Novidades chegando!',
    content: { text: 'Novidades chegando!' },
    sendFunction: 'SendStatus',
    sendPayload: { type: 'text', text: 'Novidades chegando!', background_color: 7, font: 1, track_id: 'story-1' },
    track_id: 'story-1',
  },
  { message: 'Status sent successfully' },
);

export const STATUS_SENT_EXAMPLE: StatusSentResponse = {
  ...STATUS_RECORD,
  Id: STATUS_RECORD.messageid,
  debug: {
    status_privacy_type: 'contacts',
    audience_recipient_count: 3,
    total_contacts_in_store: 4,
    contacts_with_full_name: 3,
    contacts_with_push_name_only: 1,
    contacts_with_business_name_only: 0,
    used_default_privacy_fallback: false,
    explicit_recipients: false,
    discarded_recipient_count: 1,
    discarded_recipients: [{ input: '5511977777777@s.whatsapp.net', reason: 'not_on_whatsapp' }],
    selected_recipient_count: 2,
    partial_send: false,
  },
  response: STATUS_RESPONSE,
};

export const CHAT_PRESENCE_EXAMPLE: ReplyResponse = { response: 'Chat presence sent successfully' };
