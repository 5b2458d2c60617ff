import { EVENT_TYPES } from '@gw/contracts';
import { applyDecorators } from '@nestjs/common';
import { IsArray, IsBoolean, IsDefined, IsIn, IsOptional, IsString, Matches, MaxLength, MinLength } from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';

/** Event names a webhook may ask for; `leads` is the older name some clients still send. */
export const WEBHOOK_EVENTS = [...EVENT_TYPES, 'leads'] as const;
export const EXCLUDE_MESSAGES = ['wasSentByApi', 'wasNotSentByApi', 'fromMeYes', 'fromMeNo', 'isGroupYes', 'isGroupNo', 'IsGroupNo'] as const;

/** What every delivery target (webhook or event sink) takes besides its URL and events: on/off, the message filters, the token. */
export class DeliveryFilterDto {
  @IsOptional()
  @IsBoolean()
  @JSONSchema({ description: 'Deliver to this target (true) or keep it without deliveries' })
  enabled?: boolean;

  @IsOptional()
  @IsArray({ message: 'excludeMessages must be an array' })
  @IsIn(EXCLUDE_MESSAGES, { each: true, message: `excludeMessages must contain only: ${EXCLUDE_MESSAGES.join(', ')}` })
  @JSONSchema({
    description:
      'Messages not to deliver: `wasSentByApi`, `wasNotSentByApi`, `fromMeYes`, `fromMeNo`, `isGroupYes`, `isGroupNo`; `wasSentByApi` avoids loops when your system answers through the API',
  })
  excludeMessages?: string[];

  /** Put the instance token in payloads (receivers migrating from uazapi). */
  @IsOptional()
  @IsBoolean()
  @JSONSchema({ description: "Put the instance's token in each payload (for receivers migrating from uazapiGO)" })
  includeToken?: boolean;
}

/** What a webhook sends where, besides its URL and events (which the global webhook requires). */
class WebhookSettingsDto extends DeliveryFilterDto {
  @IsOptional()
  @IsBoolean()
  @JSONSchema({ description: 'Append the event type to the URL (e.g. `/webhook/messages`)' })
  addUrlEvents?: boolean;

  @IsOptional()
  @IsBoolean()
  @JSONSchema({ description: 'Append the message type to the URL (e.g. `/webhook/conversation`)' })
  addUrlTypesMessages?: boolean;

  @IsOptional()
  @IsString()
  @Matches(/^whsec_[A-Za-z0-9+/]{16,}={0,2}$/, { message: 'secret must be whsec_ followed by base64 of at least 12 bytes' })
  @JSONSchema({ description: 'A signing secret (`whsec_` + base64): each delivery is then signed, so the receiver can check it came from here' })
  secret?: string;
}

/** `events`: event names a target receives (every event when empty). */
export const EVENTS_RULES = [
  IsArray({ message: 'events must be an array of event names' }),
  IsIn(WEBHOOK_EVENTS, { each: true, message: `events must contain only: ${WEBHOOK_EVENTS.join(', ')}` }),
];

/** `POST /webhook`: simple mode (no action, no id) or `add` / `update` / `delete` one by `id`. */
export class WebhookDto extends WebhookSettingsDto {
  @IsOptional()
  @IsIn(['add', 'update', 'delete'], { message: 'action must be one of add, update, delete' })
  @JSONSchema({
    description: '`add`, `update` (with `id`) or `delete` (with `id`) for several webhooks; absent for the simple mode (one webhook, created or updated)',
  })
  action?: 'add' | 'update' | 'delete';

  @IsOptional()
  @IsString()
  @MaxLength(100)
  @JSONSchema({ description: "The webhook's id, for `update` and `delete`" })
  id?: string;

  /** Required when the webhook is created; an update keeps the current one. */
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  @JSONSchema({ description: 'The URL that receives the events (a POST each)' })
  url?: string;

  @IsOptional()
  @applyDecorators(...EVENTS_RULES)
  @JSONSchema({
    description:
      'The events to receive (e.g. `messages`, `messages_update`, `connection`, `presence`, `groups`, `chats`, `contacts`, `labels`, `call`); every event when empty',
  })
  events?: string[];
}

/** `POST /globalwebhook`: the one webhook of every instance; its URL and events are required. */
export class GlobalWebhookDto extends WebhookSettingsDto {
  @IsDefined({ message: 'url is required' })
  @IsString()
  @MinLength(1, { message: 'url is required' })
  @MaxLength(2000)
  @JSONSchema({ description: 'The URL that receives the events of every instance' })
  url!: string;

  @IsDefined({ message: 'events is required' })
  @applyDecorators(...EVENTS_RULES)
  @JSONSchema({
    description:
      'The events to receive (e.g. `messages`, `messages_update`, `connection`, `presence`, `groups`, `chats`, `contacts`, `labels`, `call`); every event when empty',
  })
  events!: string[];
}
