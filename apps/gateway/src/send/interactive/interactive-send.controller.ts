import { Body, Controller, HttpCode, Inject, Post, UseGuards } from '@nestjs/common';
import {
  buildCarousel,
  buildLocationRequest,
  buildPaymentRequest,
  buildPixButton,
  isPixKeyType,
  type BuiltInteractive,
  type CarouselCard,
  type MenuButton,
  type PaymentItem,
  type PixKeyType,
} from '@gw/domain';
import type { ProtoAttachment } from '@gw/contracts';
import { MessageRepository, type InstanceEntity } from '@gw/persistence';
import type { DataSource } from 'typeorm';
import { ApiError } from '../../common/api-error';
import { CurrentInstance, InstanceGuard } from '../../common/auth.guards';
import { normaliseMessageId } from '../../common/message-id';
import type { GatewayConfig } from '../../runtime/gateway-config';
import { DATA_SOURCE, GATEWAY_CONFIG } from '../../runtime/tokens';
import type { SendCommonDto } from '../dto/send-common.dto';
import { SendService } from '../send.service';
import { SendCarouselDto, SendLocationButtonDto, SendMenuDto, SendPixButtonDto, SendRequestPaymentDto } from './interactive.dto';
import { buildMenuContent, built, CAROUSEL_CARDS_PATH, headerAttachment, INTERACTIVE_PATH, protoContent } from './menu-content';
import { orderOf } from './order';
import { paymentLinkRefusal } from './payment-link';

const INVALID_KEY_TYPE = 'Invalid keyType. Allowed: CPF, CNPJ, PHONE, EMAIL, EVP';
const LOCATION_ERROR = 'missing required fields or invalid coordinates';

/**
 * The interactive send endpoints: menus (buttons, list, poll, carousel), carousel, PIX button,
 * payment request and location request. Each builds a WAProto message relayed as is by the worker.
 */
@Controller()
@UseGuards(InstanceGuard)
export class InteractiveSendController {
  private readonly messages: MessageRepository;

  constructor(
    private readonly sends: SendService,
    @Inject(DATA_SOURCE) dataSource: DataSource,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {
    this.messages = new MessageRepository(dataSource);
  }

  private relay(
    instance: InstanceEntity,
    dto: SendCommonDto,
    chatJid: string,
    message: BuiltInteractive,
    sendFunction: string,
    payload: Record<string, unknown>,
    attachments: ProtoAttachment[] = [],
  ) {
    return this.sends.send(instance, dto, chatJid, protoContent(message, attachments), sendFunction, payload);
  }

  /** A header file given as a URL (fetched by the worker through the SSRF guard) or base64 (staged). */
  private attachment(
    instance: InstanceEntity,
    file: string,
    mediaType: ProtoAttachment['mediaType'],
    path: ProtoAttachment['path'],
    fileName = '',
  ): Promise<ProtoAttachment> {
    return headerAttachment(this.sends, instance, file, mediaType, path, fileName);
  }

  @Post('send/menu')
  @HttpCode(200)
  async menu(@CurrentInstance() instance: InstanceEntity, @Body() dto: SendMenuDto) {
    const chatJid = this.sends.target(dto.number);
    const menu = await buildMenuContent(this.sends, instance, chatJid, dto);
    return this.sends.send(instance, dto, chatJid, menu.content, menu.sendFunction, menu.payload);
  }

  @Post('send/carousel')
  @HttpCode(200)
  async carousel(@CurrentInstance() instance: InstanceEntity, @Body() dto: SendCarouselDto) {
    const chatJid = this.sends.target(dto.number);
    if (!dto.text || !dto.text.trim()) throw ApiError.badRequest('missing text');
    if (!dto.carousel || dto.carousel.length === 0) throw ApiError.badRequest('missing carousel: give at least one card');
    const cards = dto.carousel.map((card, index) => carouselCard(card, index));
    const text = await this.sends.placeholders(instance, chatJid, dto.text);
    const message = built(() => buildCarousel(text, cards, dto.footerText ?? ''));
    const attachments: ProtoAttachment[] = [];
    for (const [index, raw] of dto.carousel.entries()) {
      const card = raw as Record<string, unknown>;
      const kind = (['image', 'video', 'document'] as const).find((key) => typeof card[key] === 'string' && (card[key] as string).trim());
      if (kind)
        attachments.push(
          await this.attachment(
            instance,
            card[kind] as string,
            kind,
            [...CAROUSEL_CARDS_PATH, index, 'header'],
            typeof card.filename === 'string' ? card.filename : '',
          ),
        );
    }
    return this.relay(instance, dto, chatJid, message, 'SendCarouselMessage', { ...dto, text }, attachments);
  }

  @Post('send/pix-button')
  @HttpCode(200)
  async pixButton(@CurrentInstance() instance: InstanceEntity, @Body() dto: SendPixButtonDto) {
    const chatJid = this.sends.target(dto.number);
    const pixType = (dto.pixType ?? '').trim().toUpperCase();
    if (!isPixKeyType(pixType)) throw ApiError.badRequest(INVALID_KEY_TYPE);
    if (!dto.pixKey || !dto.pixKey.trim()) throw ApiError.badRequest('Missing pixKey or pixCode');
    const text = dto.text === undefined ? undefined : await this.sends.placeholders(instance, chatJid, dto.text);
    const message = built(() => buildPixButton({ pixType, pixKey: dto.pixKey!.trim(), pixName: dto.pixName?.trim() || 'Pix', text }));
    return this.relay(instance, dto, chatJid, message, 'SendPixButton', { ...dto, text, pixType, pixName: dto.pixName?.trim() || 'Pix' });
  }

  @Post('send/request-payment')
  @HttpCode(200)
  async requestPayment(@CurrentInstance() instance: InstanceEntity, @Body() dto: SendRequestPaymentDto) {
    const chatJid = this.sends.target(dto.number);
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
    if (amount !== null && (!Number.isFinite(amount) || amount <= 0)) throw ApiError.badRequest('amount must be a positive number');
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
    if (items.length === 0) items = [{ name: dto.itemName || dto.title || 'Pagamento', amount, quantity: 1 }];

    const text = await this.sends.placeholders(instance, chatJid, dto.text ?? '');
    const message = built(() =>
      buildPaymentRequest({
        amount: amount!,
        currency: orderCurrency,
        items,
        text,
        title: dto.title,
        footer: dto.footer,
        invoiceNumber: dto.invoiceNumber,
        pix: pixKey ? { key: pixKey, type: pixType as PixKeyType, name: dto.pixName?.trim() || instance.profileName || 'Pix' } : undefined,
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
      attachments.push(await this.attachment(instance, dto.fileUrl, 'document', [...INTERACTIVE_PATH, 'header'], fileName));
    }
    return this.relay(instance, dto, chatJid, message, 'SendRequestPayment', { ...dto, text, amount, currency: orderCurrency, pixType }, attachments);
  }

  @Post('send/location-button')
  @HttpCode(200)
  async locationButton(@CurrentInstance() instance: InstanceEntity, @Body() dto: SendLocationButtonDto) {
    if (!dto.number || !dto.text || !dto.text.trim()) throw ApiError.badRequest(LOCATION_ERROR);
    const chatJid = this.sends.target(dto.number);
    const text = await this.sends.placeholders(instance, chatJid, dto.text);
    const message = built(() => buildLocationRequest(text));
    return this.relay(instance, dto, chatJid, message, 'SendLocationButton', { ...dto, text });
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
