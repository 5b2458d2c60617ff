/**
 * Chat identifiers accepted in `number` and chat fields (spec "Identifier (JID) forms"): digits of an
 * international phone number, or a JID of a user (`@s.whatsapp.net`), a local id (`@lid`), a group
 * (`@g.us`) or a channel (`@newsletter`).
 */
export const USER_SERVER = 's.whatsapp.net';

export type ChatKind = 'user' | 'lid' | 'group' | 'newsletter';

export interface ChatTarget {
  jid: string;
  kind: ChatKind;
}

const SERVERS: Record<string, ChatKind> = { [USER_SERVER]: 'user', lid: 'lid', 'g.us': 'group', newsletter: 'newsletter' };

/**
 * Parses what a client sent as `number`. Phone numbers may carry `+`, spaces, dots, dashes and
 * parentheses; the country code is mandatory (8 to 15 digits). Returns null when it is none of the forms.
 */
export function parseChatTarget(input: string): ChatTarget | null {
  const value = input.trim();
  const at = value.lastIndexOf('@');
  if (at > 0) {
    const server = value.slice(at + 1).toLowerCase();
    const kind = SERVERS[server];
    if (!kind) return null;
    const user = value.slice(0, at);
    // Device suffixes (`:12`) belong to device JIDs, never to a chat.
    const bare = user.split(':')[0];
    const valid =
      kind === 'group'
        ? /^\d{5,}(-\d+)?$/.test(bare)
        : kind === 'newsletter'
          ? /^\d{5,}$/.test(bare)
          : kind === 'lid'
            ? /^\d{5,}$/.test(bare)
            : /^\d{8,15}$/.test(bare);
    return valid ? { jid: `${bare}@${server}`, kind } : null;
  }
  const digits = phoneDigits(value);
  return digits ? { jid: `${digits}@${USER_SERVER}`, kind: 'user' } : null;
}

/** Digits of a phone number written in any usual way, or null when it is not one. */
export function phoneDigits(input: string): string | null {
  const value = input.trim();
  if (!/^\+?[\d\s().-]+$/.test(value)) return null;
  const digits = value.replace(/\D/g, '');
  return digits.length >= 8 && digits.length <= 15 ? digits : null;
}

/** The user part of a JID without device (`5511…:3@s.whatsapp.net` → `5511…`). */
export function jidUser(jid: string): string {
  return jid.split('@')[0].split(':')[0];
}

/** `5511…:3@s.whatsapp.net` → `5511…@s.whatsapp.net`. */
export function normalizeUserJid(jid: string): string {
  const at = jid.indexOf('@');
  if (at < 0) return jid;
  return `${jidUser(jid)}${jid.slice(at)}`;
}

export function isGroupJid(jid: string): boolean {
  return jid.endsWith('@g.us');
}

export function isLidJid(jid: string): boolean {
  return jid.endsWith('@lid');
}

export function isNewsletterJid(jid: string): boolean {
  return jid.endsWith('@newsletter');
}

/**
 * A display form of a phone number: `+55 11 90000-0000` for Brazil (what the captures show), else
 * `+<country> <rest>` as a plain grouping.
 */
export function formatPhone(digits: string): string {
  if (!/^\d+$/.test(digits)) return '';
  if (digits.startsWith('55') && (digits.length === 12 || digits.length === 13)) {
    const area = digits.slice(2, 4);
    const rest = digits.slice(4);
    const split = rest.length - 4;
    return `+55 ${area} ${rest.slice(0, split)}-${rest.slice(split)}`;
  }
  return `+${digits}`;
}
