import { createCipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import { unwrapMessage, type ProtoMessage } from '../message-content';
import { InteractiveError, type ProtoJson } from './builders';

/**
 * Interactive replies (`POST /send/text` with `replyid` and a text starting with `>`, spec rules 3-4):
 * what the original message offers, which option the text selects, and the response message.
 * Originals come either as a WAProto message (camelCase, bytes as Uint8Array) or as the stored
 * `content` (Go-style names such as `rowID`, bytes as base64): fields are read case-insensitively.
 */
export interface ReplyOption {
  id: string;
  text: string;
  description?: string;
  /** quick_reply, cta_url, cta_call, cta_copy… for native flow; RESPONSE / url / call for the others. */
  name: string;
  replyable: boolean;
  /** Template button index; carousel card index. */
  index?: number;
  card?: number;
}

export type InteractiveOriginal =
  | { kind: 'poll'; name: string; options: string[]; secret: Uint8Array | null }
  | { kind: 'list'; options: ReplyOption[] }
  | { kind: 'buttons'; options: ReplyOption[] }
  | { kind: 'template'; options: ReplyOption[] }
  | { kind: 'native'; options: ReplyOption[] };

type Obj = Record<string, unknown>;

/** A field by name, whatever its casing (`rowId` / `rowID`, `buttonParamsJson` / `buttonParamsJSON`). */
function get(value: unknown, name: string): unknown {
  if (!value || typeof value !== 'object') return undefined;
  const object = value as Obj;
  if (name in object) return object[name];
  const lower = name.toLowerCase();
  const key = Object.keys(object).find((candidate) => candidate.toLowerCase() === lower);
  return key === undefined ? undefined : object[key];
}

function str(value: unknown): string {
  return typeof value === 'string' ? value : typeof value === 'number' ? String(value) : '';
}

function arr(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function bytes(value: unknown): Uint8Array | null {
  if (value instanceof Uint8Array) return value.length ? value : null;
  if (typeof value === 'string' && value) return Buffer.from(value, 'base64');
  if (value && typeof value === 'object' && (value as Obj).type === 'Buffer') {
    const data = (value as Obj).data;
    if (Array.isArray(data)) return Uint8Array.from(data as number[]);
    if (typeof data === 'string') return Buffer.from(data, 'base64');
  }
  return null;
}

/** Text of a HighlyStructuredMessage (templates) or a plain string. */
function structuredText(value: unknown): string {
  if (typeof value === 'string') return value;
  return str(get(value, 'fallbackLc')) || str(get(value, 'fallbackLg')) || str(get(value, 'elementName'));
}

function nativeFlowOptions(flow: unknown, card?: number): ReplyOption[] {
  return arr(get(flow, 'buttons')).map((button) => {
    const name = str(get(button, 'name'));
    let params: Obj = {};
    try {
      params = JSON.parse(str(get(button, 'buttonParamsJson')) || '{}') as Obj;
    } catch {
      // a button without readable params still counts for positions
    }
    return { id: str(params.id), text: str(params.display_text), name, replyable: name === 'quick_reply', ...(card !== undefined ? { card } : {}) };
  });
}

function interactiveOptions(message: unknown): ReplyOption[] {
  const carousel = get(message, 'carouselMessage');
  if (carousel) return arr(get(carousel, 'cards')).flatMap((card, index) => nativeFlowOptions(get(card, 'nativeFlowMessage'), index));
  return nativeFlowOptions(get(message, 'nativeFlowMessage'));
}

function templateOptions(template: unknown): ReplyOption[] {
  const interactive = get(template, 'interactiveMessageTemplate');
  if (interactive) return interactiveOptions(interactive);
  const hydrated = get(template, 'hydratedTemplate') ?? get(template, 'hydratedFourRowTemplate');
  if (hydrated) {
    return arr(get(hydrated, 'hydratedButtons')).map((button, position) => {
      const index = Number(get(button, 'index') ?? position);
      const quick = get(button, 'quickReplyButton');
      if (quick) return { id: str(get(quick, 'id')), text: str(get(quick, 'displayText')), name: 'quick_reply', replyable: true, index };
      const other = get(button, 'urlButton') ?? get(button, 'callButton');
      return { id: '', text: str(get(other, 'displayText')), name: get(button, 'urlButton') ? 'url' : 'call', replyable: false, index };
    });
  }
  const fourRow = get(template, 'fourRowTemplate');
  return arr(get(fourRow, 'buttons')).map((button, position) => {
    const index = Number(get(button, 'index') ?? position);
    const quick = get(button, 'quickReplyButton');
    if (quick) return { id: str(get(quick, 'id')), text: structuredText(get(quick, 'displayText')), name: 'quick_reply', replyable: true, index };
    const other = get(button, 'urlButton') ?? get(button, 'callButton');
    return { id: '', text: structuredText(get(other, 'displayText')), name: get(button, 'urlButton') ? 'url' : 'call', replyable: false, index };
  });
}

/** What a message offers to reply to, or null when it is not a poll, list or buttons message. */
export function interactiveOriginal(raw: ProtoMessage | null | undefined): InteractiveOriginal | null {
  const outer = raw ?? {};
  const message = unwrapMessage(outer);
  for (const field of ['pollCreationMessage', 'pollCreationMessageV2', 'pollCreationMessageV3', 'pollCreationMessageV5']) {
    const poll = get(message, field);
    if (!poll) continue;
    const context = get(outer, 'messageContextInfo') ?? get(message, 'messageContextInfo');
    const secret = bytes(get(context, 'messageSecret')) ?? bytes(get(poll, 'encKey'));
    return { kind: 'poll', name: str(get(poll, 'name')), options: arr(get(poll, 'options')).map((option) => str(get(option, 'optionName'))), secret };
  }
  const list = get(message, 'listMessage');
  if (list) {
    const options = arr(get(list, 'sections')).flatMap((section) =>
      arr(get(section, 'rows')).map((row) => ({
        id: str(get(row, 'rowId')),
        text: str(get(row, 'title')),
        description: str(get(row, 'description')),
        name: 'row',
        replyable: true,
      })),
    );
    return { kind: 'list', options };
  }
  const buttons = get(message, 'buttonsMessage');
  if (buttons) {
    const options = arr(get(buttons, 'buttons')).map((button) => {
      const type = get(button, 'type');
      const native = type === 2 || type === 'NATIVE_FLOW';
      return {
        id: str(get(button, 'buttonId')),
        text: str(get(get(button, 'buttonText'), 'displayText')),
        name: native ? str(get(get(button, 'nativeFlowInfo'), 'name')) : 'RESPONSE',
        replyable: !native,
      };
    });
    return { kind: 'buttons', options };
  }
  const template = get(message, 'templateMessage');
  if (template) return { kind: get(template, 'interactiveMessageTemplate') ? 'native' : 'template', options: templateOptions(template) };
  const interactive = get(message, 'interactiveMessage');
  if (interactive && (get(interactive, 'nativeFlowMessage') || get(interactive, 'carouselMessage')))
    return { kind: 'native', options: interactiveOptions(interactive) };
  return null;
}

const position = (selector: string, count: number): number | null => {
  if (!/^\d+$/.test(selector)) return null;
  const index = Number(selector) - 1;
  return index >= 0 && index < count ? index : null;
};

/** The poll option a `>N` selects (1-based; the exact option text is accepted too). */
export function selectPollOption(options: string[], selector: string): number {
  const index = position(selector, options.length) ?? (options.includes(selector) ? options.indexOf(selector) : null);
  if (index === null)
    throw new InteractiveError(`option "${selector}" does not exist: the poll has ${options.length} options (give the position, 1 to ${options.length})`);
  return index;
}

/** List rows: rowId first, then exact item text, then position. Buttons: id, exact text, position. */
export function selectOption(options: ReplyOption[], selector: string, what: 'list' | 'buttons'): ReplyOption {
  const found =
    options.find((option) => option.id !== '' && option.id === selector) ??
    options.find((option) => option.text === selector) ??
    (position(selector, options.length) !== null ? options[position(selector, options.length)!] : undefined);
  if (!found) {
    throw new InteractiveError(
      what === 'list'
        ? `option "${selector}" does not exist in the list (give a rowId, an item text or a position 1 to ${options.length})`
        : `option "${selector}" does not exist among the buttons (give a button id, its text or a position 1 to ${options.length})`,
    );
  }
  if (!found.replyable) throw new InteractiveError(`button "${found.text}" is a ${found.name} button: URL, call and copy buttons cannot be replied to`);
  return found;
}

export interface QuotedContext {
  stanzaId: string;
  participant?: string;
  quotedMessage?: ProtoJson;
}

function contextInfo(quoted: QuotedContext): ProtoJson {
  return {
    stanzaId: quoted.stanzaId,
    ...(quoted.participant ? { participant: quoted.participant } : {}),
    ...(quoted.quotedMessage ? { quotedMessage: quoted.quotedMessage } : {}),
  };
}

/** The response message of a list, buttons, template or native flow original. */
export function buildOptionReply(
  kind: Exclude<InteractiveOriginal['kind'], 'poll'>,
  option: ReplyOption,
  quoted: QuotedContext,
): { message: ProtoJson; messageType: string } {
  const context = contextInfo(quoted);
  switch (kind) {
    case 'list':
      return {
        message: {
          listResponseMessage: {
            title: option.text,
            description: option.description ?? '',
            listType: 1,
            singleSelectReply: { selectedRowId: option.id || option.text },
            contextInfo: context,
          },
        },
        messageType: 'ListResponseMessage',
      };
    case 'buttons':
      return {
        message: { buttonsResponseMessage: { selectedButtonId: option.id || option.text, selectedDisplayText: option.text, type: 1, contextInfo: context } },
        messageType: 'ButtonsResponseMessage',
      };
    case 'template':
      return {
        message: {
          templateButtonReplyMessage: {
            selectedId: option.id || option.text,
            selectedDisplayText: option.text,
            selectedIndex: option.index ?? 0,
            contextInfo: context,
          },
        },
        messageType: 'TemplateButtonReplyMessage',
      };
    case 'native':
      return {
        message: {
          interactiveResponseMessage: {
            body: { text: option.text, format: 0 },
            nativeFlowResponseMessage: { name: 'quick_reply', paramsJson: JSON.stringify({ id: option.id || option.text }), version: 3 },
            contextInfo: context,
          },
        },
        messageType: 'InteractiveResponseMessage',
      };
  }
}

/** `PollVoteMessage { repeated bytes selectedOptions = 1 }`, encoded by hand (field 1, length-delimited). */
export function encodePollVote(selectedHashes: Uint8Array[]): Buffer {
  const parts: Buffer[] = [];
  for (const hash of selectedHashes) {
    if (hash.length > 127) throw new Error('option hash too long');
    parts.push(Buffer.from([0x0a, hash.length]), Buffer.from(hash));
  }
  return Buffer.concat(parts);
}

export function pollOptionHash(optionName: string): Buffer {
  return createHash('sha256').update(Buffer.from(optionName)).digest();
}

export interface PollVoteContext {
  /** The poll's 32-byte message secret. */
  secret: Uint8Array;
  pollMsgId: string;
  pollCreatorJid: string;
  voterJid: string;
}

/**
 * Encrypts a vote the way voters do and Baileys' `decryptPollVote` reads it: the key is
 * HMAC(HMAC(0³², secret), msgId‖creator‖voter‖"Poll Vote"‖0x01), AES-256-GCM with a 12-byte IV,
 * `msgId\0voter` as additional data, the tag appended to the ciphertext.
 */
export function encryptPollVote(optionNames: string[], context: PollVoteContext, iv: Buffer = randomBytes(12)): { encPayload: Buffer; encIv: Buffer } {
  const sign = Buffer.concat([
    Buffer.from(context.pollMsgId),
    Buffer.from(context.pollCreatorJid),
    Buffer.from(context.voterJid),
    Buffer.from('Poll Vote'),
    Buffer.from([1]),
  ]);
  const key0 = createHmac('sha256', Buffer.alloc(32)).update(context.secret).digest();
  const key = createHmac('sha256', key0).update(sign).digest();
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(`${context.pollMsgId}\u0000${context.voterJid}`));
  const plaintext = encodePollVote(optionNames.map(pollOptionHash));
  return { encPayload: Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]), encIv: iv };
}

/** The `pollUpdateMessage` voting for `optionNames` on a poll. */
export function buildPollVote(
  optionNames: string[],
  poll: PollVoteContext & { chatJid: string; fromMe: boolean; participant?: string },
  timestampMs = Date.now(),
): { message: ProtoJson; messageType: string } {
  const { encPayload, encIv } = encryptPollVote(optionNames, poll);
  return {
    message: {
      pollUpdateMessage: {
        pollCreationMessageKey: {
          remoteJid: poll.chatJid,
          fromMe: poll.fromMe,
          id: poll.pollMsgId,
          ...(poll.participant ? { participant: poll.participant } : {}),
        },
        vote: { encPayload: encPayload.toString('base64'), encIv: encIv.toString('base64') },
        senderTimestampMs: timestampMs,
      },
    },
    messageType: 'PollUpdateMessage',
  };
}
