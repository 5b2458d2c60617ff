import { OmitType } from '@nestjs/swagger';
import { Equals, IsOptional, IsString, MaxLength } from 'class-validator';
import { inheritFieldSchemas } from '../../openapi/field-schemas';
import { OneOf, RequiredString } from '../../send/dto/field-rules';
import { SendContactDto, SendLocationDto, SendMediaDto, SendTextDto } from '../../send/dto/send-common.dto';
import { SendMenuDto, SendPixButtonDto } from '../../send/interactive/interactive.dto';
import { JSONSchema } from 'class-validator-jsonschema';

/** What a stored message leaves out of its send endpoint's body: the chat and the send-control fields. */
const NOT_STORED = ['number', 'replyid', 'mentions', 'delay', 'readchat', 'readmessages', 'async', 'forward', 'track_source', 'track_id'] as const;

export const QUICK_REPLY_KINDS = ['text', 'media', 'contact', 'location', 'menu', 'pix'] as const;
export type QuickReplyKind = (typeof QUICK_REPLY_KINDS)[number];

const KIND_MESSAGE = `message.kind must be one of ${QUICK_REPLY_KINDS.join(', ')}`;

/** The media types a quick reply stores (the seed's; /send/media's others are not kept). */
export const QUICK_REPLY_MEDIA_TYPES = ['image', 'video', 'document', 'audio', 'ptt', 'myaudio'] as const;
/** The menus a quick reply stores: a carousel cannot be one. */
export const QUICK_REPLY_MENU_TYPES = ['button', 'button_legacy', 'list', 'poll'] as const;

/** A `kind` none of the stored kinds has: the class-transformer discriminator falls back to this, which refuses it. */
export class QuickReplyMessageDto {
  @JSONSchema({ description: 'The kind of message: `text`, `media`, `contact`, `location`, `menu` or `pix`' })
  @OneOf(QUICK_REPLY_KINDS, KIND_MESSAGE)
  kind!: QuickReplyKind;
}

/** `kind: text`: /send/text's body (placeholders stay as written; they are resolved when a message is sent). */
export class QuickReplyTextDto extends OmitType(SendTextDto, NOT_STORED) {
  @JSONSchema({ description: '`text`: the message is stored as `/send/text` takes it' })
  @Equals('text', { message: KIND_MESSAGE })
  kind!: 'text';
}

/** `kind: media`: /send/media's type, file, text and docName. A URL is kept as sent; base64 is stored (limits in QuickReplyService). */
export class QuickReplyMediaDto extends OmitType(SendMediaDto, [...NOT_STORED, 'type', 'thumbnail', 'mimetype', 'viewOnce', 'caption'] as const) {
  @JSONSchema({ description: '`media`: the message is stored as `/send/media` takes it' })
  @Equals('media', { message: KIND_MESSAGE })
  kind!: 'media';
  @JSONSchema({ description: 'The media type: `image`, `video`, `document`, `audio`, `ptt` or `myaudio`' })
  @OneOf(QUICK_REPLY_MEDIA_TYPES, `type must be one of ${QUICK_REPLY_MEDIA_TYPES.join(', ')}`)
  type!: (typeof QUICK_REPLY_MEDIA_TYPES)[number];
}

/** `kind: contact`: /send/contact's body (fullName and phoneNumber required). */
export class QuickReplyContactDto extends OmitType(SendContactDto, NOT_STORED) {
  @JSONSchema({ description: '`contact`: the message is stored as `/send/contact` takes it' })
  @Equals('contact', { message: KIND_MESSAGE })
  kind!: 'contact';
}

/** `kind: location`: /send/location's body (coordinates checked as the send checks them). */
export class QuickReplyLocationDto extends OmitType(SendLocationDto, NOT_STORED) {
  @JSONSchema({ description: '`location`: the message is stored as `/send/location` takes it' })
  @Equals('location', { message: KIND_MESSAGE })
  kind!: 'location';
}

/** `kind: menu`: /send/menu's body but a carousel; choices must make a sendable menu, a button image must be a URL (QuickReplyService). */
export class QuickReplyMenuDto extends OmitType(SendMenuDto, [...NOT_STORED, 'type', 'imageButton'] as const) {
  @JSONSchema({ description: '`menu`: the message is stored as `/send/menu` takes it' })
  @Equals('menu', { message: KIND_MESSAGE })
  kind!: 'menu';
  @OneOf(QUICK_REPLY_MENU_TYPES, `type must be one of ${QUICK_REPLY_MENU_TYPES.join(', ')} (a carousel cannot be a quick reply)`)
  @JSONSchema({ description: 'The menu: `button`, `button_legacy`, `list` or `poll` (no carousel)' })
  type!: (typeof QUICK_REPLY_MENU_TYPES)[number];
  /** A button menu's header image: by URL only. */
  @JSONSchema({ description: "A button menu's header image, by URL only" })
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  imageButton?: string;
}

/** `kind: pix`: /send/pix-button's body (pixType and pixKey required). */
export class QuickReplyPixDto extends OmitType(SendPixButtonDto, [...NOT_STORED, 'pixType'] as const) {
  @JSONSchema({ description: '`pix`: the message is stored as `/send/pix-button` takes it' })
  @Equals('pix', { message: KIND_MESSAGE })
  kind!: 'pix';
  /** CPF, CNPJ, PHONE, EMAIL or EVP: checked by QuickReplyService as /send/pix-button checks it. */
  @JSONSchema({ description: "The PIX key's type: `CPF`, `CNPJ`, `PHONE`, `EMAIL` or `EVP`; required" })
  @RequiredString('missing pixType')
  @MaxLength(20)
  pixType!: string;
}

// Each kind documents the fields it keeps as its send endpoint does.
inheritFieldSchemas(QuickReplyTextDto, SendTextDto);
inheritFieldSchemas(QuickReplyMediaDto, SendMediaDto);
inheritFieldSchemas(QuickReplyContactDto, SendContactDto);
inheritFieldSchemas(QuickReplyLocationDto, SendLocationDto);
inheritFieldSchemas(QuickReplyMenuDto, SendMenuDto);
inheritFieldSchemas(QuickReplyPixDto, SendPixButtonDto);

export type QuickReplyMessage = QuickReplyTextDto | QuickReplyMediaDto | QuickReplyContactDto | QuickReplyLocationDto | QuickReplyMenuDto | QuickReplyPixDto;

/** Each kind's class, for class-transformer's discriminator on `kind`. */
export const QUICK_REPLY_MESSAGE_TYPES = [
  { value: QuickReplyTextDto, name: 'text' },
  { value: QuickReplyMediaDto, name: 'media' },
  { value: QuickReplyContactDto, name: 'contact' },
  { value: QuickReplyLocationDto, name: 'location' },
  { value: QuickReplyMenuDto, name: 'menu' },
  { value: QuickReplyPixDto, name: 'pix' },
];
