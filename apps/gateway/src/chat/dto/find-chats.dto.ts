import { applyDecorators } from '@nestjs/common';
import { CHAT_SORT_FIELDS } from '@gw/persistence';
import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';

const FILTER_TEXT = 255;
const VALUE_OPERATORS = 'a prefix ~ (contains), !~ (does not contain), != (differs), >=, >, <=, < (compares); none: contains';

/** `sort`: a field, `-field` (descending) or `+field` (ascending). */
export const CHAT_SORT_VALUES = CHAT_SORT_FIELDS.flatMap((field) => [field, `-${field}`, `+${field}`]);

/** '' and null mean "no filter" (clients send every field of their form). */
const absentWhenEmpty = (value: unknown) => (value === '' || value === null ? undefined : value);

function IntegerWithin(field: string, min: number, max: number): PropertyDecorator {
  const message = `${field} must be an integer between ${min} and ${max}`;
  return applyDecorators(
    Transform(({ value }: { value: unknown }) => {
      const present = absentWhenEmpty(value);
      return typeof present === 'string' && present.trim() !== '' && Number.isFinite(Number(present)) ? Number(present) : present;
    }),
    IsOptional(),
    IsInt({ message }),
    Min(min, { message }),
    Max(max, { message }),
  );
}

/** A text filter: the value with an optional operator prefix (a number is read as its digits). */
function TextFilter(field: string, description?: string): PropertyDecorator {
  return applyDecorators(
    Transform(({ value }: { value: unknown }) => (typeof value === 'number' ? String(value) : absentWhenEmpty(value))),
    IsOptional(),
    IsString({ message: `${field} must be a string (${VALUE_OPERATORS})` }),
    MaxLength(FILTER_TEXT, { message: `${field} must be at most ${FILTER_TEXT} characters` }),
    JSONSchema({ type: 'string', description: description ?? `Filter; ${VALUE_OPERATORS}` }) as PropertyDecorator,
  );
}

/** A yes/no filter ("true"/"false" also read as booleans). */
function BooleanFilter(field: string): PropertyDecorator {
  return applyDecorators(
    Transform(({ value }: { value: unknown }) => (value === 'true' ? true : value === 'false' ? false : absentWhenEmpty(value))),
    IsOptional(),
    IsBoolean({ message: `${field} must be a boolean` }),
  );
}

/** A number filter: a number, or a string with a comparison prefix (`>=1700000000000`, `!=0`). */
function NumberFilter(field: string): PropertyDecorator {
  const message = `${field} must be a number, optionally prefixed by >=, >, <=, <, != or ~`;
  return applyDecorators(
    Transform(({ value }: { value: unknown }) => (typeof value === 'number' ? String(value) : absentWhenEmpty(value))),
    IsOptional(),
    IsString({ message }),
    Matches(/^\s*(>=|<=|!=|!~|>|<|~)?\s*-?\d{1,15}(\.\d{1,6})?\s*$/, { message }),
    JSONSchema({ type: ['number', 'string'], description: 'A number, or a string with a prefix >=, >, <=, <, !=' }) as PropertyDecorator,
  );
}

/**
 * `POST /chat/find`: chats matching every filter (`operator: AND`) or any (`OR`), sorted and paged by
 * `limit`/`offset` or (older clients) `page`/`pageSize`.
 */
