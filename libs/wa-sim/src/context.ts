// What the protocol handlers (iq router, message router, phones) need from the simulator.
//
// A leaf: it names the handlers' parts by what the others call on them (the interfaces below), never by
// their classes, so the modules that take a SimContext (groups, phone, message-router…) are not imported
// back from here. test/import-cycles.spec.ts keeps wa-sim free of import cycles.
import type { Account, AccountRegistry, DeviceRef, LinkedDevice } from './accounts';
import type { proto } from './baileys';
import type { Logger } from './logger';
import type { BinaryNode } from './node-io';
import type { OmitPnFaultRule } from './undecryptable';

export interface ResolvedOptions {
  /** How 1:1 messages to other users' devices are addressed: LID with sender_pn (default) or PN. */
  incomingAddressing: 'lid' | 'pn';
  /** Create accounts on the fly for unknown phone numbers seen in usync/send. */
  autoCreateAccounts: boolean;
  /** Phones decrypt what they receive (false = load mode: receipts only). */
  phoneDecrypt: boolean;
  /** Defaults for new accounts' automatic receipts. */
  autoReceipts: { deliveredMs: number | null; readMs: number | null };
  /** QR refs handed to an unregistered companion (each lives 60 s / 20 s in Baileys). */
  qrRefs: number;
  /** Answer to the first prekey-count query; 0 makes Baileys upload 812 prekeys. */
  initialPrekeyCount: number;
  mediaHost?: string;
}

/** A message the server accepted, as the message router keeps it to route its receipts. */
export interface MessageRecord {
  id: string;
  sender: DeviceRef;
  /** The chat as the sender addressed it (user JID without device, or group JID). */
  chat: string;
  chatForm: 'pn' | 'lid';
  type: string;
  t: number;
  /** Receipt types already forwarded to the sender (1:1 forwards the first of each). */
  forwarded: Set<string>;
}

/** The message router (message-router.ts) as phones, groups, status broadcasts and send limits use it. */
export interface MessageRouting {
  /** The record of a message the server accepted from `sender` with this id. */
  record(sender: DeviceRef, id: string): MessageRecord | undefined;
  remember(record: MessageRecord): void;
  /** Whether the two accounts have exchanged a 1:1 message. */
  hasConversation(a: Account, b: Account): boolean;
  /** Routes a message stanza from a device; returns the ack for the sender. */
  onMessage(sender: DeviceRef, stanza: BinaryNode): BinaryNode | undefined;
  onReceipt(receiver: DeviceRef, stanza: BinaryNode): void;
}

/** A simulated phone as the group store sends a group message from it (phone.ts, PhoneAgent). */
export interface GroupSendingPhone {
  readonly account: Account;
  readonly ref: DeviceRef;
  encryptFor(target: DeviceRef, plaintext: Buffer): Promise<{ type: 'pkmsg' | 'msg'; ciphertext: Buffer; jid: string }>;
  /** The server accepted the phone's message `id` (its outbox entry moves on). */
  onServerAck(id: string): void;
}

/** The group store (groups.ts) as the message router, the iq router and phones use it. */
export interface GroupRouting {
  /** Fans a group message out to the members' devices; returns an error code for the ack, if any. */
  route(sender: DeviceRef, stanza: BinaryNode, t: number): string | undefined;
  handlePictureIq(sender: DeviceRef, iq: BinaryNode, groupJid: string): BinaryNode;
  sendFromPhone(phone: GroupSendingPhone, groupJid: string, message: proto.IMessage, id: string): Promise<void>;
}

/** The newsletter store (newsletters.ts) as the message router uses it. */
export interface NewsletterRouting {
  /** A post or reaction to a newsletter; returns the ack. */
  route(sender: DeviceRef, stanza: BinaryNode): BinaryNode;
  onViewReceipt(sender: DeviceRef, stanza: BinaryNode): void;
}

/** What a 1:1 message carried: the token its recipient issued to its sender, another one, or none. */
export type CarriedToken = 'valid' | 'invalid' | 'none';

/** The trusted-contact tokens (privacy-tokens.ts) as phones, the iq router and send limits use them. */
export interface PrivacyTokenLedger {
  /** Issues `issuer`'s token to `recipient` and pushes it to the recipient's devices. */
  issue(issuer: Account, recipient: Account): void;
  has(issuer: Account, recipient: Account): boolean;
  judge(sender: Account, stanza: BinaryNode): CarriedToken;
  onIssueIq(issuer: Account, tokens: BinaryNode | undefined): BinaryNode[];
}

/** The fault controller (faults.ts) as the message router asks it about deliveries. */
export interface FaultLookup {
  /** The active omit-pn rule whose device filter matches, if any (the rule is not used up). */
  peek(kind: 'omit-pn', matches: (filter: string) => boolean): OmitPnFaultRule | undefined;
}

export interface SimContext {
  readonly registry: AccountRegistry;
  readonly logger: Logger;
  readonly faults: FaultLookup;
  readonly router: MessageRouting;
  readonly groups: GroupRouting;
  readonly newsletters: NewsletterRouting;
  readonly options: ResolvedOptions;
  /** Trusted-contact tokens issued between accounts (privacy-tokens.ts). */
  readonly privacyTokens: PrivacyTokenLedger;
  /** Pushes a stanza to a companion now, or keeps it until the companion is online and active. */
  deliverToCompanion(device: LinkedDevice, stanza: BinaryNode): void;
  /** Delivers a stanza to any device: a companion socket or an in-process phone. */
  deliver(target: DeviceRef, stanza: BinaryNode, sender?: DeviceRef): void;
  /** Matches a fault's device filter (device JID, user JID or phone) against a device. */
  matchesDevice(filter: string, ref: DeviceRef): boolean;
  /** Something worth persisting changed (a no-op unless the simulator has a stateDir). */
  stateChanged(): void;
}
