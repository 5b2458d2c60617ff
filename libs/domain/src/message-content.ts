import { toProtoJson } from './proto-json';

/**
 * What the API's Message record says about a WAProto message's content: `messageType` (the proto
 * name, `ExtendedTextMessage`), `type` (text, media, reaction, poll), `mediaType`, `text`, `content`,
 * and the links to other messages (`quoted`, `edited`, `reaction`, `buttonOrListid`, `vote`).
 * Structural types keep this free of Baileys.
 */
export type ProtoMessage = Record<string, unknown>;

export interface DescribedContent {
  messageType: string;
  type: 'text' | 'media' | 'reaction' | 'poll' | 'protocol' | 'unknown';
  mediaType: string;
  text: string;
  content: unknown;
  quoted: string;
  /** Id of the message this one edits (the record then carries the new content). */
  edited: string;
  /** Id of the reacted message. */
  reaction: string;
  buttonOrListid: string;
  vote: string;
  /** Id of the message a revoke deletes. */
  revokes: string;
  /** The inner proto field name (`extendedTextMessage`), '' when none. */
  field: string;
}

const WRAPPERS = [
  'ephemeralMessage',
  'viewOnceMessage',
  'viewOnceMessageV2',
  'viewOnceMessageV2Extension',
  'documentWithCaptionMessage',
  'editedMessage',
  'botInvokeMessage',
  'groupMentionedMessage',
];
const SKIP_FIELDS = new Set(['messageContextInfo', 'senderKeyDistributionMessage']);
const PROTOCOL_REVOKE = 0;
const PROTOCOL_EDIT = 14;

/** Strips the envelopes (ephemeral, view once, document with caption…) down to the content message. */
export function unwrapMessage(message: ProtoMessage | null | undefined): ProtoMessage {
  let current: ProtoMessage = message ?? {};
  for (let depth = 0; depth < 5; depth++) {
    const wrapper = WRAPPERS.find((key) => current[key] && typeof current[key] === 'object');
    if (!wrapper) break;
    const inner = (current[wrapper] as { message?: ProtoMessage }).message;
    if (!inner) break;
    current = inner;
  }
  return current;
}

/** The one content field of a message (`conversation`, `imageMessage`, …). */
export function contentField(message: ProtoMessage): string {
  return Object.keys(message).find((key) => !SKIP_FIELDS.has(key) && message[key] !== null && message[key] !== undefined) ?? '';
}

export function messageTypeName(field: string): string {
  return field ? field[0].toUpperCase() + field.slice(1) : 'Unknown';
}

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function contextOf(inner: unknown): Record<string, unknown> {
  const context = (inner as { contextInfo?: unknown } | null)?.contextInfo;
  return context && typeof context === 'object' ? (context as Record<string, unknown>) : {};
}

export function describeContent(raw: ProtoMessage | null | undefined): DescribedContent {
  const message = unwrapMessage(raw);
  const field = contentField(message);
  const inner = (message[field] ?? {}) as Record<string, unknown>;
  const result: DescribedContent = {
    messageType: messageTypeName(field),
    type: 'unknown',
    mediaType: '',
    text: '',
    content: toProtoJson(inner) ?? {},
    quoted: str(contextOf(inner).stanzaId),
    edited: '',
    reaction: '',
    buttonOrListid: '',
    vote: '',
    revokes: '',
    field,
  };

  switch (field) {
    case 'conversation':
      return { ...result, type: 'text', text: str(message.conversation), content: str(message.conversation) };
    case 'extendedTextMessage':
      return { ...result, type: 'text', text: str(inner.text) };
    case 'imageMessage':
      return { ...result, type: 'media', mediaType: 'image', text: str(inner.caption) };
    case 'videoMessage':
      return { ...result, type: 'media', mediaType: inner.gifPlayback ? 'gif' : inner.ptv ? 'ptv' : 'video', text: str(inner.caption) };
    case 'ptvMessage':
      return { ...result, type: 'media', mediaType: 'ptv', text: str(inner.caption) };
    case 'audioMessage':
      return { ...result, type: 'media', mediaType: inner.ptt ? 'ptt' : 'audio' };
    case 'documentMessage':
      return { ...result, type: 'media', mediaType: 'document', text: str(inner.caption) };
    case 'stickerMessage':
      return { ...result, type: 'media', mediaType: 'sticker' };
    case 'contactMessage':
      return { ...result, type: 'media', mediaType: 'vcard', text: str(inner.displayName) };
    case 'contactsArrayMessage':
      return { ...result, type: 'media', mediaType: 'contact_array', text: str(inner.displayName) };
    case 'locationMessage':
    case 'liveLocationMessage':
      return { ...result, type: 'media', mediaType: 'location', text: str(inner.name) };
    case 'reactionMessage': {
      const key = (inner.key ?? {}) as Record<string, unknown>;
      return { ...result, type: 'reaction', text: str(inner.text), reaction: str(key.id) };
    }
    case 'pollCreationMessage':
    case 'pollCreationMessageV2':
    case 'pollCreationMessageV3':
      return { ...result, type: 'poll', text: str(inner.name) };
    case 'pollUpdateMessage': {
      const key = (inner.pollCreationMessageKey ?? {}) as Record<string, unknown>;
      return { ...result, type: 'poll', quoted: str(key.id) };
    }
    case 'listResponseMessage': {
      const reply = (inner.singleSelectReply ?? {}) as Record<string, unknown>;
      return { ...result, type: 'media', mediaType: 'list_response', buttonOrListid: str(reply.selectedRowId), vote: str(inner.title) };
    }
    case 'buttonsResponseMessage':
      return { ...result, type: 'media', mediaType: 'buttons_response', buttonOrListid: str(inner.selectedButtonId), vote: str(inner.selectedDisplayText) };
    case 'templateButtonReplyMessage':
      return { ...result, type: 'media', mediaType: 'template_button_reply', buttonOrListid: str(inner.selectedId), vote: str(inner.selectedDisplayText) };
    case 'interactiveResponseMessage': {
      const flow = (inner.nativeFlowResponseMessage ?? {}) as Record<string, unknown>;
      let id = '';
      try {
        id = str((JSON.parse(str(flow.paramsJson) || '{}') as Record<string, unknown>).id);
      } catch {
        // a malformed paramsJson just carries no id
      }
      const body = (inner.body ?? {}) as Record<string, unknown>;
      return { ...result, type: 'media', mediaType: 'interactive_response', buttonOrListid: id, vote: str(body.text) };
    }
    case 'protocolMessage': {
      const key = (inner.key ?? {}) as Record<string, unknown>;
      if (inner.type === PROTOCOL_EDIT && inner.editedMessage) {
        const edited = describeContent(inner.editedMessage as ProtoMessage);
        return { ...edited, edited: str(key.id) };
      }
      if (inner.type === PROTOCOL_REVOKE) return { ...result, type: 'protocol', revokes: str(key.id) };
      return { ...result, type: 'protocol' };
    }
    default:
      return field.endsWith('Message') ? { ...result, type: 'media', mediaType: field.replace(/Message$/, '').toLowerCase() } : result;
  }
}
