import { applyDecorators } from '@nestjs/common';
import { CAMPAIGN_STATUSES } from '@gw/persistence';
import { Transform } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayNotEmpty,
  IsArray,
  IsDefined,
  IsIn,
  IsInt,
  IsNumber,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  ValidateBy,
  ValidateIf,
} from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';
import { MEDIA_TYPES } from '../../send/dto/send-common.dto';

/** Most messages one campaign holds. */
export const MAX_CAMPAIGN_MESSAGES = 10_000;
/** Menu messages a campaign may carry (uazapi 2.16), built as `/send/menu` builds them. */
export const CAMPAIGN_MENU_TYPES = ['button', 'list', 'poll', 'carousel'] as const;
/** What a campaign message may be. */
export const CAMPAIGN_TYPES = ['text', ...MEDIA_TYPES, 'contact', 'location', ...CAMPAIGN_MENU_TYPES] as const;
const UNSUPPORTED_TYPE = `is not supported in campaigns: use text, ${MEDIA_TYPES.join(', ')}, contact, location, ${CAMPAIGN_MENU_TYPES.join(', ')}`;

/** The campaign's message statuses `/sender/listmessages` filters on. */
export const CAMPAIGN_MESSAGE_STATUSES = ['Scheduled', 'Sent', 'Failed'] as const;
/** `/sender/listfolders?status=`: the reference's values (Active, Archived) and ours (a folder's status). */
export const FOLDER_STATUS_FILTERS = ['Active', 'Archived', ...CAMPAIGN_STATUSES] as const;

const NOT_BLANK = /\S/;

/**
 * Numbers may come as numeric strings (older clients): read as `Number()` reads them; '' is absent
 * (null, so that a field sent empty still counts as sent). Anything else is left for the type rule to refuse.
 */
const Numeric = () =>
  Transform(({ value }: { value: unknown }) => {
    if (value === '') return null;
    if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
    return value;
  });

/** Seconds between two messages of a campaign. */
function Seconds(field: string, required: boolean): PropertyDecorator {
  const message = `${field} must be a number of seconds between 0 and 86400`;
  return applyDecorators(
    Numeric(),
    required ? IsDefined({ message: `${field} is required (seconds)` }) : IsOptional(),
    IsNumber({}, { message }),
    Min(0, { message }),
    Max(86_400, { message }),
  );
}

/** An integer within a range; absent ('' too) is the service's default. */
function IntegerWithin(field: string, min: number, max: number): PropertyDecorator {
  const message = `${field} must be an integer between ${min} and ${max}`;
  return applyDecorators(Numeric(), IsOptional(), IsInt({ message }), Min(min, { message }), Max(max, { message }));
}

/** A required id: a non-blank string. */
function RequiredId(field: string): PropertyDecorator {
  const message = `${field} is required`;
  return applyDecorators(IsDefined({ message }), IsString({ message }), Matches(NOT_BLANK, { message }));
}

/** Documented, passed on as sent: the message's content, checked per message by the service and the content builders. */
const Content = (schema: Parameters<typeof JSONSchema>[0]): PropertyDecorator => applyDecorators(IsOptional(), JSONSchema(schema) as PropertyDecorator);
const text = (description: string) => Content({ type: 'string', description });
const flag = (description: string) => Content({ type: 'boolean', description });

/**
 * The content fields of one campaign message (uazapi's `/send/*` fields by type). The campaign checks
 * them per message, naming the message (`numbers[2]: …`, `messages[0]: …`), so here they are only
 * declared: documented and kept (the validation pipe drops undeclared fields).
 */
