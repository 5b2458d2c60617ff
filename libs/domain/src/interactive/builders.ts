import type { CarouselCard, ListSection, MenuButton } from '../menu-choices';

/**
 * WAProto messages for the interactive send endpoints, as plain JSON (what `proto.Message.fromObject`
 * takes: camelCase field names, bytes as base64 strings, enums as numbers), plus the stanza child
 * nodes WhatsApp needs to render them. Baileys has no helper for any of these (baileys-notes A4).
 */
export type ProtoJson = Record<string, unknown>;

/** A binary node as JSON (tag, attrs, optional children). Strings only: no bytes travel in these. */
export interface NodeJson {
  tag: string;
  attrs: Record<string, string>;
  content?: NodeJson[];
}

export interface BuiltInteractive {
  message: ProtoJson;
  /** `messageType` of the record (the proto name of the content field). */
  messageType: string;
  nodes: NodeJson[];
}

export class InteractiveError extends Error {}

export interface NativeFlowButton {
  name: string;
  buttonParamsJson: string;
}

export const PIX_KEY_TYPES = ['CPF', 'CNPJ', 'PHONE', 'EMAIL', 'EVP'] as const;
export type PixKeyType = (typeof PIX_KEY_TYPES)[number];

/** A native flow button of a parsed menu choice: quick_reply, cta_url, cta_call or cta_copy. */
export function nativeFlowButton(button: MenuButton): NativeFlowButton {
  switch (button.kind) {
    case 'reply':
      return { name: 'quick_reply', buttonParamsJson: JSON.stringify({ display_text: button.text, id: button.id }) };
    case 'url':
      return { name: 'cta_url', buttonParamsJson: JSON.stringify({ display_text: button.text, url: button.url, merchant_url: button.url }) };
    case 'call':
      return { name: 'cta_call', buttonParamsJson: JSON.stringify({ display_text: button.text, phone_number: button.phone }) };
    case 'copy':
      return { name: 'cta_copy', buttonParamsJson: JSON.stringify({ display_text: button.text, id: button.code, copy_code: button.code }) };
  }
}

/**
 * `<biz>` for native flow messages: without it the server accepts the message but phones render
 * nothing (third-party reports, baileys-notes A4). `name` is `mixed` unless the flow is one kind only.
 *
 * The references conflict (docs/protocol.md, "interactive biz nodes"). Payment buttons take the attribute form
 * `<biz native_flow_name=…/>` (`review_and_pay` is named `order_details`): three independent Baileys forks send it,
 * and WhatsApp Web's incoming-message parser models `native_flow_name` as an attribute of `<biz>`; only one client
 * (whatsapp-rust) asserts the interactive child form for them. Every other flow (`send_location` included) keeps
 * `<interactive type=native_flow v=1><native_flow v=9 name/>`, the form those forks agree on. whatsmeow sends no
 * `<biz>` for native flows at all.
 */
export function nativeFlowNodes(flowName = 'mixed'): NodeJson[] {
  const paymentName = PAYMENT_FLOW_NAMES[flowName];
  if (paymentName) return [{ tag: 'biz', attrs: { native_flow_name: paymentName } }];
  return [
    {
      tag: 'biz',
      attrs: {},
      content: [{ tag: 'interactive', attrs: { type: 'native_flow', v: '1' }, content: [{ tag: 'native_flow', attrs: { v: '9', name: flowName } }] }],
    },
  ];
}

/** The `native_flow_name` of a payment flow's `<biz>`: the button's name, or the order it shows. */
const PAYMENT_FLOW_NAMES: Record<string, string | undefined> = { payment_info: 'payment_info', review_and_pay: 'order_details' };

/**
 * `<biz><list type=product_list v=2/>` for a single-select list. whatsmeow sends `type=single_select` (send.go:1013-1027,
 * the lower-cased ListType); the forks send `product_list`, which is reported to be the form current phones render.
 * The server accepts both; nothing public settles it, so the rendering-reported form is kept.
 */
export function listNodes(): NodeJson[] {
  return [{ tag: 'biz', attrs: {}, content: [{ tag: 'list', attrs: { type: 'product_list', v: '2' } }] }];
}

export function pollCreationNodes(): NodeJson[] {
  return [{ tag: 'meta', attrs: { polltype: 'creation' } }];
}

export function pollVoteNodes(): NodeJson[] {
  return [{ tag: 'meta', attrs: { polltype: 'vote' } }];
}

/** Interactive messages travel inside `viewOnceMessage`, with the device list context WA clients add. */
function viewOnce(inner: ProtoJson): ProtoJson {
  return { viewOnceMessage: { message: { messageContextInfo: { deviceListMetadata: {}, deviceListMetadataVersion: 2 }, ...inner } } };
}

