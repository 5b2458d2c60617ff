// Trusted-contact privacy tokens (tctokens), as the server plays them. References (docs/protocol.md):
//
// - Issuing. After a 1:1 message a client issues its token to the contact, at most once per 7-day bucket:
//   `<iq xmlns="privacy" type="set" to="s.whatsapp.net"><tokens><token jid={contact} t={unix s}
//   type="trusted_contact"/></tokens></iq>` (whatsmeow tctoken.go issuePrivacyToken, send.go after
//   sendNodeAndGetData; Baileys rc14 Socket/messages-send.js issuePrivacyTokens and the fire-and-forget
//   after sendNode). whatsmeow reads nothing from the answer; rc14 stores a `<token>` with content from it
//   under the contact, so the answer here echoes the token nodes without content.
// - Delivering. The contact's devices are told by `<notification type="privacy_token" from={issuer}
//   sender_lid={issuer LID}><tokens><token jid={contact} t type="trusted_contact">{bytes}</token>`; the
//   token is stored under the issuer's LID (`sender_lid`, else the `from` resolved): whatsmeow
//   notification.go handlePrivacyTokenNotification, Baileys rc14 messages-recv.js
//   handlePrivacyTokenNotification ("In notifications tokenNode.attrs.jid is your own device JID").
// - Using. A later 1:1 message to the issuer carries `<tctoken>{bytes}</tctoken>` as a child of
//   `<message>` (whatsmeow send.go ensureTCToken; rc14 messages-send.js, unless the server prop 10518
//   `privacy_token_sending_on_all_1_on_1_messages` is off), never on peer, group, status or newsletter
//   messages (rc14: "server rejects with 479"). Error 463 is "1:1 message missing privacy token"
//   (rc14 Utils/decode-wa-message.js SERVER_ERROR_CODES.MessageAccountRestriction): established chats
//   carry a token, so a restricted account (the reach-out timelock) may still write to them. The
//   simulator asks for it there only (send-limits.ts); anywhere else a message without one goes through.
//
// The simulated phones issue theirs after their first message to a user, as WhatsApp's clients do.
import { randomBytes } from 'crypto';
import type { Account } from './accounts';
import { nextServerId } from './connection';
import type { CarriedToken, PrivacyTokenLedger, SimContext } from './context';
import { isGroupJid, toUserJid } from './message-router';
import type { BinaryNode } from './node-io';
import { child, children, node, unixNow } from './node-io';

interface Issued {
  token: Buffer;
  t: number;
}

export interface TokenView {
  /** Tokens the account issued: to whom, when. */
  issued: Array<{ to: string; t: number; token: string }>;
  /** Tokens issued to the account: by whom, when. */
  received: Array<{ from: string; t: number; token: string }>;
  /** The account's devices' 1:1 messages and the token each carried (newest last, at most 200). */
  carried: Array<{ id: string; to: string; tctoken: CarriedToken }>;
}

const CARRIED_LIMIT = 200;

export class PrivacyTokens implements PrivacyTokenLedger {
  /** `issuer phone>recipient phone` → the newest token. */
  private readonly issued = new Map<string, Issued>();
  private readonly carried = new Map<string, TokenView['carried']>();

  constructor(private readonly ctx: SimContext) {}

  /**
   * `issuer` issues its token to `recipient` (an issuance IQ of one of its devices, or its phone after a
   * first message): a new token, pushed to every device of the recipient as a privacy_token notification.
   */
  issue(issuer: Account, recipient: Account, t = unixNow()): Issued {
    const issued = { token: randomBytes(24), t };
    this.issued.set(`${issuer.phone}>${recipient.phone}`, issued);
    const stanza = node('notification', { from: issuer.jid, sender_lid: issuer.lidJid, type: 'privacy_token', id: nextServerId(), t: String(t) }, [
      node('tokens', {}, [node('token', { jid: recipient.jid, t: String(t), type: 'trusted_contact' }, issued.token)]),
    ]);
    for (const device of recipient.devices.values()) {
      if (device.deviceId !== 0) this.ctx.deliverToCompanion(device, stanza);
    }
    return issued;
  }

  /** Whether `issuer` ever issued a token to `recipient`. */
  has(issuer: Account, recipient: Account): boolean {
    return this.issued.has(`${issuer.phone}>${recipient.phone}`);
  }

  /** The token a 1:1 `<message>` of `sender` carries, judged against the one its recipient issued to the sender. */
  judge(sender: Account, stanza: BinaryNode): CarriedToken {
    const recipient = this.recipientOf(stanza);
    const carried = child(stanza, 'tctoken')?.content;
    if (!recipient || !(carried instanceof Uint8Array)) return 'none';
    const issued = this.issued.get(`${recipient.phone}>${sender.phone}`);
    return issued && Buffer.from(carried).equals(issued.token) ? 'valid' : 'invalid';
  }

  /** Notes what a routed 1:1 message of `sender` carried (for GET /sim/accounts/{phone}/privacy-tokens). */
  note(sender: Account, stanza: BinaryNode): void {
    const recipient = this.recipientOf(stanza);
    if (!recipient || !stanza.attrs.id || stanza.attrs.category === 'peer') return;
    const list = this.carried.get(sender.phone) ?? [];
    list.push({ id: stanza.attrs.id, to: recipient.jid, tctoken: this.judge(sender, stanza) });
    if (list.length > CARRIED_LIMIT) list.shift();
    this.carried.set(sender.phone, list);
  }

  view(account: Account): TokenView {
    const issued: TokenView['issued'] = [];
    const received: TokenView['received'] = [];
    for (const [key, value] of this.issued) {
      const [from, to] = key.split('>');
      const token = value.token.toString('base64');
      if (from === account.phone) issued.push({ to: this.ctx.registry.get(to)?.jid ?? to, t: value.t, token });
      if (to === account.phone) received.push({ from: this.ctx.registry.get(from)?.jid ?? from, t: value.t, token });
    }
    return { issued, received, carried: [...(this.carried.get(account.phone) ?? [])] };
  }

  /** The answer to an issuance IQ: every requested contact gets the issuer's token by notification. */
  onIssueIq(issuer: Account, tokens: BinaryNode | undefined): BinaryNode[] {
    const answered: BinaryNode[] = [];
    for (const token of children(tokens, 'token')) {
      const jid = token.attrs.jid;
      const recipient = jid ? this.ctx.registry.resolveUser(toUserJid(jid)) : undefined;
      const t = Number(token.attrs.t) || unixNow();
      if (recipient && recipient !== issuer) this.issue(issuer, recipient, t);
      answered.push(node('token', { jid: jid ?? '', t: String(t), type: 'trusted_contact' }));
    }
    return answered;
  }

  clear(): void {
    this.issued.clear();
    this.carried.clear();
  }

  private recipientOf(stanza: BinaryNode): Account | undefined {
    const to = stanza.attrs.recipient ?? stanza.attrs.to;
    if (!to || isGroupJid(to) || to.endsWith('@newsletter') || to.endsWith('@broadcast')) return undefined;
    return this.ctx.registry.resolveUser(toUserJid(to));
  }
}
