/**
 * Placeholders in outgoing text (spec table "Placeholders"). Known names are replaced (missing values
 * become empty); unknown names stay exactly as written.
 */
export interface PlaceholderContext {
  wa_name?: string;
  wa_contactName?: string;
  lead_name?: string;
  lead_fullName?: string;
  lead_personalid?: string;
  lead_email?: string;
  lead_status?: string;
  lead_notes?: string;
  lead_assignedAttendant_id?: string;
  /** lead_field01 … lead_field20 */
  leadFields?: Record<string, string | undefined>;
  /** The instance's display names of lead fields (`/instance/updateFieldsMap`): lead_fieldNN → name. */
  fieldsMap?: Record<string, string>;
}

const LEAD_KEYS = ['lead_name', 'lead_fullName', 'lead_personalid', 'lead_email', 'lead_status', 'lead_notes', 'lead_assignedAttendant_id'] as const;
const LEAD_FIELD = /^lead_field(0[1-9]|1\d|20)$/;
const PLACEHOLDER = /\{\{\s*([\w.-]+)\s*\}\}/g;

/** `{{name}}`: the first available of lead_name, lead_fullName, wa_contactName, wa_name. */
export function consolidatedName(context: PlaceholderContext): string {
  for (const value of [context.lead_name, context.lead_fullName, context.wa_contactName, context.wa_name]) {
    if (value && value.trim()) return value.trim();
  }
  return '';
}

/** `{{first_name}}`: the first word of the consolidated name with at least 2 characters. */
export function firstName(name: string): string {
  for (const raw of name.split(/\s+/)) {
    const word = raw.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '');
    if ([...word].length >= 2) return word;
  }
  return '';
}

export function resolvePlaceholders(text: string, context: PlaceholderContext): string {
  if (!text.includes('{{')) return text;
  const customNames = new Map<string, string>();
  for (const [field, display] of Object.entries(context.fieldsMap ?? {})) {
    if (LEAD_FIELD.test(field) && display) customNames.set(display.trim(), field);
  }
  return text.replace(PLACEHOLDER, (whole, key: string) => {
    const value = lookup(key, context, customNames);
    return value === undefined ? whole : value;
  });
}

/** The value of a placeholder, '' when known but empty, undefined when the name is unknown. */
function lookup(key: string, context: PlaceholderContext, customNames: Map<string, string>): string | undefined {
  if (key === 'name') return consolidatedName(context);
  if (key === 'first_name') return firstName(consolidatedName(context));
  if (key === 'wa_name') return context.wa_name ?? '';
  if (key === 'wa_contactName') return context.wa_contactName ?? '';
  if ((LEAD_KEYS as readonly string[]).includes(key)) return context[key as (typeof LEAD_KEYS)[number]] ?? '';
  if (LEAD_FIELD.test(key)) return context.leadFields?.[key] ?? '';
  const field = customNames.get(key);
  if (field) return context.leadFields?.[field] ?? '';
  return undefined;
}