export class FindChatsDto {
  @Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim().toUpperCase() || undefined : absentWhenEmpty(value)))
  @IsOptional()
  @IsIn(['AND', 'OR'], { message: 'operator must be AND or OR' })
  @JSONSchema({ description: 'How the filters combine (default AND)' })
  operator?: 'AND' | 'OR';

  @Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() || undefined : absentWhenEmpty(value)))
  @IsOptional()
  @IsIn(CHAT_SORT_VALUES, {
    message: `sort must be a Chat field, prefixed by - for descending: ${CHAT_SORT_FIELDS.join(', ')}`,
  })
  @JSONSchema({ type: 'string', description: 'A Chat field, -field for descending (default -wa_lastMsgTimestamp)' })
  sort?: string;

  @JSONSchema({ description: 'At most this many chats (1 to 1000)' })
  @IntegerWithin('limit', 1, 1000)
  limit?: number;
  @JSONSchema({ description: 'How many chats to skip' })
  @IntegerWithin('offset', 0, Number.MAX_SAFE_INTEGER)
  offset?: number;
  @JSONSchema({ description: 'Older paging: the page, from 1 (with `pageSize`)' })
  @IntegerWithin('page', 1, Number.MAX_SAFE_INTEGER)
  page?: number;
  @JSONSchema({ description: 'Older paging: items per page' })
  @IntegerWithin('pageSize', 1, 1000)
  pageSize?: number;

  @TextFilter('wa_fastid') wa_fastid?: string;
  @TextFilter('wa_chatid') wa_chatid?: string;
  @TextFilter('wa_chatlid') wa_chatlid?: string;
  @JSONSchema({ description: 'Only chats that are archived (true) or are not (false)' })
  @BooleanFilter('wa_archived')
  wa_archived?: boolean;
  @TextFilter('wa_contactName') wa_contactName?: string;
  @TextFilter('wa_name') wa_name?: string;
  @TextFilter('name') name?: string;
  @JSONSchema({ description: 'Only chats that are blocked (true) or are not (false)' })
  @BooleanFilter('wa_isBlocked')
  wa_isBlocked?: boolean;
  @JSONSchema({ description: 'Only groups (true) or only private chats (false)' })
  @BooleanFilter('wa_isGroup')
  wa_isGroup?: boolean;
  @JSONSchema({ description: 'Only chats that are groups the account administers (true) or are not (false)' })
  @BooleanFilter('wa_isGroup_admin')
  wa_isGroup_admin?: boolean;
  @JSONSchema({ description: 'Only chats that are groups where only admins send messages (true) or are not (false)' })
  @BooleanFilter('wa_isGroup_announce')
  wa_isGroup_announce?: boolean;
  @JSONSchema({ description: 'Only chats that are communities (true) or are not (false)' })
  @BooleanFilter('wa_isGroup_community')
  wa_isGroup_community?: boolean;
  @JSONSchema({ description: 'Only chats that are groups the account is a member of (true) or are not (false)' })
  @BooleanFilter('wa_isGroup_member')
  wa_isGroup_member?: boolean;
  @JSONSchema({ description: 'Only chats that are pinned (true) or are not (false)' })
  @BooleanFilter('wa_isPinned')
  wa_isPinned?: boolean;
  @TextFilter('wa_label', 'A label id (from /labels) the chat carries; ~ matches part of one, != and !~ chats without it')
  wa_label?: string;
  @TextFilter('wa_notes') wa_notes?: string;
  @TextFilter('wa_lastMessageType') wa_lastMessageType?: string;
  @NumberFilter('wa_lastMsgTimestamp') wa_lastMsgTimestamp?: string;
  @NumberFilter('wa_unreadCount') wa_unreadCount?: string;
  @NumberFilter('wa_muteEndTime') wa_muteEndTime?: string;
  @TextFilter('lead_tags', 'A tag the lead carries (case-insensitive); ~ matches part of one, != and !~ leads without it') lead_tags?: string;
  @JSONSchema({ description: 'Only chats whose lead ticket is open (true) or closed (false)' })
  @BooleanFilter('lead_isTicketOpen')
  lead_isTicketOpen?: boolean;
  @TextFilter('lead_assignedAttendant_id') lead_assignedAttendant_id?: string;
  @TextFilter('lead_status') lead_status?: string;
  @TextFilter('lead_name') lead_name?: string;
  @TextFilter('lead_fullName') lead_fullName?: string;
  @TextFilter('lead_email') lead_email?: string;
  @TextFilter('lead_personalid') lead_personalid?: string;
  @TextFilter('lead_notes') lead_notes?: string;
  @NumberFilter('lead_kanbanOrder') lead_kanbanOrder?: string;
  @NumberFilter('chatbot_disableUntil') chatbot_disableUntil?: string;
  @TextFilter('lead_field01') lead_field01?: string;
  @TextFilter('lead_field02') lead_field02?: string;
  @TextFilter('lead_field03') lead_field03?: string;
  @TextFilter('lead_field04') lead_field04?: string;
  @TextFilter('lead_field05') lead_field05?: string;
  @TextFilter('lead_field06') lead_field06?: string;
  @TextFilter('lead_field07') lead_field07?: string;
  @TextFilter('lead_field08') lead_field08?: string;
  @TextFilter('lead_field09') lead_field09?: string;
  @TextFilter('lead_field10') lead_field10?: string;
  @TextFilter('lead_field11') lead_field11?: string;
  @TextFilter('lead_field12') lead_field12?: string;
  @TextFilter('lead_field13') lead_field13?: string;
  @TextFilter('lead_field14') lead_field14?: string;
  @TextFilter('lead_field15') lead_field15?: string;
  @TextFilter('lead_field16') lead_field16?: string;
  @TextFilter('lead_field17') lead_field17?: string;
  @TextFilter('lead_field18') lead_field18?: string;
  @TextFilter('lead_field19') lead_field19?: string;
  @TextFilter('lead_field20') lead_field20?: string;
}
