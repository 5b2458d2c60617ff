// The `update_lead` tool the model may call: its JSON schema (standard and custom lead fields) and the
// check of what the model wrote into the lead fields a chat's row keeps.
import { CUSTOM_LEAD_FIELDS, LEAD_LIMITS, leadFieldError, leadTextLimit } from '@gw/domain';

export const LEAD_FIELDS = ['lead_name', 'lead_fullName', 'lead_email', 'lead_personalid', 'lead_status', 'lead_tags', 'lead_notes', 'lead_isTicketOpen'];
/** The lead fields the model may write (`update_lead`), with what each one holds; the custom fields follow (their names from the instance's fieldsMap). */
const WRITABLE_LEAD: Record<string, string> = {
  lead_name: 'the name the contact goes by',
  lead_fullName: 'full name',
  lead_email: 'e-mail address',
  lead_personalid: 'personal document number (CPF, …)',
  lead_status: 'the stage of the lead (e.g. novo, qualificado, cliente)',
  lead_notes: 'notes about the contact',
};

/** A custom field's name as the operator set it (`/instance/updateFieldsMap`), or ''. */
export function fieldName(fieldsMap: Record<string, string>, field: string): string {
  const name = fieldsMap[field];
  return typeof name === 'string' ? name.trim() : '';
}

/**
 * `update_lead`'s parameters: the lead texts, the custom fields lead_field01…20 (described by the names
 * the instance gave them) and lead_tags, with `/chat/editLead`'s limits.
 */
export function leadToolSchema(fieldsMap: Record<string, string>): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (const [field, description] of Object.entries(WRITABLE_LEAD)) properties[field] = { type: 'string', description, maxLength: leadTextLimit(field) };
  for (const field of CUSTOM_LEAD_FIELDS) {
    const name = fieldName(fieldsMap, field);
    properties[field] = {
      type: 'string',
      description: name ? `custom field "${name}"` : 'custom field (unnamed: only when your instructions say what it holds)',
      maxLength: LEAD_LIMITS.customField,
    };
  }
  properties.lead_tags = {
    type: 'array',
    items: { type: 'string', maxLength: LEAD_LIMITS.tagLength },
    maxItems: LEAD_LIMITS.tags,
    description: 'ALL of the lead’s tags: it replaces the tags the contact has (keep the current ones you do not mean to remove); [] removes every tag',
  };
  return { type: 'object', properties, additionalProperties: false };
}

/**
 * The lead fields of an `update_lead` call, checked as `/chat/editLead` checks them: a bad value refuses
 * the whole call (`errors`); a name that is no writable lead field is left out (`ignored`), as the route
 * leaves out fields it does not know.
 */
export function leadUpdate(args: Record<string, unknown>): { fields: Record<string, string | string[]>; errors: string[]; ignored: string[] } {
  const fields: Record<string, string | string[]> = {};
  const errors: string[] = [];
  const ignored: string[] = [];
  for (const [field, value] of Object.entries(args)) {
    if (value === undefined) continue;
    if (!(field in WRITABLE_LEAD) && !CUSTOM_LEAD_FIELDS.includes(field) && field !== 'lead_tags') {
      ignored.push(field);
      continue;
    }
    // null clears, as /chat/editLead takes it.
    const given = value === null ? (field === 'lead_tags' ? [] : '') : value;
    const error = leadFieldError(field, given);
    if (error) errors.push(error);
    else fields[field] = field === 'lead_tags' ? [...(given as string[])] : (given as string);
  }
  return { fields, errors, ignored };
}
