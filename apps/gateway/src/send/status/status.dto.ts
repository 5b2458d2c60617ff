import { Transform } from 'class-transformer';
import { ArrayMinSize, IsArray, IsOptional, IsString, MaxLength, ValidateBy } from 'class-validator';
import { IntegerLike, OneOf } from '../dto/field-rules';
import { JSONSchema } from 'class-validator-jsonschema';

export const STATUS_TYPES = ['text', 'image', 'video', 'audio', 'myaudio', 'ptt'] as const;
/** WAProto ExtendedTextMessage.FontType values, the ones uazapi accepts. */
export const STATUS_FONTS = [0, 1, 2, 6, 7, 8, 9, 10] as const;
export const STATUS_TEXT_LIMIT = 656;
/** Background colours 1–19 (see STATUS_BACKGROUNDS). */
export const STATUS_BACKGROUND_COUNT = 19;

const RECIPIENTS_TYPE = 'recipients must be an array of strings';

/** At most STATUS_TEXT_LIMIT UTF-16 units (an emoji counts two, as the phone counts it). */
function StatusTextLength(): PropertyDecorator {
  return ValidateBy({
    name: 'isStatusTextLength',
    validator: {
      validate: (value: unknown) => typeof value !== 'string' || value.length <= STATUS_TEXT_LIMIT,
      defaultMessage: () => `text is longer than ${STATUS_TEXT_LIMIT} characters`,
    },
  });
}

/**
 * `POST /send/status`. Numbers may come as numeric strings. What depends on the type (a text status
 * needs `text`, a media one `file`) is checked by the sender.
 */
export class SendStatusDto {
  /** Any case, spaces around it ignored. */
  @Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim().toLowerCase() : value))
  @OneOf(STATUS_TYPES, `type must be one of ${STATUS_TYPES.join(', ')}`)
  @JSONSchema({ description: 'The kind of status: `text`, `image`, `video` or `audio`' })
  type!: (typeof STATUS_TYPES)[number];
  @JSONSchema({ description: 'The text of a text status, or the caption of a media one' })
  @IsOptional()
  @IsString({ message: 'text must be a string' })
  @StatusTextLength()
  @MaxLength(65_536)
  text?: string;
  @IntegerLike((value) => value >= 1 && value <= STATUS_BACKGROUND_COUNT, 'Invalid background_color: give an integer from 1 to 19')
  @JSONSchema({ description: 'The background of a text status: a colour index from 1 to 19' })
  background_color?: number | string;
  @JSONSchema({ description: 'The font of a text status: 0, 1, 2, 6, 7, 8, 9 or 10' })
  @IntegerLike((value) => (STATUS_FONTS as readonly number[]).includes(value), 'Invalid font')
  font?: number | string;
  /** URL or base64 of the media. */
  @JSONSchema({ description: 'The media of an image, video or audio status: a URL or base64' })
  @IsOptional()
  @IsString({ message: 'file must be a string (a URL or base64)' })
  @MaxLength(96 * 1024 * 1024)
  file?: string;
  /** Accepted and ignored: the thumbnail is made from the media. */
  @JSONSchema({ description: 'Accepted; the thumbnail is generated when needed' })
  @IsOptional()
  @IsString()
  @MaxLength(2_000_000)
  thumbnail?: string;
  @JSONSchema({ description: "The media's MIME type, when it cannot be detected" })
  @IsOptional()
  @IsString()
  @MaxLength(255)
  mimetype?: string;
  /** 0: no cap. */
  @JSONSchema({ description: 'Send to at most this many of the audience (a deterministic subset); with `recipients`, a cap on that list' })
  @IntegerLike((value) => value >= 0, 'max_recipients must be a non-negative integer')
  max_recipients?: number | string;
  /** Absent: the whole audience the status privacy allows. */
  @IsOptional()
  @IsArray({ message: RECIPIENTS_TYPE })
  @ArrayMinSize(1, { message: 'recipients is empty: omit it to send to the whole audience' })
  @IsString({ each: true, message: RECIPIENTS_TYPE })
  @JSONSchema({ description: 'Only these recipients: numbers, `…@s.whatsapp.net` or `…@lid` JIDs; invalid ones are dropped, with the reason in `debug`' })
  recipients?: string[];
  @JSONSchema({ description: 'Where the status comes from, kept with it for your tracking' })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  track_source?: string;
  @JSONSchema({ description: 'Your id for the status, kept with it for tracking' })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  track_id?: string;
}