export class CampaignContentDto {
  @text('Text (type text), caption (media) or menu text') text?: string;
  @flag('Generate a preview of the first link in the text (type text)') linkPreview?: boolean;
  @text('Link preview title') linkPreviewTitle?: string;
  @text('Link preview description') linkPreviewDescription?: string;
  @text('Link preview image: URL or base64') linkPreviewImage?: string;
  @flag('Large link preview') linkPreviewLarge?: boolean;
  @text('Media: URL or base64 (types image, video, audio, document…)') file?: string;
  @text('File name (type document)') docName?: string;
  @text('Media thumbnail: base64') thumbnail?: string;
  @text('Media MIME type, when the file does not say') mimetype?: string;
  @flag('View once (media)') viewOnce?: boolean;
  @text('Contact full name (type contact)') fullName?: string;
  @text('Contact phone numbers, comma-separated (type contact)') phoneNumber?: string;
  @text('Contact organization (type contact)') organization?: string;
  @text('Contact e-mail (type contact)') email?: string;
  @text('Contact URL (type contact)') url?: string;
  @Content({ type: 'number', description: 'Latitude (type location)' }) latitude?: unknown;
  @Content({ type: 'number', description: 'Longitude (type location)' }) longitude?: unknown;
  @text('Place name (type location)') name?: string;
  @text('Address (type location)') address?: string;
  @text('Footer (types list, button, poll, carousel)') footerText?: string;
  @text('Button text (older name of listButton)') buttonText?: string;
  @text('List button text (type list)') listButton?: string;
  @Content({ type: 'integer', description: 'Selectable options (type poll)' }) selectableCount?: number;
  @Content({ type: 'array', items: { type: 'string' }, description: 'Options (types list, button, poll, carousel)' }) choices?: string[];
  @text('Image of a button menu: URL or base64 (type button)') imageButton?: string;
  @text('"all" mentions every group member') mentions?: string;
  @Content({ type: 'integer', minimum: 0, description: 'Milliseconds of typing before the message' }) delay?: number;
  @text('Tracking source, stored with the message') track_source?: string;
  @text('Tracking id, stored with the message') track_id?: string;
  @text('Message id to reply to') replyid?: string;
  @flag('Mark the chat read') readchat?: boolean;
  @flag('Mark the chat’s messages read') readmessages?: boolean;
  @flag('Mark as forwarded') forward?: boolean;
}

/** One message of `/sender/advanced` (documentation: each is checked by the service, which names its index). */
@JSONSchema({ required: ['number', 'type'] })
export class CampaignMessageDto extends CampaignContentDto {
  @Content({ type: 'string', description: 'Chat id or phone number' }) number!: string;
  @Content({ type: 'string', enum: [...CAMPAIGN_TYPES], description: "The message's type, as in `/sender/simple`" }) type!: string;
}

/** The campaign's pace, schedule and names, shared by both ways of creating one. */
class CampaignScheduleDto extends CampaignContentDto {
  @Numeric()
  @IsOptional()
  @IsNumber({}, { message: 'scheduled_for must be a timestamp in milliseconds or a number of minutes from now' })
  @Min(0, { message: 'scheduled_for must be a timestamp in milliseconds or a number of minutes from now' })
  @JSONSchema({ description: 'When to start: a timestamp in milliseconds, or a number of minutes from now; now when absent' })
  scheduled_for?: number;

  @JSONSchema({ description: "The campaign's name" })
  @IsOptional()
  @IsString({ message: 'folder must be a string' })
  folder?: string;
  @JSONSchema({ description: 'Free notes about the campaign' })
  @IsOptional()
  @IsString({ message: 'info must be a string' })
  info?: string;
}

/** `POST /sender/simple`: one message to many numbers. */
export class SenderSimpleDto extends CampaignScheduleDto {
  @IsDefined({ message: 'numbers is required: a non-empty array of phone numbers' })
  @IsArray({ message: 'numbers is required: a non-empty array of phone numbers' })
  @ArrayNotEmpty({ message: 'numbers is required: a non-empty array of phone numbers' })
  @ArrayMaxSize(MAX_CAMPAIGN_MESSAGES, { message: `numbers: at most ${MAX_CAMPAIGN_MESSAGES}` })
  @JSONSchema({ items: { type: 'string' }, description: 'The recipients: phone numbers or chat JIDs' })
  numbers!: string[];

  /**
   * Not a field of /sender/simple: some clients nest the message (`message: {type, text}`), as other
   * APIs take it. Refused before `type` is, naming what to send instead.
   */
  @JSONSchema({ description: 'Not taken: the message’s fields go at the top level of the body, beside numbers (a nested message is refused)' })
  @ValidateBy({
    name: 'notNestedMessage',
    validator: {
      validate: (value: unknown) => value === undefined || value === null || typeof value !== 'object',
      defaultMessage: () =>
        'message: /sender/simple takes the message’s fields at the top level of the body, beside numbers ({"numbers": [...], "type": "text", "text": "..."}), not nested in message',
    },
  })
  message?: unknown;

  // The messages the loop over `numbers` answered when this was checked per number (it failed on the first).
  @IsDefined({ message: 'numbers[0]: type is required' })
  @IsString({ message: 'numbers[0]: type is required' })
  @IsIn(CAMPAIGN_TYPES, { message: ({ value }) => (value === '' ? 'numbers[0]: type is required' : `numbers[0]: type "${String(value)}" ${UNSUPPORTED_TYPE}`) })
  @JSONSchema({
    description:
      "The message's type: `text`, a media type (`image`, `video`, `audio`, `ptt`, `document`, `sticker`…), `contact`, `location`, or a menu (`button`, `list`, `poll`, `carousel`); its fields go beside `numbers`, as the matching `/send/*` route takes them",
  })
  type!: (typeof CAMPAIGN_TYPES)[number];

