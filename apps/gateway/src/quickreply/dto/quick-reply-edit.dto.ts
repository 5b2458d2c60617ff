import { Type } from 'class-transformer';
import { JSONSchema, targetConstructorToSchema } from 'class-validator-jsonschema';
import { IsBoolean, IsIn, IsObject, IsOptional, IsString, MaxLength, ValidateIf, ValidateNested } from 'class-validator';
import { RequiredString } from '../../send/dto/field-rules';
import { QUICK_REPLY_MESSAGE_TYPES, QuickReplyMessageDto, type QuickReplyMessage } from './quick-reply-message.dto';

/** uazapi's `type` of a quick reply (its flat form: `text`, or a media type with `file`). */
export const UAZAPI_QUICK_REPLY_TYPES = ['text', 'audio', 'myaudio', 'ptt', 'document', 'video', 'image'] as const;

/**
 * `POST /quickreply/edit`: no `id` (or `""`) creates, an `id` updates, `delete: true` with the `id`
 * deletes. The message is `message` (`kind` plus the body of that kind's send endpoint), or uazapi's
 * flat form (`type` with `text`, `file`, `docName`), read as a text or media message.
 */
@JSONSchema({ example: { shortCut: 'saudacao1', message: { kind: 'text', text: 'Olá {{first_name}}! Como posso ajudar hoje?' } } })
export class QuickReplyEditDto {
  @JSONSchema({ description: 'The quick reply to update or delete; absent (or empty) creates one' })
  @IsOptional()
  @IsString({ message: 'id must be a string' })
  @MaxLength(100)
  id?: string;
  @JSONSchema({ description: 'Delete the quick reply `id`' })
  @IsOptional()
  @IsBoolean({ message: 'delete must be a boolean' })
  delete?: boolean;
  @ValidateIf((dto: QuickReplyEditDto) => dto.delete !== true)
  @RequiredString('missing shortCut')
  @MaxLength(200)
  @JSONSchema({ description: 'The short name a front end offers it by (required unless deleting)' })
  shortCut!: string;
  @JSONSchema({ description: 'What the reply is for, in words (stored with it, for a front end or an AI to choose it by)' })
  @IsOptional()
  @IsString({ message: 'aiDescription must be a string' })
  @MaxLength(4000)
  aiDescription?: string;
  /**
   * Also keep it in the WhatsApp Business app (`type: text` only, as uazapiGO 2.1.1): written to the phone's
   * quick replies through app state, and its later edits and deletion too. Only when creating (no `id`):
   * an existing local reply is not converted (400). On an update, `false` takes it off WhatsApp; absent: as it was.
   */
  @JSONSchema({ description: 'Keep it in the WhatsApp Business app as well (text only; only when creating; false on an update takes it off WhatsApp)' })
  @IsOptional()
  @IsBoolean({ message: 'onWhatsApp must be a boolean' })
  onWhatsApp?: boolean;
  @IsOptional()
  // Documented as one of the kinds, each with its own rules (the discriminator below picks the class that checks it).
  @JSONSchema((_schema, options) => ({
    description: "The message: `kind` (`text`, `media`, `contact`, `location`, `menu` or `pix`) and that kind's fields, as its `/send/*` route takes them",
    oneOf: QUICK_REPLY_MESSAGE_TYPES.map(({ value }) => targetConstructorToSchema(value, options)),
  }))
  @IsObject({ message: 'message must be an object with a kind' })
  @ValidateNested()
  @Type(() => QuickReplyMessageDto, { discriminator: { property: 'kind', subTypes: QUICK_REPLY_MESSAGE_TYPES }, keepDiscriminatorProperty: true })
  message?: QuickReplyMessage;
  /** uazapi's flat form: the message's type (`text` or a media type). */
  @JSONSchema({ description: "uazapiGO's flat form: `text` or a media type (`audio`, `myaudio`, `ptt`, `document`, `video`, `image`)" })
  @IsOptional()
  @IsIn([...UAZAPI_QUICK_REPLY_TYPES], { message: `type must be one of ${UAZAPI_QUICK_REPLY_TYPES.join(', ')}` })
  type?: string;
  /** uazapi's flat form: the text, or a media message's caption. */
  @JSONSchema({ description: "uazapiGO's flat form: the text, or a media message's caption" })
  @IsOptional()
  @IsString({ message: 'text must be a string' })
  @MaxLength(65_536)
  text?: string;
  /** uazapi's flat form: a media message's file, a URL or base64. */
  @JSONSchema({ description: "uazapiGO's flat form: a media message's file, a URL or base64" })
  @IsOptional()
  @IsString({ message: 'file must be a string' })
  @MaxLength(96 * 1024 * 1024)
  file?: string;
  /** uazapi's flat form: a document's file name. */
  @JSONSchema({ description: "uazapiGO's flat form: a document's file name" })
  @IsOptional()
  @IsString({ message: 'docName must be a string' })
  @MaxLength(255)
  docName?: string;
}
