import { IsBoolean, IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { ChatNumber, OneOf, RequiredString, UrlOrBase64 } from './field-rules';
import { JSONSchema } from 'class-validator-jsonschema';

/**
 * The fields every send endpoint takes (spec "Common optional fields of send endpoints"). Each
 * endpoint declares `number` first, with the message it answers when the number is missing.
 */
export class SendCommonDto {
  @JSONSchema({ description: 'Milliseconds to wait before sending, showing "typing…" (or "recording audio…") in the chat meanwhile; at most 300000' })
  @IsOptional()
  @IsInt({ message: 'delay must be an integer (milliseconds)' })
  @Min(0)
  @Max(300_000)
  delay?: number;
  @JSONSchema({ description: 'Mark the chat read after sending' })
  @IsOptional()
  @IsBoolean()
  readchat?: boolean;
  @JSONSchema({ description: 'Mark the last received messages of the chat read after sending' })
  @IsOptional()
  @IsBoolean()
  readmessages?: boolean;
  @JSONSchema({ description: 'The id of the message this one answers (quoted)' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  replyid?: string;
  @JSONSchema({ description: 'Numbers to mention, separated by commas (`all` mentions every participant of a group)' })
  @IsOptional()
  @IsString()
  @MaxLength(20_000)
  mentions?: string;
  @JSONSchema({ description: 'Mark the message as forwarded' })
  @IsOptional()
  @IsBoolean()
  forward?: boolean;
  @JSONSchema({ description: 'Where the message comes from, kept with it for your tracking (e.g. `chatwoot`); `/message/find` filters on it' })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  track_source?: string;
  @JSONSchema({ description: 'Your id for the message, kept with it for tracking (duplicates allowed); `/message/find` filters on it' })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  track_id?: string;
  @JSONSchema({
    description:
      "Queue the send and answer at once (status `Queued`) instead of waiting for WhatsApp; the queue paces messages by the instance's delay settings",
  })
  @IsOptional()
  @IsBoolean()
  async?: boolean;
}

export class SendTextDto extends SendCommonDto {
  @JSONSchema({
    description:
      'The chat to send to: a phone number in international format (digits, country code first), a group (`…@g.us`), a user JID (`…@s.whatsapp.net` or `…@lid`) or a channel (`…@newsletter`)',
  })
  @ChatNumber('missing number or text')
  number!: string;
  @JSONSchema({ description: "The message's text; `{{placeholders}}` are filled from the chat (e.g. `{{name}}`)" })
  @RequiredString('missing number or text')
  @MaxLength(65_536)
  text!: string;
  @JSONSchema({ description: 'Show a preview of the first link of the text; without the other `linkPreview*` fields it is generated from the page' })
  @IsOptional()
  @IsBoolean()
  linkPreview?: boolean;
  @JSONSchema({ description: 'A title of your own for the link preview' })
  @IsOptional()
  @IsString()
  @MaxLength(1000)
  linkPreviewTitle?: string;
  @JSONSchema({ description: 'A description of your own for the link preview' })
  @IsOptional()
  @IsString()
  @MaxLength(5000)
  linkPreviewDescription?: string;
  @JSONSchema({ description: "The preview's image: a URL or base64" })
  @IsOptional()
  @IsString()
  @MaxLength(8_000_000)
  @UrlOrBase64()
  linkPreviewImage?: string;
  @JSONSchema({ description: 'A large preview, with the image uploaded (true), or a small one without upload' })
  @IsOptional()
  @IsBoolean()
  linkPreviewLarge?: boolean;
}

export const MEDIA_TYPES = ['image', 'video', 'videoplay', 'document', 'audio', 'myaudio', 'ptt', 'ptv', 'sticker'] as const;

export class SendMediaDto extends SendCommonDto {
  @JSONSchema({
    description:
      'The chat to send to: a phone number in international format (digits, country code first), a group (`…@g.us`), a user JID (`…@s.whatsapp.net` or `…@lid`) or a channel (`…@newsletter`)',
  })
  @ChatNumber('missing number')
  number!: string;
  @JSONSchema({
    description:
      'The kind of media: `image`, `video`, `videoplay` (autoplaying video), `document`, `audio`, `myaudio` or `ptt` (voice note), `ptv` (round video note), `sticker`',
  })
  @OneOf(MEDIA_TYPES, `type must be one of ${MEDIA_TYPES.join(', ')}`)
  type!: (typeof MEDIA_TYPES)[number];
  /** URL or base64 (optionally a data URI). */
  @JSONSchema({ description: 'The file: a URL, or base64 (a data URI too)' })
  @RequiredString('missing file (a URL or base64)')
  @MaxLength(96 * 1024 * 1024)
  file!: string;
  @JSONSchema({ description: 'The caption; `{{placeholders}}` are filled from the chat' })
  @IsOptional()
  @IsString()
  @MaxLength(65_536)
  text?: string;
  /** The caption under another name (published clients send it): used when `text` is absent. */
  @JSONSchema({ description: 'The caption under its other name, used when `text` is absent' })
  @IsOptional()
  @IsString({ message: 'caption must be a string' })
  @MaxLength(65_536)
  caption?: string;
  @JSONSchema({ description: 'The file name shown for a document' })
  @IsOptional()
  @IsString()
  @MaxLength(255)
  docName?: string;
  @JSONSchema({ description: 'A thumbnail of your own for videos and documents: a URL or base64' })
  @IsOptional()
  @IsString()
  @MaxLength(2_000_000)
  @UrlOrBase64()
  thumbnail?: string;
  @JSONSchema({ description: "The file's MIME type; detected when absent" })
  @IsOptional()
  @IsString()
  @MaxLength(255)
  mimetype?: string;
  @JSONSchema({ description: 'Send as view once (images, videos, audio and voice notes; ignored for other types)' })
  @IsOptional()
  @IsBoolean()
  viewOnce?: boolean;
}

export class SendContactDto extends SendCommonDto {
  @JSONSchema({
    description:
      'The chat to send to: a phone number in international format (digits, country code first), a group (`…@g.us`), a user JID (`…@s.whatsapp.net` or `…@lid`) or a channel (`…@newsletter`)',
  })
  @ChatNumber('missing number')
  number!: string;
  @JSONSchema({ description: "The contact's full name" })
  @RequiredString('missing fullName')
  @MaxLength(255)
  fullName!: string;
  /** Comma-separated numbers (each checked by the vCard builder, which names the wrong one). */
  @JSONSchema({ description: "The contact's phone numbers, separated by commas" })
  @RequiredString('missing phoneNumber')
  @MaxLength(2000)
  phoneNumber!: string;
  @JSONSchema({ description: "The contact's company or organisation" })
  @IsOptional()
  @IsString()
  @MaxLength(255)
  organization?: string;
  @JSONSchema({ description: "The contact's email address" })
  @IsOptional()
  @IsString()
  @MaxLength(255)
  email?: string;
  @JSONSchema({ description: "The contact's (or its company's) web address" })
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  url?: string;
}

export const LOCATION_ERROR = 'missing required fields or invalid coordinates';

/**
 * `number` and the coordinates are required, checked by the service and the location builder: uazapi's
 * message for them names no field, which the validation pipe would prefix.
 */
export class SendLocationDto extends SendCommonDto {
  @JSONSchema({
    description:
      'The chat to send to: a phone number in international format (digits, country code first), a group (`…@g.us`), a user JID (`…@s.whatsapp.net` or `…@lid`) or a channel (`…@newsletter`); required',
  })
  @IsOptional()
  @IsString({ message: 'number must be a string' })
  @MaxLength(200)
  number?: string;
  @JSONSchema({ description: "The place's name, shown on the pin" })
  @IsOptional()
  @IsString()
  @MaxLength(1000)
  name?: string;
  @JSONSchema({ description: "The place's address" })
  @IsOptional()
  @IsString()
  @MaxLength(1000)
  address?: string;
  /** Numbers, or numeric strings, within ±90 and ±180. */
  @JSONSchema({ description: 'Latitude, from -90 to 90 (a number or a numeric string); required', example: -23.5616 })
  @IsOptional()
  latitude?: unknown;
  @JSONSchema({ description: 'Longitude, from -180 to 180 (a number or a numeric string); required', example: -46.6562 })
  @IsOptional()
  longitude?: unknown;
}

export const PRESENCES = ['composing', 'recording', 'paused'] as const;

export class ChatPresenceDto {
  @JSONSchema({ description: 'The chat to show the presence in: a phone number in international format or a JID' })
  @ChatNumber('missing number')
  number!: string;
  @JSONSchema({ description: '`composing` ("typing…"), `recording` ("recording audio…") or `paused` (stop showing it)' })
  @OneOf(PRESENCES, 'presence must be composing, recording or paused')
  presence!: (typeof PRESENCES)[number];
  @JSONSchema({
    description: 'Turn the presence off after this many milliseconds (at most 300000, 5 minutes); absent or 0 leaves it on until WhatsApp or a message ends it',
  })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(300_000)
  delay?: number;
}
