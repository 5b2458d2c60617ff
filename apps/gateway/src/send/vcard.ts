/** A vCard 3.0 for /send/contact: every number gets a `waid` so WhatsApp shows the chat button. */
export function buildVcard(fields: { fullName: string; phones: string[]; organization?: string; email?: string; url?: string }): string {
  const escape = (value: string) =>
    value
      .replace(/\\/g, '\\\\')
      .replace(/\n/g, '\\n')
      .replace(/([,;])/g, '\\$1');
  const lines = ['BEGIN:VCARD', 'VERSION:3.0', `FN:${escape(fields.fullName)}`, `N:${escape(fields.fullName)};;;;`];
  if (fields.organization) lines.push(`ORG:${escape(fields.organization)}`);
  for (const phone of fields.phones) {
    const digits = phone.replace(/\D/g, '');
    lines.push(`TEL;type=CELL;type=VOICE;waid=${digits}:+${digits}`);
  }
  if (fields.email) lines.push(`EMAIL:${escape(fields.email)}`);
  if (fields.url) lines.push(`URL:${escape(fields.url)}`);
  lines.push('END:VCARD');
  return lines.join('\n');
}
