export { formatPhone, isGroupJid, isLidJid, isNewsletterJid, jidUser, normalizeUserJid, parseChatTarget, phoneDigits, USER_SERVER } from './jid';
export type { ChatKind, ChatTarget } from './jid';
export { consolidatedName, firstName, resolvePlaceholders } from './placeholders';
export type { PlaceholderContext } from './placeholders';
