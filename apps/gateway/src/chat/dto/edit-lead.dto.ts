import { applyDecorators } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsBoolean, IsDefined, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min, ValidateIf } from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';
import { LEAD_LIMITS } from '@gw/domain';

/** The chat `id` names, or (older clients) `number` / `phone`. */
const CHAT_ID_LENGTH = 200;
// The limits the chatbot's update_lead tool checks too (@gw/domain).
const SHORT_TEXT = LEAD_LIMITS.shortText;
const NOTES_TEXT = LEAD_LIMITS.notes;
const CUSTOM_FIELD_TEXT = LEAD_LIMITS.customField;

/** Numbers may come as numeric strings (older clients); anything else is left for the type rule to refuse. */
const Numeric = () =>
  Transform(({ value }: { value: unknown }) => (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)) ? Number(value) : value));

/** A lead text: null clears it, as '' does. */
function LeadText(field: string, maxLength: number, description?: string): PropertyDecorator {
  return applyDecorators(
    Transform(({ value }: { value: unknown }) => (value === null ? '' : value)),
    IsOptional(),
    IsString({ message: `${field} must be a string` }),
    MaxLength(maxLength, { message: `${field} must be at most ${maxLength} characters` }),
    ...(description ? [JSONSchema({ description }) as PropertyDecorator] : []),
  );
}

/** An integer field: absent leaves it; null is refused (the field holds a number). */
function LeadInteger(field: string, min: number, max: number, description: string): PropertyDecorator {
  const message = `${field} must be an integer between ${min} and ${max}`;
  return applyDecorators(
    Numeric(),
    ValidateIf((_dto: unknown, value: unknown) => value !== undefined),
    IsInt({ message }),
    Min(min, { message }),
    Max(max, { message }),
    JSONSchema({ description }) as PropertyDecorator,
  );
}

const customField = (n: number) => `lead_field${String(n).padStart(2, '0')}`;
const CustomField = (n: number) =>
  LeadText(customField(n), CUSTOM_FIELD_TEXT, `Custom field ${n}; also {{${customField(n)}}} and its /instance/updateFieldsMap name`);

const chatNamed = (dto: EditLeadDto) => dto.id !== undefined || (dto.number === undefined && dto.phone === undefined);

/**
 * `POST /chat/editLead`: the lead fields of one chat. Absent fields stay as they are; '' (or null)
 * clears a text, [] the tags.
 */
export class EditLeadDto {
  @ValidateIf(chatNamed)
  @IsDefined({ message: 'id is required: the chat as wa_chatid, wa_fastid or a phone number' })
  @IsString({ message: 'id must be a string: the chat as wa_chatid, wa_fastid or a phone number' })
  @MaxLength(CHAT_ID_LENGTH, { message: `id must be at most ${CHAT_ID_LENGTH} characters` })
  @Matches(/\S/, { message: 'id is required: the chat as wa_chatid, wa_fastid or a phone number' })
  @JSONSchema({ description: 'The chat: wa_chatid (5511999999999@s.whatsapp.net, …@lid, …@g.us), wa_fastid (owner:number) or a phone number' })
  id?: string;

  @IsOptional()
  @IsString({ message: 'number must be a string' })
  @MaxLength(CHAT_ID_LENGTH, { message: `number must be at most ${CHAT_ID_LENGTH} characters` })
  @JSONSchema({ description: 'The chat, when id is not given (older clients)' })
  number?: string;

  @IsOptional()
  @IsString({ message: 'phone must be a string' })
  @MaxLength(CHAT_ID_LENGTH, { message: `phone must be at most ${CHAT_ID_LENGTH} characters` })
  @JSONSchema({ description: 'Older spelling of number' })
  phone?: string;

  @LeadInteger('chatbot_disableUntil', 0, Number.MAX_SAFE_INTEGER, 'UTC timestamp until which the chatbot stays off for this chat; 0 turns it back on')
  chatbot_disableUntil?: number;

  @ValidateIf((_dto: unknown, value: unknown) => value !== undefined)
  @IsBoolean({ message: 'lead_isTicketOpen must be a boolean' })
  @JSONSchema({ description: "The lead's ticket is open, being handled (true), or closed, resolved (false)" })
  lead_isTicketOpen?: boolean;

  @LeadText('lead_assignedAttendant_id', SHORT_TEXT, 'The attendant; "" removes the assignment') lead_assignedAttendant_id?: string;

  @LeadInteger('lead_kanbanOrder', Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, 'Position of the card on the kanban board (larger first)')
  lead_kanbanOrder?: number;

  @Transform(({ value }: { value: unknown }) => (value === null ? [] : value))
  @IsOptional()
  @IsArray({ message: 'lead_tags must be an array of strings' })
  @ArrayMaxSize(LEAD_LIMITS.tags, { message: `lead_tags must have at most ${LEAD_LIMITS.tags} tags` })
  @IsString({ each: true, message: 'lead_tags must be an array of strings' })
  @MaxLength(LEAD_LIMITS.tagLength, { each: true, message: `each of lead_tags must be at most ${LEAD_LIMITS.tagLength} characters` })
  @JSONSchema({ description: 'The lead’s tags, all of them; [] removes every tag' })
  lead_tags?: string[];

  @JSONSchema({ description: "The lead's name" })
  @LeadText('lead_name', SHORT_TEXT)
  lead_name?: string;
  @JSONSchema({ description: "The lead's full name" })
  @LeadText('lead_fullName', SHORT_TEXT)
  lead_fullName?: string;
  @JSONSchema({ description: "The lead's email" })
  @LeadText('lead_email', SHORT_TEXT)
  lead_email?: string;
  @LeadText('lead_personalid', SHORT_TEXT, 'Identity document (CPF/CNPJ), digits or formatted') lead_personalid?: string;
  @LeadText('lead_personalId', SHORT_TEXT, 'Older spelling of lead_personalid') lead_personalId?: string;
  @JSONSchema({ description: "The lead's status in your sales funnel" })
  @LeadText('lead_status', SHORT_TEXT)
  lead_status?: string;
  @JSONSchema({ description: 'Notes about the lead' })
  @LeadText('lead_notes', NOTES_TEXT)
  lead_notes?: string;

  @CustomField(1) lead_field01?: string;
  @CustomField(2) lead_field02?: string;
  @CustomField(3) lead_field03?: string;
  @CustomField(4) lead_field04?: string;
  @CustomField(5) lead_field05?: string;
  @CustomField(6) lead_field06?: string;
  @CustomField(7) lead_field07?: string;
  @CustomField(8) lead_field08?: string;
  @CustomField(9) lead_field09?: string;
  @CustomField(10) lead_field10?: string;
  @CustomField(11) lead_field11?: string;
  @CustomField(12) lead_field12?: string;
  @CustomField(13) lead_field13?: string;
  @CustomField(14) lead_field14?: string;
  @CustomField(15) lead_field15?: string;
  @CustomField(16) lead_field16?: string;
  @CustomField(17) lead_field17?: string;
  @CustomField(18) lead_field18?: string;
  @CustomField(19) lead_field19?: string;
  @CustomField(20) lead_field20?: string;
}

/** The lead fields a chat stores, as the Chat record names them. */
export const LEAD_FIELDS = [
  'lead_name',
  'lead_fullName',
  'lead_email',
  'lead_personalid',
  'lead_status',
  'lead_tags',
  'lead_notes',
  'lead_isTicketOpen',
  'lead_assignedAttendant_id',
  'lead_kanbanOrder',
  ...Array.from({ length: 20 }, (_, index) => customField(index + 1)),
  'chatbot_disableUntil',
] as const;
