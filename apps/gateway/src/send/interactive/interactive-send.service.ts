import { Inject, Injectable } from '@nestjs/common';
import {
  buildCarousel,
  buildLocationRequest,
  buildPaymentRequest,
  buildPixButton,
  isPixKeyType,
  type CarouselCard,
  type MenuButton,
  type PaymentItem,
} from '@gw/domain';
import type { ProtoAttachment } from '@gw/contracts';
import { MessageRepository } from '@gw/persistence';
import { ApiError } from '../../common/api-error';
import { normaliseMessageId } from '../../common/message-id';
import type { GatewayConfig } from '../../runtime/gateway-config';
import { GATEWAY_CONFIG } from '../../runtime/tokens';
import { chatTarget, SendContentTools } from '../send-content-tools';
import { SendRequester } from '../send-requester';
import { LOCATION_ERROR } from '../dto/send-common.dto';
import { INVALID_KEY_TYPE, SendCarouselDto, SendLocationButtonDto, SendMenuDto, SendPixButtonDto, SendRequestPaymentDto } from './interactive.dto';
import { buildMenuContent, built, CAROUSEL_CARDS_PATH, headerAttachment, INTERACTIVE_PATH, protoContent } from './menu-content';
import { orderOf } from './order';
import { paymentLinkRefusal } from './payment-link';
import type { SentMessageResponse } from '../../common/dto/message.response';
import type { RequestInstance } from '../../common/request-instance';

/**
 * The interactive send endpoints, one use case each: menus (buttons, list, poll, carousel), carousel,
 * PIX button, payment request and location request. Each builds a WAProto message relayed as is by
 * the worker; placeholders are resolved now (the built message carries the text, also when queued).
 */