function interactive(parts: { text: string; footer?: string; title?: string }, body: ProtoJson): ProtoJson {
  return {
    ...(parts.title ? { header: { title: parts.title, hasMediaAttachment: false } } : {}),
    body: { text: parts.text },
    ...(parts.footer ? { footer: { text: parts.footer } } : {}),
    ...body,
  };
}

function flowNameOf(buttons: NativeFlowButton[]): string {
  const names = new Set(buttons.map((button) => button.name));
  return names.size === 1 && ['payment_info', 'review_and_pay', 'send_location'].includes(buttons[0].name) ? buttons[0].name : 'mixed';
}

/** A native flow interactive message with the given buttons. */
export function buildNativeFlow(
  parts: { text: string; footer?: string; title?: string },
  buttons: NativeFlowButton[],
  messageParamsJson = '',
): BuiltInteractive {
  if (buttons.length === 0) throw new InteractiveError('a button menu needs at least 1 button');
  const message = viewOnce({
    interactiveMessage: interactive(parts, { nativeFlowMessage: { buttons, messageParamsJson, messageVersion: 1 } }),
  });
  return { message, messageType: 'InteractiveMessage', nodes: nativeFlowNodes(flowNameOf(buttons)) };
}

/** `/send/menu` type button: native flow quick_reply / cta_url / cta_call / cta_copy. */
export function buildButtonMenu(text: string, buttons: MenuButton[], footer = ''): BuiltInteractive {
  return buildNativeFlow({ text, footer }, buttons.map(nativeFlowButton));
}

/** `/send/menu` type list: a single-select listMessage. */
export function buildListMenu(text: string, sections: ListSection[], buttonText = '', footer = ''): BuiltInteractive {
  const rows = sections.reduce((count, section) => count + section.rows.length, 0);
  if (rows === 0) throw new InteractiveError('a list needs at least one item (a [section] alone does not count)');
  const listMessage = {
    description: text,
    buttonText: buttonText || 'Menu',
    listType: 1,
    sections: sections.map((section) => ({
      title: section.title,
      rows: section.rows.map((row) => ({ title: row.title, description: row.description, rowId: row.id })),
    })),
    ...(footer ? { footerText: footer } : {}),
  };
  return { message: { listMessage }, messageType: 'ListMessage', nodes: listNodes() };
}

/**
 * `/send/menu` type poll. `secretBase64` is the 32-byte message secret every voter encrypts with; it
 * goes in `messageContextInfo.messageSecret` (as WA clients send it) and in `encKey`, so that the stored
 * content alone is enough to vote on the poll later.
 */
export function buildPoll(name: string, options: string[], selectableCount: number, secretBase64: string): BuiltInteractive {
  if (options.length < 2) throw new InteractiveError('a poll needs at least 2 options');
  if (!Number.isInteger(selectableCount) || selectableCount < 0 || selectableCount > options.length) {
    throw new InteractiveError(`selectableCount must be between 0 and ${options.length}`);
  }
  if (Buffer.from(secretBase64, 'base64').length !== 32) throw new InteractiveError('a poll secret is 32 bytes');
  const field = selectableCount === 1 ? 'pollCreationMessageV3' : 'pollCreationMessage';
  const poll = { encKey: secretBase64, name, options: options.map((optionName) => ({ optionName })), selectableOptionsCount: selectableCount };
  return {
    message: { messageContextInfo: { messageSecret: secretBase64 }, [field]: poll },
    messageType: field[0].toUpperCase() + field.slice(1),
    nodes: pollCreationNodes(),
  };
}

/** A carousel card as sent: text, footer and native flow buttons (a card image is uploaded and put in its header by the worker). */
export function buildCarousel(text: string, cards: CarouselCard[], footer = ''): BuiltInteractive {
  if (cards.length === 0) throw new InteractiveError('a carousel needs at least one card');
  const built = cards.map((card, index) => {
    if (card.buttons.length === 0) throw new InteractiveError(`carousel card ${index + 1} needs at least 1 button`);
    return interactive(
      { text: card.text, footer: card.footer },
      { header: { title: '', hasMediaAttachment: false }, nativeFlowMessage: { buttons: card.buttons.map(nativeFlowButton), messageVersion: 1 } },
    );
  });
  const message = viewOnce({
    interactiveMessage: interactive({ text, footer }, { carouselMessage: { cards: built, messageVersion: 1 } }),
  });
  return { message, messageType: 'InteractiveMessage', nodes: nativeFlowNodes('mixed') };
}

