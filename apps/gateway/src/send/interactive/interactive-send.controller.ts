import { Body, Controller, HttpCode, Inject, Post, UseGuards } from '@nestjs/common';
import {
  buildButtonMenu,
  buildCarousel,
  buildListMenu,
  buildLocationRequest,
  buildPaymentRequest,
  buildPixButton,
  buildPoll,
  ChoiceError,
  InteractiveError,
  isPixKeyType,
  parseButtons,
  parseCarousel,
  parseList,
  parsePoll,
  type BuiltInteractive,
  type CarouselCard,
  type MenuButton,
  type PaymentItem,
  type PixKeyType,
} from '@gw/domain';
import type { ProtoAttachment } from '@gw/contracts';
import { MessageRepository, type InstanceEntity } from '@gw/persistence';
import { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { ApiError } from '../../common/api-error';
import { CurrentInstance, InstanceGuard } from '../../common/auth.guards';
import { DATA_SOURCE } from '../../runtime/tokens';
import type { SendCommonDto } from '../dto/send-common.dto';
import { SendService } from '../send.service';
import { MENU_TYPES, SendCarouselDto, SendLocationButtonDto, SendMenuDto, SendPixButtonDto, SendRequestPaymentDto } from './interactive.dto';
import { orderOf } from './order';

const INVALID_KEY_TYPE = 'Invalid keyType. Allowed: CPF, CNPJ, PHONE, EMAIL, EVP';
const LOCATION_ERROR = 'missing required fields or invalid coordinates';

/** Choice and builder errors are the client's: 400 with their wording. */
function built<T>(build: () => T): T {
  try {
    return build();
  } catch (error) {
    if (error instanceof ChoiceError || error instanceof InteractiveError) throw ApiError.badRequest(error.message);
    throw error;
  }
}

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
  ) {
    this.messages = new MessageRepository(dataSource);
  }

  private relay(instance: InstanceEntity, dto: SendCommonDto, chatJid: string, message: BuiltInteractive, sendFunction: string, payload: Record<string, unknown>, attachments: ProtoAttachment[] = []) {
    return this.sends.send(
      instance,
      dto,
      chatJid,
      { kind: 'proto', message: message.message, messageType: message.messageType, nodes: message.nodes as unknown as Array<Record<string, unknown>>, attachments },
      sendFunction,
      payload,
    );
  }

  /** A header file given as a URL (fetched by the worker through the SSRF guard) or base64 (staged). */
  private async attachment(instance: InstanceEntity, file: string, mediaType: ProtoAttachment['mediaType'], path: ProtoAttachment['path'], fileName = ''): Promise<ProtoAttachment> {
    const value = file.trim();
    const mimetype = /^data:([^;,]+)/.exec(value)?.[1] ?? '';
    const source = /^https?:\/\//i.test(value) ? { url: value } : { fileId: await this.sends.stageFile(instance, value, mimetype || HEADER_MIME[mediaType], fileName) };
    return { path, mediaType, source, mimetype, fileName };
  }

  @Post('send/menu')
  @HttpCode(200)
  async menu(@CurrentInstance() instance: InstanceEntity, @Body() dto: SendMenuDto) {
    const chatJid = this.sends.target(dto.number);
    if (!dto.type || !(MENU_TYPES as readonly string[]).includes(dto.type)) throw ApiError.badRequest(`type must be one of ${MENU_TYPES.join(', ')}`);
    if (!dto.text || !dto.text.trim()) throw ApiError.badRequest('missing text');
    if (!dto.choices || dto.choices.length === 0) throw ApiError.badRequest('missing choices');
    const choices = dto.choices;
    const text = await this.sends.placeholders(instance, chatJid, dto.text);
    const footer = dto.footerText ?? '';
    let message: BuiltInteractive;
    const attachments: ProtoAttachment[] = [];
    switch (dto.type) {
      case 'poll': {
        const options = built(() => parsePoll(choices));
        message = built(() => buildPoll(text, options, dto.selectableCount ?? 1, randomBytes(32).toString('base64')));
        break;
      }
      case 'list':
        message = built(() => buildListMenu(text, parseList(choices), dto.listButton ?? '', footer));
        break;
      case 'carousel': {
        const cards = built(() => parseCarousel(choices));
        message = built(() => buildCarousel(text, cards, footer));
        for (const [index, card] of cards.entries()) {
          if (card.media) attachments.push(await this.attachment(instance, card.media, 'image', [...CAROUSEL_CARDS_PATH, index, 'header']));
        }
        break;
      }
      case 'button_legacy':
        message = built(() => legacyButtons(text, parseButtons(choices), footer));
        break;
      default:
        message = built(() => buildButtonMenu(text, parseButtons(choices), footer));
        if (dto.imageButton && dto.imageButton.trim()) attachments.push(await this.attachment(instance, dto.imageButton, 'image', [...INTERACTIVE_PATH, 'header']));
    }
    return this.relay(instance, dto, chatJid, message, 'SendMenuMessage', { ...dto, text }, attachments);
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
      if (kind) attachments.push(await this.attachment(instance, card[kind] as string, kind, [...CAROUSEL_CARDS_PATH, index, 'header'], typeof card.filename === 'string' ? card.filename : ''));
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
    const message = built(() => buildPixButton({ pixType, pixKey: dto.pixKey!.trim(), pixName: dto.pixName?.trim() || 'Pix', text: dto.text }));
    return this.relay(instance, dto, chatJid, message, 'SendPixButton', { ...dto, pixType, pixName: dto.pixName?.trim() || 'Pix' });
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
    if (paymentLink && !/^https:\/\/[^\s/]+\.[^\s]+$/i.test(paymentLink)) throw ApiError.badRequest('paymentLink must be an https URL');
    const currency = (dto.currency ?? 'BRL').trim().toUpperCase();
    if (!/^[A-Z]{3}$/.test(currency)) throw ApiError.badRequest('currency must be a 3-letter ISO code (BRL)');

    let amount = dto.amount === undefined || dto.amount === null || dto.amount === '' ? null : Number(dto.amount);
    if (amount !== null && (!Number.isFinite(amount) || amount <= 0)) throw ApiError.badRequest('amount must be a positive number');
    let items: PaymentItem[] = [];
    let orderId: string | undefined;
    let orderCurrency = currency;
    if (dto.orderMessageId) {
      const row = await this.messages.findOne(instance.id, dto.orderMessageId);
      if (!row || row.messageType !== 'OrderMessage' || row.fromMe || (row.chatId !== chatJid && row.chatLid !== chatJid)) {
        throw ApiError.badRequest('orderMessageId: no OrderMessage received from this contact with that id');
      }
      const order = orderOf(row);
      orderId = order.orderId || undefined;
      orderCurrency = order.currency || currency;
      amount ??= order.total;
      items = [{ name: dto.itemName || order.title || `Pedido ${order.orderId}`.trim(), amount: order.total, quantity: 1, retailerId: order.orderId || undefined }];
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
/** Where built interactive messages keep their header and their cards (see libs/domain interactive builders). */
const INTERACTIVE_PATH = ['viewOnceMessage', 'message', 'interactiveMessage'];
const CAROUSEL_CARDS_PATH = [...INTERACTIVE_PATH, 'carouselMessage', 'cards'];
const HEADER_MIME = { image: 'image/jpeg', video: 'video/mp4', document: 'application/pdf' } as const;

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
    if (type !== 'REPLY' && !id) throw ApiError.badRequest(`${at}.id is required for a ${type} button (the ${type === 'URL' ? 'URL' : type === 'CALL' ? 'phone number' : 'code'})`);
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

/** `button_legacy`: the old buttonsMessage (reply buttons only). */
function legacyButtons(text: string, buttons: MenuButton[], footer: string): BuiltInteractive {
  const invalid = buttons.find((button) => button.kind !== 'reply');
  if (invalid) throw new InteractiveError(`button_legacy takes reply buttons only ("${invalid.text}" is a ${invalid.kind} button)`);
  const replies = buttons as Array<Extract<MenuButton, { kind: 'reply' }>>;
  return {
    message: {
      buttonsMessage: {
        contentText: text,
        ...(footer ? { footerText: footer } : {}),
        headerType: 1,
        buttons: replies.map((button) => ({ buttonId: button.id, buttonText: { displayText: button.text }, type: 1 })),
      },
    },
    messageType: 'ButtonsMessage',
    nodes: [],
  };
}
