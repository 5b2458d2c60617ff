// Inbound messages the recipient cannot decrypt, and LID senders the server names without their
// phone number: what the real server delivers in those cases, applied at delivery time.
import { jidDecode } from './baileys';
import type { DeviceRef } from './accounts';
import type { BinaryNode } from './node-io';

/**
 * How a message reaches the matched device:
 * - bad-mac: its `<enc>` garbled once ("Bad MAC"), as reported after WhatsApp's PN→LID move (Baileys
 *   issues #2331, #1769, #2234); the resend the retry receipt asks for decrypts (heals on retry)
 * - no-session: its `pkmsg` delivered as a `msg`, so the recipient has no session to decrypt it with
 *   ("No session record" / "No matching sessions", Baileys #2331, #2378: a sender addressed by LID
 *   whose session-establishing pkmsg the recipient never got); the resend is a fresh pkmsg (heals)
 * - never: every delivery of the message, retries included, garbled for every device the filter
 *   names (the phone too, so it cannot answer a placeholder resend): it never becomes decryptable
 *   (Baileys #2331: "the message simply never arrives")
 * - unavailable: no `<enc>` at all, `<unavailable/>` instead, as WhatsApp sends some messages to
 *   companions (Baileys rc14 messages-recv.js NO_MESSAGE_FOUND_ERROR_TEXT: "Message arrived without
 *   encryption (e.g. CTWA ads messages)", answered with a placeholder resend request to the phone, as
 *   WA Web's processPlaceholderMsg); the phone answers it when it has the message
 */
export type UndecryptableMode = 'bad-mac' | 'no-session' | 'never' | 'unavailable';
export const UNDECRYPTABLE_MODES: readonly UndecryptableMode[] = ['bad-mac', 'no-session', 'never', 'unavailable'];

export interface UndecryptableFaultRule {
  kind: 'undecryptable';
  mode: UndecryptableMode;
  /** Recipient: a device JID, or a user JID / phone number for all of its devices (phone included). */
  device?: string;
  /** How many messages (first deliveries that match) it applies to; omitted means until cleared. */
  count?: number;
}

/**
 * Standing: 1:1 messages from this sender (`device`: its phone number or JID) reach their recipients
 * addressed by LID with no `sender_pn`, as the server does for some contacts (Baileys PR #2744:
 * "For some LID-addressed contacts WhatsApp sends none of the three [participant_pn, sender_pn,
 * peer_recipient_pn] … per-contact server behaviour"). Until cleared.
 */
export interface OmitPnFaultRule {
  kind: 'omit-pn';
  device?: string;
}

/** Messages kept spoiled for every later delivery (never, unavailable): bounded. */
const SPOILED_LIMIT = 50_000;

/** Applies undecryptable rules at delivery: which messages stay spoiled for which devices. */
export class UndecryptableDeliveries {
  /** `${phone}|${deviceId or *}|${id}` → mode, for messages whose later deliveries are spoiled too. */
  private readonly spoiled = new Map<string, UndecryptableMode>();

  /**
   * The stanza as `target` receives it. `take` consumes the first matching rule (or none) for a
   * first delivery; later deliveries of a never/unavailable message are spoiled the same way.
   */
  apply(target: DeviceRef, stanza: BinaryNode, take: () => UndecryptableFaultRule | undefined): BinaryNode {
    const id = stanza.attrs.id;
    if (stanza.tag !== 'message' || !id || stanza.attrs.category === 'peer' || !hasEnc(stanza)) return stanza;
    const phone = target.account.phone;
    const known = this.spoiled.get(`${phone}|*|${id}`) ?? this.spoiled.get(`${phone}|${target.deviceId}|${id}`);
    if (known) return spoil(stanza, known);
    const rule = take();
    if (!rule) return stanza;
    if (rule.mode === 'never' || rule.mode === 'unavailable') {
      const decoded = rule.device?.includes('@') ? jidDecode(rule.device) : undefined;
      const every = !rule.device || !decoded || decoded.device === undefined;
      this.spoiled.set(`${phone}|${every ? '*' : target.deviceId}|${id}`, rule.mode);
      if (this.spoiled.size > SPOILED_LIMIT) {
        const oldest = this.spoiled.keys().next().value;
        if (oldest !== undefined) this.spoiled.delete(oldest);
      }
    }
    return spoil(stanza, rule.mode);
  }
}

function hasEnc(stanza: BinaryNode): boolean {
  return Array.isArray(stanza.content) && stanza.content.some((c) => c.tag === 'enc');
}

function spoil(stanza: BinaryNode, mode: UndecryptableMode): BinaryNode {
  if (!Array.isArray(stanza.content)) return stanza;
  if (mode === 'unavailable') {
    return { ...stanza, content: [...stanza.content.filter((c) => c.tag !== 'enc'), { tag: 'unavailable', attrs: {} }] };
  }
  return {
    ...stanza,
    content: stanza.content.map((c) => {
      if (c.tag !== 'enc' || !(c.content instanceof Uint8Array)) return c;
      // A pkmsg handed over as a msg: the recipient looks for a session it never had.
      if (mode === 'no-session' && c.attrs.type === 'pkmsg') return { ...c, attrs: { ...c.attrs, type: 'msg' } };
      const bytes = Buffer.from(c.content);
      for (let i = Math.floor(bytes.length / 2); i < bytes.length; i++) bytes[i] ^= 0x5a;
      return { ...c, content: bytes };
    }),
  };
}