@Injectable()
export class InteractiveSendService {
  constructor(
    private readonly tools: SendContentTools,
    private readonly requester: SendRequester,
    private readonly messages: MessageRepository,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  /** `POST /send/menu`. */
  async sendMenu(instance: RequestInstance, dto: SendMenuDto): Promise<SentMessageResponse> {
    const chatJid = chatTarget(dto.number);
    return this.requester.send(instance, dto, chatJid, await buildMenuContent(this.tools, instance, chatJid, dto));
  }

  /** `POST /send/carousel`: cards of text, a header file and buttons. */
  async sendCarousel(instance: RequestInstance, dto: SendCarouselDto): Promise<SentMessageResponse> {
    const chatJid = chatTarget(dto.number);
    const cards = dto.carousel.map((card, index) => carouselCard(card, index));
    const text = await this.tools.placeholders(instance, chatJid, dto.text);
    const message = built(() => buildCarousel(text, cards, dto.footerText ?? ''));
    const attachments: ProtoAttachment[] = [];
    for (const [index, raw] of dto.carousel.entries()) {
      const card = raw as Record<string, unknown>;
      const kind = (['image', 'video', 'document'] as const).find((key) => typeof card[key] === 'string' && (card[key] as string).trim());
      if (!kind) continue;
      const fileName = typeof card.filename === 'string' ? card.filename : '';
      attachments.push(await headerAttachment(this.tools, instance, card[kind] as string, kind, [...CAROUSEL_CARDS_PATH, index, 'header'], fileName));
    }
    const content = protoContent(message, attachments);
    return this.requester.send(instance, dto, chatJid, { content, sendFunction: 'SendCarouselMessage', payload: { ...dto, text } });
  }

  /** `POST /send/pix-button`: a PIX key the contact copies. */
  async sendPixButton(instance: RequestInstance, dto: SendPixButtonDto): Promise<SentMessageResponse> {
    const chatJid = chatTarget(dto.number);
    const pixType = (dto.pixType ?? '').trim().toUpperCase();
    if (!isPixKeyType(pixType)) throw ApiError.badRequest(INVALID_KEY_TYPE);
    const pixName = dto.pixName?.trim() || 'Pix';
    const text = dto.text === undefined ? undefined : await this.tools.placeholders(instance, chatJid, dto.text);
    const message = built(() => buildPixButton({ pixType, pixKey: dto.pixKey.trim(), pixName, text }));
    const payload = { ...dto, text, pixType, pixName };
    return this.requester.send(instance, dto, chatJid, { content: protoContent(message), sendFunction: 'SendPixButton', payload });
  }

  /** `POST /send/request-payment`: an amount (or a received order's total) payable by PIX, code, boleto or link. */
  async sendRequestPayment(instance: RequestInstance, dto: SendRequestPaymentDto): Promise<SentMessageResponse> {
    const chatJid = chatTarget(dto.number);
    const pixKey = dto.pixKey?.trim() ?? '';
    const pixCode = dto.pixCode?.trim() ?? '';
    const boletoCode = dto.boletoCode?.trim() ?? '';
    const paymentLink = dto.paymentLink?.trim() ?? '';
    if (!pixKey && !pixCode && !boletoCode && !paymentLink) throw ApiError.badRequest('Missing pixKey or pixCode');
    const pixType = (dto.pixType ?? 'EVP').trim().toUpperCase();
    if (!isPixKeyType(pixType)) throw ApiError.badRequest(INVALID_KEY_TYPE);
    const linkRefused = paymentLink ? paymentLinkRefusal(paymentLink, this.config.paymentLinkDomains) : '';
    if (linkRefused) throw ApiError.badRequest(linkRefused);
    const currency = (dto.currency ?? 'BRL').trim().toUpperCase();
    if (!/^[A-Z]{3}$/.test(currency)) throw ApiError.badRequest('currency must be a 3-letter ISO code (BRL)');

    let amount = dto.amount === undefined || dto.amount === null || dto.amount === '' ? null : Number(dto.amount);
    let items: PaymentItem[] = [];
    let orderId: string | undefined;
    let orderCurrency = currency;
    if (dto.orderMessageId) {
      const row = await this.messages.findOne(instance.id, normaliseMessageId(dto.orderMessageId));
      if (!row || row.messageType !== 'OrderMessage' || row.fromMe || (row.chatId !== chatJid && row.chatLid !== chatJid)) {
        throw ApiError.badRequest('orderMessageId: no OrderMessage received from this contact with that id');
      }
      const order = orderOf(row);
      orderId = order.orderId || undefined;
      orderCurrency = order.currency || currency;
      amount ??= order.total;
      items = [
        { name: dto.itemName || order.title || `Pedido ${order.orderId}`.trim(), amount: order.total, quantity: 1, retailerId: order.orderId || undefined },
      ];
      if (order.itemCount > 1) items[0].name = `${items[0].name} (${order.itemCount} itens)`;
    }
    if (amount === null) throw ApiError.badRequest('missing amount');
    if (!(amount > 0)) throw ApiError.badRequest('the order has no total: give amount');
    const total = amount;
    if (items.length === 0) items = [{ name: dto.itemName || dto.title || 'Pagamento', amount: total, quantity: 1 }];

    const text = await this.tools.placeholders(instance, chatJid, dto.text ?? '');
    const message = built(() =>
      buildPaymentRequest({
        amount: total,
        currency: orderCurrency,
        items,
        text,
        title: dto.title,
        footer: dto.footer,
        invoiceNumber: dto.invoiceNumber,
        pix: pixKey ? { key: pixKey, type: pixType, name: dto.pixName?.trim() || instance.profileName || 'Pix' } : undefined,
        pixCode: pixCode || undefined,
        boletoCode: boletoCode || undefined,
        paymentLink: paymentLink || undefined,
        additionalNote: dto.additionalNote,
        orderId,
      }),
    );
    // The boleto or invoice (fileUrl: URL or base64) rides in the flow's header as a document, uploaded by the worker.
    const attachments: ProtoAttachment[] = [];
    if (dto.fileUrl && dto.fileUrl.trim()) {
      const fileName = dto.fileName?.trim() || (/^https?:\/\//i.test(dto.fileUrl.trim()) ? fileNameOfUrl(dto.fileUrl.trim()) : '') || 'documento.pdf';
      attachments.push(await headerAttachment(this.tools, instance, dto.fileUrl, 'document', [...INTERACTIVE_PATH, 'header'], fileName));
    }
    const payload = { ...dto, text, amount: total, currency: orderCurrency, pixType };
    return this.requester.send(instance, dto, chatJid, { content: protoContent(message, attachments), sendFunction: 'SendRequestPayment', payload });
  }

  /** `POST /send/location-button`: asks the contact to share a location. */
  async sendLocationButton(instance: RequestInstance, dto: SendLocationButtonDto): Promise<SentMessageResponse> {
    if (!dto.number || !dto.text || !dto.text.trim()) throw ApiError.badRequest(LOCATION_ERROR);
    const chatJid = chatTarget(dto.number);
    const text = await this.tools.placeholders(instance, chatJid, dto.text);
    const message = built(() => buildLocationRequest(text));
    return this.requester.send(instance, dto, chatJid, { content: protoContent(message), sendFunction: 'SendLocationButton', payload: { ...dto, text } });
  }
}

const CAROUSEL_BUTTON_TYPES = ['REPLY', 'URL', 'CALL', 'COPY'];

/** The last path segment of a URL, decoded ('' when it has none). */
function fileNameOfUrl(url: string): string {
  try {
    return decodeURIComponent(new URL(url).pathname.split('/').pop() ?? '');
  } catch {
    return '';
  }
}
/** A `/send/carousel` card: `{text, image|video|document, filename, buttons:[{id, text, type}]}`. */
function carouselCard(raw: unknown, index: number): CarouselCard {
  const where = `carousel[${index}]`;
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw ApiError.badRequest(`${where} must be an object`);
  const card = raw as Record<string, unknown>;
  if (typeof card.text !== 'string' || !card.text.trim()) throw ApiError.badRequest(`${where}.text is required`);
  if (!Array.isArray(card.buttons) || card.buttons.length === 0) throw ApiError.badRequest(`${where}.buttons: give at least one button`);
  const buttons = card.buttons.map((entry, position): MenuButton => {
    const at = `${where}.buttons[${position}]`;
    if (!entry || typeof entry !== 'object') throw ApiError.badRequest(`${at} must be an object`);
    const button = entry as Record<string, unknown>;
    const text = typeof button.text === 'string' ? button.text.trim() : '';
    const id = typeof button.id === 'string' ? button.id.trim() : '';
    const type = typeof button.type === 'string' ? button.type.trim().toUpperCase() : 'REPLY';
    if (!text) throw ApiError.badRequest(`${at}.text is required`);
    if (!CAROUSEL_BUTTON_TYPES.includes(type)) throw ApiError.badRequest(`${at}.type must be one of ${CAROUSEL_BUTTON_TYPES.join(', ')}`);
    if (type !== 'REPLY' && !id)
      throw ApiError.badRequest(`${at}.id is required for a ${type} button (the ${type === 'URL' ? 'URL' : type === 'CALL' ? 'phone number' : 'code'})`);
    switch (type) {
      case 'URL':
        if (!/^https?:\/\//i.test(id)) throw ApiError.badRequest(`${at}.id must be an http(s) URL`);
        return { kind: 'url', text, url: id };
      case 'CALL':
        return { kind: 'call', text, phone: id };
      case 'COPY':
        return { kind: 'copy', text, code: id };
      default:
        return { kind: 'reply', text, id: id || text };
    }
  });
  const media = [card.image, card.video, card.document].find((value) => typeof value === 'string' && value.trim()) as string | undefined;
  const [text, ...footer] = card.text.split('\n');
  return { text: text.trim(), footer: footer.join('\n').trim(), media: media?.trim() ?? '', buttons };
}