/** `/send/location-button`: one native flow `send_location` button. */
export function buildLocationRequest(text: string): BuiltInteractive {
  if (!text.trim()) throw new InteractiveError('missing required fields or invalid coordinates');
  return buildNativeFlow({ text }, [{ name: 'send_location', buttonParamsJson: '' }]);
}

export function isPixKeyType(value: string): value is PixKeyType {
  return (PIX_KEY_TYPES as readonly string[]).includes(value);
}

/** Money as WA's native flows carry it: integer value with an offset (cents: offset 100). */
export function money(amount: number): { value: number; offset: number } {
  return { value: Math.round(amount * 100), offset: 100 };
}

function referenceId(): string {
  const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
  let result = '';
  for (let i = 0; i < 11; i++) result += alphabet[Math.floor(Math.random() * alphabet.length)];
  return result;
}

/** `/send/pix-button`: a native flow `payment_info` button with a static PIX key. */
export function buildPixButton(input: { pixType: PixKeyType; pixKey: string; pixName: string; text?: string }): BuiltInteractive {
  const params = {
    currency: 'BRL',
    total_amount: { value: 0, offset: 100 },
    reference_id: referenceId(),
    type: 'physical-goods',
    order: {
      status: 'pending',
      subtotal: { value: 0, offset: 100 },
      order_type: 'ORDER',
      items: [{ name: '', amount: { value: 0, offset: 100 }, quantity: 0, sale_amount: { value: 0, offset: 100 } }],
    },
    payment_settings: [{ type: 'pix_static_code', pix_static_code: { merchant_name: input.pixName, key: input.pixKey, key_type: input.pixType } }],
    share_payment_status: false,
  };
  return buildNativeFlow({ text: input.text ?? '' }, [{ name: 'payment_info', buttonParamsJson: JSON.stringify(params) }]);
}

export interface PaymentItem {
  name: string;
  /** Unit price, in the currency's units. */
  amount: number;
  quantity: number;
  retailerId?: string;
}

export interface PaymentRequestInput {
  amount: number;
  currency: string;
  items: PaymentItem[];
  text: string;
  title?: string;
  footer?: string;
  invoiceNumber?: string;
  /** Static PIX. */
  pix?: { key: string; type: PixKeyType; name: string };
  /** Dynamic PIX ("copia e cola" code). */
  pixCode?: string;
  boletoCode?: string;
  paymentLink?: string;
  additionalNote?: string;
  /** Id of the order this request charges (orderMessageId). */
  orderId?: string;
}

/** `/send/request-payment`: the native flow `review_and_pay` ("Revisar e pagar") button. */
export function buildPaymentRequest(input: PaymentRequestInput): BuiltInteractive {
  const settings: Array<Record<string, unknown>> = [];
  if (input.pix) settings.push({ type: 'pix_static_code', pix_static_code: { merchant_name: input.pix.name, key: input.pix.key, key_type: input.pix.type } });
  if (input.pixCode) settings.push({ type: 'pix_dynamic_code', pix_dynamic_code: { code: input.pixCode } });
  if (input.boletoCode) settings.push({ type: 'boleto', boleto: { digitable_line: input.boletoCode } });
  if (input.paymentLink) settings.push({ type: 'payment_link', payment_link: { uri: input.paymentLink } });
  if (settings.length === 0) throw new InteractiveError('Missing pixKey or pixCode');
  if (!Number.isFinite(input.amount) || input.amount <= 0) throw new InteractiveError('amount must be a positive number');
  const params = {
    currency: input.currency,
    total_amount: money(input.amount),
    reference_id: input.invoiceNumber || referenceId(),
    type: 'physical-goods',
    payment_status: 'pending',
    payment_type: input.pix || input.pixCode ? 'pix' : input.boletoCode ? 'boleto' : 'payment_link',
    order: {
      status: 'payment_requested',
      subtotal: money(input.amount),
      order_type: input.orderId ? 'ORDER' : 'PAYMENT_REQUEST',
      ...(input.orderId ? { order_id: input.orderId } : {}),
      items: input.items.map((item, index) => ({
        retailer_id: item.retailerId || `item-${index + 1}`,
        name: item.name,
        amount: money(item.amount),
        quantity: item.quantity,
      })),
    },
    ...(input.additionalNote ? { additional_note: input.additionalNote } : {}),
    payment_settings: settings,
    share_payment_status: false,
  };
  return buildNativeFlow({ text: input.text, title: input.title, footer: input.footer }, [
    { name: 'review_and_pay', buttonParamsJson: JSON.stringify(params) },
  ]);
}
