import type {
  BlocklistRepository,
  ChatRepository,
  ContactRepository,
  InboundGroupRepository,
  InstanceRepository,
  LabelRepository,
  Lease,
  LidMappingRepository,
  MessageRepository,
  NewOutboxEvent,
  OutboundLedgerRepository,
  QuickReplyRepository,
  Tx,
} from '@gw/persistence';
import type { Logger } from '@gw/platform';
import type { WAMessage, WASocket } from '../../baileys';
import type { InstanceIdentity } from '../event-payloads';
import type { GroupInfo, GroupInfoCache } from '../group-info-cache';
import type { GroupMetadataCache } from '../group-metadata-cache';
import type { IdentityResolver } from '../identity-resolver';
import type { InboundBackpressure } from '../inbound-backpressure';
import type { InboundStore } from '../inbound-store';
import type { SenderNames } from './sender-names';

/**
 * The repositories the inbound modules write and read with (the worker's, one of each per process). A
 * write inside the handler's transaction binds one to it: `services.chats.within(tx).applyState(…)`.
 */
export interface InboundRepositories {
  instances: InstanceRepository;
  messages: MessageRepository;
  chats: ChatRepository;
  contacts: ContactRepository;
  lidMappings: LidMappingRepository;
  blocklist: BlocklistRepository;
  labels: LabelRepository;
  quickReplies: QuickReplyRepository;
  /** A history chunk's chats in one statement (the group transaction's own go through InboundStore's). */
  inboundGroups: InboundGroupRepository;
  /** The send path's fenced statements (a server ack is a send's result). */
  ledger: OutboundLedgerRepository;
}

/** What every socket's inbound handling shares (one set per worker). */
export interface InboundServices extends InboundRepositories {
  store: InboundStore;
  groups: GroupInfoCache;
  /** Groups as `/group/info` and `/group/list` answer them, dropped by group notifications. */
  groupMetadata: GroupMetadataCache;
  /** Stops reading sockets whose inbound queue (or the worker's) is full. */
  backpressure: InboundBackpressure;
}

/**
 * What the inbound modules of one socket (messages, receipts, contacts…) work with: the socket and its
 * lease, who the instance is, and the handler's ordering and fenced write. Every change they store goes
 * through `write`, inside a task of the handler's queue.
 */
export interface InboundContext {
  readonly instanceId: string;
  readonly socket: WASocket;
  readonly lease: Lease;
  readonly logger: Logger;
  readonly services: InboundServices;
  readonly identities: IdentityResolver;
  /** Push names the message path just wrote, so the contacts.update repeating them is not written again. */
  readonly senders: SenderNames;
  /** The own picture URL as stored (SocketContext.ownPicture), when the session shares it. */
  readonly ownPicture?: { url: string };
  /** Name and owner of the instance, as events carry them (cached briefly). */
  who(): Promise<InstanceIdentity>;
  /** A group's subject, flags and participants (their LID pairs are learned on the way). */
  groupInfo(groupJid: string): Promise<GroupInfo | null>;
  /** Whether the socket is not being read now (SocketReader.stuck): a write does not wait for WhatsApp's answer then (answerWhileRead). */
  readingStuck(): boolean;
  /** One fenced transaction with its outbox events. */
  /** `keys`: the ids of the messages the write touches, when that is all it touches besides their chats and senders (InboundStore.write). */
  /** `options.alone`: a long write (a history chunk) in a transaction of its own, outside the worker's groups (InboundStore.write). */
  write<T>(work: (tx: Tx, events: NewOutboxEvent[]) => Promise<T>, keys?: readonly string[], options?: { alone?: boolean }): Promise<T>;
  /** Retries a failed write a few times, then logs it; a lost lease stops the handler. True when the work completed. */
  withRetry(what: string, detail: Record<string, unknown>, work: () => Promise<void>): Promise<boolean>;
  /** A received message is stored (or needs no storing): its delivery receipt, held until now, is sent (ADR 0035). */
  stored(message: WAMessage): void;
  /** Runs a task on the socket's queue, in order with its events (ops such as a blocklist change). */
  run<T>(task: () => Promise<T>): Promise<T>;
  /**
   * Resolves once the writes of the socket's earlier events have committed (or failed): a pipelined
   * task (InboundQueue) reading what they wrote, from another connection, waits for it first.
   */
  settled(): Promise<void>;
}

const IDENTITY_TTL_MS = 30_000;

/** The instance's name and owner for events, re-read at most every IDENTITY_TTL_MS (and after a reconnect). */
export class InstanceIdentityCache {
  private identity: { value: InstanceIdentity; at: number } | null = null;

  constructor(
    private readonly instanceId: string,
    private readonly instances: InstanceRepository,
    private readonly identities: IdentityResolver,
  ) {}

  async who(): Promise<InstanceIdentity> {
    if (this.identity && Date.now() - this.identity.at < IDENTITY_TTL_MS) return this.identity.value;
    const row = await this.instances.findById(this.instanceId);
    const me = this.identities.me();
    const value = { instanceName: row?.name ?? '', owner: row?.owner || me.pn.split('@')[0] };
    this.identity = { value, at: Date.now() };
    return value;
  }

  forget(): void {
    this.identity = null;
  }
}

/** A write's key for a message it touches (InboundStore.write: writes about different messages may share a wave). */
export function messageKey(messageId: string): string {
  return `message ${messageId}`;
}

/** A write's key for a contact it creates or changes otherwise than by observing a message's sender (by its JID or LID). */
export function contactWriteKey(jid: string): string {
  return `contact ${jid}`;
}

/**
 * The keys of a chat whose last message a write observes through the group's round (observeChat, parked),
 * by each of its identifiers: writes observing one chat under the very same identifiers may share a wave,
 * the round applying their observations one by one in their order (InboundGroupRepository, ADR 0048).
 * Another write of the chat (chatWriteKey, or other identifiers) still goes in a wave of its own.
 */
export function chatObservationKeys(identifiers: ReadonlyArray<string>): string[] {
  const named = identifiers.filter(Boolean);
  return named.map((jid) => observed(`chat ${jid}`, named.join(',')));
}

/**
 * The keys of a message's sender a write observes (observeSender): writes observing one sender with the
 * same identifiers and push name may share a wave, the first one's observation answering the others
 * (InboundBatch.once: one after the other, the later ones would find it unchanged).
 */
export function senderObservationKeys(identifiers: ReadonlyArray<string>, pushName: string): string[] {
  const named = identifiers.filter(Boolean);
  return named.map((jid) => observed(`contact ${jid}`, `${named.join(',')}\u0001${pushName}`));
}

/** The prefix of a shareable key (waves()): its subject (what a plain key names), then how the write observes it. */
export const OBSERVED = 'observe ';
/** Between a shareable key's subject and how it is observed. */
export const OBSERVED_AS = '\u0002';

function observed(subject: string, as: string): string {
  return `${OBSERVED}${subject}${OBSERVED_AS}${as}`;
}

/** A write's key for a chat whose row it updates (by the chat's JID or LID). */
export function chatWriteKey(chat: string): string {
  return `chat ${chat}`;
}
