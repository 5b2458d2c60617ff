// What the protocol handlers (iq router, message router, phones) need from the simulator.
import type { Account, AccountRegistry, DeviceRef, LinkedDevice } from './accounts';
import type { FaultController } from './faults';
import type { GroupStore } from './groups';
import type { Logger } from './logger';
import type { MessageRouter } from './message-router';
import type { NewsletterStore } from './newsletters';
import type { BinaryNode } from './node-io';
import type { PhoneAgent } from './phone';
import type { PrivacyTokens } from './privacy-tokens';

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

export interface SimContext {
  readonly registry: AccountRegistry;
  readonly logger: Logger;
  readonly faults: FaultController;
  readonly router: MessageRouter;
  readonly groups: GroupStore;
  readonly newsletters: NewsletterStore;
  readonly options: ResolvedOptions;
  /** Trusted-contact tokens issued between accounts (privacy-tokens.ts). */
  readonly privacyTokens: PrivacyTokens;
  phoneOf(account: Account): PhoneAgent;
  /** Pushes a stanza to a companion now, or keeps it until the companion is online and active. */
  deliverToCompanion(device: LinkedDevice, stanza: BinaryNode): void;
  /** Delivers a stanza to any device: a companion socket or an in-process phone. */
  deliver(target: DeviceRef, stanza: BinaryNode, sender?: DeviceRef): void;
  /** Matches a fault's device filter (device JID, user JID or phone) against a device. */
  matchesDevice(filter: string, ref: DeviceRef): boolean;
  /** Something worth persisting changed (a no-op unless the simulator has a stateDir). */
  stateChanged(): void;
}
