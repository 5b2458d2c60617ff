/**
 * The limits of a chat's lead fields, as `/chat/editLead` checks them: one set of rules for the route
 * and for the chatbot's `update_lead` tool, so the model cannot write what the API would refuse.
 */
export const LEAD_LIMITS = {
  /** lead_name, lead_fullName, lead_email, lead_personalid, lead_status, lead_assignedAttendant_id. */
  shortText: 255,
  notes: 10_000,
  /** lead_field01 … lead_field20. */
  customField: 2_000,
  tags: 100,
  tagLength: 100,
} as const;

/** `lead_field01` … `lead_field20`. */
export const CUSTOM_LEAD_FIELDS: readonly string[] = Array.from({ length: 20 }, (_, index) => `lead_field${String(index + 1).padStart(2, '0')}`);

/** The longest text `field` may hold (lead_tags: each tag). */
export function leadTextLimit(field: string): number {
  if (field === 'lead_notes') return LEAD_LIMITS.notes;
  if (field === 'lead_tags') return LEAD_LIMITS.tagLength;
  if (CUSTOM_LEAD_FIELDS.includes(field)) return LEAD_LIMITS.customField;
  return LEAD_LIMITS.shortText;
}

/**
 * What is wrong with `value` for the lead text or tags field `field`, in `/chat/editLead`'s words; null
 * when it is fine. A text: a string of at most its limit ('' clears it). lead_tags: all the tags, an
 * array of strings ([] removes them).
 */
export function leadFieldError(field: string, value: unknown): string | null {
  if (field === 'lead_tags') {
    if (!Array.isArray(value) || value.some((tag) => typeof tag !== 'string')) return 'lead_tags must be an array of strings';
    if (value.length > LEAD_LIMITS.tags) return `lead_tags must have at most ${LEAD_LIMITS.tags} tags`;
    if (value.some((tag: string) => tag.length > LEAD_LIMITS.tagLength)) return `each of lead_tags must be at most ${LEAD_LIMITS.tagLength} characters`;
    return null;
  }
  if (typeof value !== 'string') return `${field} must be a string`;
  const max = leadTextLimit(field);
  if (value.length > max) return `${field} must be at most ${max} characters`;
  return null;
}