  @JSONSchema({ description: 'The shortest pause between two messages, in seconds' })
  @Seconds('delayMin', true)
  delayMin!: number;
  @JSONSchema({ description: 'The longest pause between two messages, in seconds' })
  @Seconds('delayMax', true)
  delayMax!: number;
}

/** `POST /sender/advanced`: a message per entry, each with its own number and type. */
export class SenderAdvancedDto extends CampaignScheduleDto {
  @IsDefined({ message: 'messages is required: a non-empty array' })
  @IsArray({ message: 'messages is required: a non-empty array' })
  @ArrayNotEmpty({ message: 'messages is required: a non-empty array' })
  @ArrayMaxSize(MAX_CAMPAIGN_MESSAGES, { message: `messages: at most ${MAX_CAMPAIGN_MESSAGES}` })
  @JSONSchema({
    items: { $ref: '#/components/schemas/CampaignMessageDto' },
    description: "The messages: each with its own `number`, `type` and that type's fields",
  })
  messages!: unknown[];

  @JSONSchema({ description: 'The shortest pause between two messages, in seconds' })
  @Seconds('delayMin', false)
  delayMin?: number;
  @JSONSchema({ description: 'The longest pause between two messages, in seconds' })
  @Seconds('delayMax', false)
  delayMax?: number;
}

export const CAMPAIGN_ACTIONS = ['stop', 'continue', 'delete'] as const;

/** `POST /sender/edit`: stop, continue or delete a campaign. */
export class SenderEditDto {
  @JSONSchema({ description: "The campaign's id" })
  @RequiredId('folder_id')
  folder_id!: string;

  @IsDefined({ message: 'action must be one of stop, continue, delete' })
  @IsIn(CAMPAIGN_ACTIONS, { message: 'action must be one of stop, continue, delete' })
  @JSONSchema({ description: '`stop` (pause), `continue` (resume a paused campaign) or `delete` (remove it and its pending messages)' })
  action!: (typeof CAMPAIGN_ACTIONS)[number];
}

/** `POST /sender/cleardone`: remove finished campaigns older than `hours`. */
export class SenderClearDoneDto {
  @Numeric()
  @IsOptional()
  @IsNumber({}, { message: 'hours must be a non-negative number' })
  @Min(0, { message: 'hours must be a non-negative number' })
  // Ten years; a larger number reaches before the epoch (and past what a date can hold).
  @Max(87_600, { message: 'hours must be at most 87600 (ten years)' })
  @JSONSchema({ description: 'Delete the finished campaigns that ended more than this many hours ago; every finished campaign when absent' })
  hours?: number;
}

/** `POST /sender/listmessages`: a campaign's messages, by `limit`/`offset` or (older clients) `page`/`pageSize`. */
export class SenderListMessagesDto {
  @JSONSchema({ description: "The campaign's id" })
  @RequiredId('folder_id')
  folder_id!: string;

  @ValidateIf((dto: SenderListMessagesDto) => dto.messageStatus !== '' && dto.messageStatus !== null && dto.messageStatus !== undefined)
  @IsIn(CAMPAIGN_MESSAGE_STATUSES, { message: `messageStatus must be one of ${CAMPAIGN_MESSAGE_STATUSES.join(', ')}` })
  @JSONSchema({ description: 'Only messages in this status: `Scheduled`, `Sent` or `Failed`' })
  messageStatus?: (typeof CAMPAIGN_MESSAGE_STATUSES)[number] | '';

  @JSONSchema({ description: 'Messages per page (1 to 1000)' })
  @IntegerWithin('limit', 1, 1000)
  limit?: number;
  @JSONSchema({ description: 'How many messages to skip' })
  @IntegerWithin('offset', 0, Number.MAX_SAFE_INTEGER)
  offset?: number;
  @JSONSchema({ description: 'Older paging: the page, from 1 (with `pageSize`)' })
  @IntegerWithin('page', 1, Number.MAX_SAFE_INTEGER)
  page?: number;
  @JSONSchema({ description: 'Older paging: items per page' })
  @IntegerWithin('pageSize', 1, 1000)
  pageSize?: number;
}
