export { formatPhone, isGroupJid, isLidJid, isNewsletterJid, jidUser, normalizeUserJid, parseChatTarget, phoneDigits, USER_SERVER } from './jid';
export type { ChatKind, ChatTarget } from './jid';
export { consolidatedName, firstName, resolvePlaceholders } from './placeholders';
export type { PlaceholderContext } from './placeholders';
export { ChoiceError, parseButton, parseButtons, parseCarousel, parseList, parsePoll } from './menu-choices';
export type { CarouselCard, ListRow, ListSection, MenuButton } from './menu-choices';
export { protoFieldName, toProtoJson } from './proto-json';
export { contentField, describeContent, messageTypeName, unwrapMessage } from './message-content';
export type { DescribedContent, ProtoMessage } from './message-content';
