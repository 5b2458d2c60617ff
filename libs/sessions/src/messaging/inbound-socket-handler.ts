import { describeContent, type DescribedContent, type ProtoMessage } from '@gw/domain';
import {
  BlocklistRepository,
  ChatRepository,
  ContactRepository,
  FencedOutError,
  LabelRepository,
  LidMappingRepository,
  MessageRepository,
  OutboundLedgerRepository,
  STATUS_RANK,
  type ChatObservation,
  type BlockChange,
  type ChatRow,
  type ContactRow,
  type InstanceRepository,
  type MessageRow,
  type NewOutboxEvent,
} from '@gw/persistence';
import { recordId, type Logger } from '@gw/platform';
import type { EntityManager } from 'typeorm';
import {
  isJidGroup,
  proto,
  type BaileysEventMap,
  type BinaryNode,
  type Contact,
  type GroupMetadata,
  type MessageUserReceiptUpdate,
  type WAMessage,
  type WAMessageUpdate,
} from '../baileys';
import { SerialQueue } from '../session/serial-queue';
import { AwaitedAcks } from '../outbound/awaited-acks';
import type { SocketContext } from '../session/socket-observer';
import { ErrorCode, RpcError, type LabelRefreshReply, type PresenceState } from '@gw/contracts';
import {
  blocksEvent,
  callEvent,
  chatKey,
  chatLabelsEvent,
  labelsEvent,
  presenceEvent,
  newsletterMessagesEvent,
  chatsEvent,
  contactsEvent,
  groupsEvent,
  historyEvent,
  joinedGroupEvent,
  messagesEvent,
  messagesUpdateEvent,
  type InstanceIdentity,
  type PresenceFacts,
} from './event-payloads';
import type { GroupInfo, GroupInfoCache } from './group-info-cache';
import { IdentityResolver, isLid, isPhoneJid, userJid, type Party } from './identity-resolver';
import type { InboundStore } from './inbound-store';
import { statusName, timestampMs, toNewMessage, type MessagePlace } from './message-mapper';
import { storeCallWithin } from './call-message';
import { decryptVote, pollCreationOf } from './poll-votes';
import { refusalText } from '../outbound/refusal';

export interface InboundServices {
  store: InboundStore;
  instances: InstanceRepository;
  messages: MessageRepository;
  lidMappings: LidMappingRepository;
  groups: GroupInfoCache;
}

const ATTEMPTS = 3;
const IDENTITY_TTL_MS = 30_000;
const ACKED_LIMIT = 256;
const EARLY_TTL_MS = 120_000;
/** How long an exact reload asked through the API waits for the phone's answer to count as history. */
const RESEND_WINDOW_MS = 5 * 60_000;
/** How long a JoinedGroup event waits for the group's metadata before it goes out with what is known. */
const GROUP_METADATA_TIMEOUT_MS = 5_000;
/** Receipt states that are announced (`Sent` is the server ack: stored, not announced). */
const ANNOUNCED = new Set(['Delivered', 'Read', 'Played']);
/** App-state collections that carry labels and their chat associations (Baileys' chatModify puts them in `regular`). */
const LABEL_COLLECTIONS = ['regular', 'regular_low', 'regular_high'] as const;
/** Contacts whose presence one socket follows at most (a subscription is one stanza, the set bounds memory). */
const PRESENCE_SUBSCRIPTIONS = 5_000;
const PRESENCE_STATES = new Set<PresenceState>(['available', 'unavailable', 'composing', 'recording', 'paused']);

/** A receipt (or error ack) for a message not stored yet. */
interface EarlyReceipt {
  state: string;
  sender: Party;
  timestamp: number;
  error: string;
  at: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function rank(status: string): number {
  return STATUS_RANK[status] ?? -1;
}

/**
 * The inbound side of one socket: every Baileys event that changes records (messages, receipts,
 * contacts, LID pairs, chat settings) is handled in arrival order on one queue, each change written
 * with its outbox event in one fenced transaction. A fenced-out lease stops the handler; other
 * failures are retried a few times, then logged (the message id is in the log).
 */
export class InboundSocketHandler {
  private readonly queue = new SerialQueue();
  private readonly identities: IdentityResolver;
  private readonly logger: Logger;
  private readonly acked = new Set<string>();
  /** Receipts that arrived before their message was stored (Baileys may emit them first). */
  private readonly early = new Map<string, EarlyReceipt>();
  private identity: { value: InstanceIdentity; at: number } | null = null;
  /** The identity (pn|lid) of ours last stored as a contact by this socket. */
  private selfObserved = '';
  private stopped = false;
  /** The `/labels/refresh` running on this socket: label events emitted meanwhile carry its id. */
  private refresh: { requestId: string; force: boolean } | null = null;
  /** Message ids of exact reloads asked for through the API, and when (see expectResend). */
  private readonly requestedResends = new Map<string, { at: number; requestId: string }>();
  /** Contacts whose presence this socket asked for (presence is per connection). */
  private readonly presenceSubscribed = new Set<string>();
  /** Presence updates received and not yet written (one queued task writes them all). */
  private readonly pendingPresence: Array<BaileysEventMap['presence.update']> = [];

  constructor(
    private readonly context: SocketContext,
    private readonly services: InboundServices,
  ) {
    this.logger = context.logger.child({ component: 'inbound' });
    this.identities = new IdentityResolver(context.socket, context.instanceId, services.lidMappings, this.logger);
  }

  private get instanceId(): string {
    return this.context.instanceId;
  }

  /** Subscribes to the socket; returns the detach function. */
  attach(): () => void {
    const { socket } = this.context;
    const detachers: Array<() => void> = [];
    const on = <E extends keyof BaileysEventMap>(event: E, handle: (data: BaileysEventMap[E]) => Promise<void>) => {
      const listener = (data: BaileysEventMap[E]) => this.enqueue(event, () => handle(data));
      socket.ev.on(event, listener);
      detachers.push(() => socket.ev.off(event, listener));
    };
    on('messages.upsert', ({ messages }) => this.onUpsert(messages));
    on('messages.update', (updates) => this.onMessageUpdates(updates));
    on('message-receipt.update', (updates) => this.onGroupReceipts(updates));
    on('contacts.upsert', (contacts) => this.onContacts(contacts));
    on('contacts.update', (contacts) => this.onContacts(contacts));
    on('lid-mapping.update', (mapping) => this.onLidMapping(mapping.lid, mapping.pn));
    on('chats.update', (updates) => this.onChatUpdates(updates));
    on('groups.update', (updates) => this.onGroupUpdates(updates));
    on('messaging-history.set', (history) => this.onHistory(history));
    on('group-participants.update', (update) => this.onGroupParticipants(update));
    on('call', (calls) => this.onCalls(calls));
    // The refresh id is taken when Baileys emits, not when the queue gets to the event.
    const onNow = <E extends keyof BaileysEventMap>(event: E, prepare: (data: BaileysEventMap[E]) => () => Promise<void>) => {
      const listener = (data: BaileysEventMap[E]) => this.enqueue(event, prepare(data));
      socket.ev.on(event, listener);
      detachers.push(() => socket.ev.off(event, listener));
    };
    onNow('labels.edit', (label) => {
      const requestId = this.refresh?.requestId ?? '';
      return () => this.onLabel(label, requestId);
    });
    onNow('labels.association', (change) => {
      const requestId = this.refresh?.requestId ?? '';
      return () => this.onLabelAssociation(change, requestId);
    });
    // Presence comes in bursts (typing indicators): what piled up while the queue was busy is written in one transaction.
    const onPresence = (update: BaileysEventMap['presence.update']) => {
      this.pendingPresence.push(update);
      if (this.pendingPresence.length === 1) this.enqueue('presence.update', () => this.onPresence(this.pendingPresence.splice(0)));
    };
    socket.ev.on('presence.update', onPresence);
    detachers.push(() => socket.ev.off('presence.update', onPresence));
    on('blocklist.update', (update) => this.onBlocklistUpdate(update));
    on('connection.update', async (update) => {
      if (update.connection === 'open') this.identity = null;
    });
    // Baileys asks for the blocklist at login but keeps the answer to itself: ours follows it, so
    // what changed while the instance was away is stored and announced.
    const onOpen = (update: BaileysEventMap['connection.update']) => {
      if (update.connection !== 'open') return;
      this.syncBlocklist().catch((error: unknown) =>
        error instanceof FencedOutError ? this.failed('blocklist', error) : this.logger.warn({ err: error }, 'blocklist not synchronised at login'),
      );
    };
    socket.ev.on('connection.update', onOpen);
    detachers.push(() => socket.ev.off('connection.update', onOpen));

    // Raw stanzas Baileys does not turn into events: the server ack of our sends (→ Sent), and
    // `played` receipts in groups (Baileys reports those as read).
    const onAck = (node: BinaryNode) => {
      if (node.attrs.error || !node.attrs.id) return;
      this.rememberAck(node.attrs.id);
      // A send waiting for this ack writes Sent with its result.
      if (AwaitedAcks.has(this.context.socket, node.attrs.id)) return;
      this.enqueue('ack', () => this.onServerAck(node.attrs.id));
    };
    const onReceipt = (node: BinaryNode) => {
      if (node.attrs.type !== 'played' || !node.attrs.from?.endsWith('@g.us') || !node.attrs.participant) return;
      const ids = [node.attrs.id, ...receiptListIds(node)].filter(Boolean);
      this.enqueue('receipt', () => this.onGroupPlayed(node.attrs.from, node.attrs.participant, ids, Number(node.attrs.t) || Date.now() / 1000));
    };
    socket.ws.on('CB:ack,class:message', onAck);
    socket.ws.on('CB:receipt', onReceipt);
    detachers.push(() => socket.ws.off('CB:ack,class:message', onAck));
    detachers.push(() => socket.ws.off('CB:receipt', onReceipt));

    // Work already queued finishes (Baileys has acked those stanzas); nothing new is taken.
    return () => {
      for (const detach of detachers.splice(0)) detach();
    };
  }

  /** Resolves when everything queued so far has been handled (tests, shutdown). */
  idle(): Promise<void> {
    return this.queue.run(() => undefined);
  }

  private enqueue(what: string, task: () => Promise<void>): void {
    if (this.stopped) return;
    void this.queue.run(async () => {
      if (this.stopped) return;
      try {
        await task();
      } catch (error) {
        this.failed(what, error);
      }
    });
  }

  private failed(what: string, error: unknown, detail: Record<string, unknown> = {}): void {
    if (error instanceof FencedOutError) {
      // The session is being aborted by the lease keeper; nothing more may be written.
      this.stopped = true;
      this.logger.warn({ event: what, ...detail }, 'lease lost: inbound handling stopped');
      return;
    }
    this.logger.error({ err: error, event: what, ...detail }, 'inbound event could not be stored');
  }

  private async withRetry(what: string, detail: Record<string, unknown>, work: () => Promise<void>): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      if (this.stopped) return;
      try {
        return await work();
      } catch (error) {
        if (error instanceof FencedOutError || attempt >= ATTEMPTS) return this.failed(what, error, detail);
        await sleep(200 * attempt);
      }
    }
  }

  private async who(): Promise<InstanceIdentity> {
    if (this.identity && Date.now() - this.identity.at < IDENTITY_TTL_MS) return this.identity.value;
    const row = await this.services.instances.findById(this.instanceId);
    const me = this.identities.me();
    const value = { instanceName: row?.name ?? '', owner: row?.owner || me.pn.split('@')[0] };
    this.identity = { value, at: Date.now() };
    return value;
  }

  /**
   * One fenced transaction with its events; LID pairs learned since the last write go with it (and
   * are kept for the next one if this one fails).
   */
  private async write<T>(work: (manager: EntityManager, events: NewOutboxEvent[]) => Promise<T>): Promise<T> {
    const learned = this.identities.takeLearned();
    try {
      return await this.services.store.write(this.context.lease, async (manager, events) => {
        await LidMappingRepository.storeWithin(manager, this.instanceId, learned);
        return work(manager, events);
      });
    } catch (error) {
      this.identities.giveBack(learned);
      throw error;
    }
  }

  // --- messages -----------------------------------------------------------------------------------

  /**
   * A message a `/message/history-sync` mode=exact asks the phone to resend: when it arrives (within
   * RESEND_WINDOW_MS) it is announced as `history` with the request's id, not as a new message.
   * Matched by message id: Baileys drops the request id its upsert carries when events are buffered,
   * which is how incoming messages are processed. The caller gives the request id once Baileys has
   * sent the request (`requested`), or withdraws the expectation when asking failed (`failed`). Asked
   * again while the first request is pending, the first request's id is kept (Baileys sends no second
   * request for the same message then).
   */
  expectResend(messageId: string): { requested(requestId: string): void; failed(): void } {
    const now = Date.now();
    for (const [id, entry] of this.requestedResends) if (now - entry.at > RESEND_WINDOW_MS) this.requestedResends.delete(id);
    const entry = this.requestedResends.get(messageId) ?? { at: now, requestId: '' };
    entry.at = now;
    this.requestedResends.set(messageId, entry);
    return {
      requested: (requestId) => {
        if (requestId) entry.requestId = requestId;
      },
      failed: () => {
        if (!entry.requestId && this.requestedResends.get(messageId) === entry) this.requestedResends.delete(messageId);
      },
    };
  }

  private async onUpsert(messages: WAMessage[]): Promise<void> {
    const now = Date.now();
    const reloaded = messages.filter((message) => {
      const entry = message.key?.id ? this.requestedResends.get(message.key.id) : undefined;
      return entry !== undefined && now - entry.at <= RESEND_WINDOW_MS;
    });
    // New messages first: nothing that goes wrong with a reload's announcement can cost them.
    for (const message of messages) {
      if (reloaded.includes(message)) continue;
      await this.withRetry('messages.upsert', { messageId: message.key?.id }, () => this.onMessage(message));
      this.followPresence(message);
    }
    if (reloaded.length > 0) await this.onReloaded(reloaded);
  }

  /** Reloaded messages (expectResend): stored, and announced in one `history` event per request. */
  private async onReloaded(messages: WAMessage[]): Promise<void> {
    const byRequest = new Map<string, WAMessage[]>();
    for (const message of messages) {
      const { requestId } = this.requestedResends.get(message.key.id as string) as { requestId: string };
      byRequest.set(requestId, [...(byRequest.get(requestId) ?? []), message]);
    }
    for (const [requestId, batch] of byRequest) {
      const history = {
        messages: batch,
        chats: [],
        contacts: [],
        syncType: proto.HistorySync.HistorySyncType.ON_DEMAND,
      } as unknown as BaileysEventMap['messaging-history.set'];
      await this.withRetry('messages.reload', { requestId, messageIds: batch.map((message) => message.key.id) }, () => this.onHistory(history, requestId));
      for (const message of batch) this.requestedResends.delete(message.key.id as string);
    }
  }

  /**
   * Stores one message. `history` marks messages of a history sync: stored like any other, announced
   * together in one `history` event instead of one `messages` event each.
   */
  private async onMessage(message: WAMessage, history?: MessageRow[]): Promise<void> {
    const key = message.key;
    const remote = key?.remoteJid ?? '';
    if (!key?.id || !remote || !message.message) return; // stubs, undecryptable placeholders
    if (remote.endsWith('@newsletter')) return this.onNewsletterMessage(message);
    if (remote.endsWith('@broadcast')) return; // status updates: not stored
    if ((message as { category?: string }).category === 'peer') return;
    const described = describeContent(message.message as ProtoMessage);
    if (!described.field) return; // sender-key distribution or context only
    if (described.type === 'protocol') {
      if (described.revokes) await this.onRevoke(message, described);
      return; // history notifications, app-state key shares, ephemeral settings…
    }
    const place = await this.place(message);
    const group = place.isGroup ? await this.groupInfo(remote) : null;
    const vote = described.field === 'pollUpdateMessage' ? await this.pollVote(message, place.sender, described.quoted) : undefined;
    const fromMe = Boolean(key.fromMe);
    let status = fromMe ? statusName(message.status) : '';
    let error = status === 'Failed' ? errorText(message.messageStubParameters) : '';
    if (fromMe) status = this.advancedByReceipts(message, status);
    const early = fromMe ? this.earlyReceipt(key.id) : undefined;
    if (early?.state === 'Failed' && rank(status) < rank('Delivered')) {
      status = 'Failed';
      error = early.error;
    } else if (early && rank(early.state) > rank(status)) {
      status = early.state;
    }
    const senderName = message.pushName || (fromMe ? (this.context.socket.user?.name ?? '') : '') || '';
    const row = toNewMessage(this.instanceId, { message, described, place, senderName, status, vote });
    if (status === 'Failed') row.error = error;
    const who = await this.who();

    await this.write(async (manager, events) => {
      // The copy first: a re-emitted upsert (Baileys emits some messages twice) must not count as a
      // new message for the chat. This queue is the only writer of stored copies (`raw`); the row is
      // locked from here to the commit, a few round trips (a send's result write may wait for it).
      const copy = await MessageRepository.storeCopyWithin(manager, row);
      if (!copy) {
        // Seen before: only a status this copy knows better can change.
        const prior = await MessageRepository.findWithin(manager, this.instanceId, row.messageId);
        if (fromMe && prior) await this.advanceFromUpsert(manager, events, prior, status, error, place);
        // A history batch (or an exact reload) names what it brought, stored before or not.
        if (history && prior) history.push(prior);
        return;
      }
      const { row: stored, created } = copy;

      // Our own identity is observed once per socket (and again if it changes), not on every send.
      const self = fromMe ? `${place.sender.pn}|${place.sender.lid}` : '';
      const contact = fromMe && this.selfObserved === self ? null : await this.observeSender(manager, place.sender, fromMe ? '' : message.pushName || '');
      if (contact) events.push(contactsEvent([contact], who));

      const incoming = !fromMe && described.type !== 'reaction' && !described.edited && described.field !== 'pollUpdateMessage';
      let chat = await this.observeChat(manager, place, group, {
        waName: place.isGroup ? group?.subject : fromMe ? undefined : message.pushName || undefined,
        lastMessage: { timestamp: row.messageTimestamp, type: row.messageType, textVote: row.text || row.vote, sender: row.sender, incoming },
      });
      if (group) chat = (await ChatRepository.applyStateWithin(manager, this.instanceId, chatKey(chat), { groupFlags: group.flags })) ?? chat;

      // An edit (from the phone, another device, or our own /message/edit coming back): the edit is a
      // message of its own whose `edited` names the original (as the captures show); the original takes
      // the new text, `edited` = the edit's id, and is announced as a messages_update `Edited`.
      const original = described.edited
        ? await MessageRepository.applyEditWithin(manager, this.instanceId, described.edited, {
            text: described.text,
            content: described.content,
            editId: row.messageId,
          })
        : null;
      // A row the send path stored first keeps its status unless this copy knows a later one.
      const advanced = fromMe && !created ? await this.advanceTo(manager, stored, status, error) : null;
      const current = advanced ?? stored;
      if (history) {
        history.push(current);
        return;
      }
      events.push(messagesEvent(chat, current, who, group?.subject ?? ''));
      if (original) {
        events.push(
          messagesUpdateEvent(
            { rows: [original], state: 'Edited', type: 'Edited', sender: place.sender, timestamp: timestampMs(message.messageTimestamp) / 1000 },
            who,
          ),
        );
      }
      if (fromMe && (ANNOUNCED.has(current.status) || current.status === 'Failed') && (created || advanced)) {
        // A receipt (or error ack) that came with the upsert (merged by Baileys) or before it: announced as what it was.
        const by = early?.state === current.status ? early : { sender: await this.chatParty(place), timestamp: Date.now() / 1000 };
        const failed = current.status === 'Failed';
        events.push(
          messagesUpdateEvent(
            {
              rows: [current],
              state: current.status as 'Delivered',
              type: failed ? 'Failed' : 'ReadReceipt',
              sender: by.sender,
              timestamp: by.timestamp,
              error: failed ? current.error : undefined,
            },
            who,
          ),
        );
      }
    });
    if (early) this.early.delete(key.id);
    if (fromMe) this.selfObserved = `${place.sender.pn}|${place.sender.lid}`;
  }

  /**
   * The initial history after a pairing (and later syncs): every message stored, then one `history`
   * event carrying the pairing's request_id, so a client can tie the history to its connect.
   */
  private async onHistory(history: BaileysEventMap['messaging-history.set'], reloadRequestId?: string): Promise<void> {
    const collected: MessageRow[] = [];
    for (const message of history.messages ?? []) {
      await this.withRetry('messaging-history.set', { messageId: message.key?.id }, () => this.onMessage(message, collected));
    }
    // Once per message, its last state (a retried write may have collected one twice).
    const stored = [...new Map(collected.map((row) => [row.messageId, row])).values()];
    const who = await this.who();
    const row = await this.services.instances.findById(this.instanceId);
    await this.write(async (_manager, events) => {
      events.push(
        historyEvent(
          {
            // An on-demand sync (POST /message/history-sync) carries its own request's id; the others the pairing's.
            // An exact reload carries the id its request got (empty when the message came before it was sent).
            requestId: reloadRequestId ?? (history.peerDataRequestSessionId || (row?.pairingRequestId ?? '')),
            syncType: history.syncType === undefined || history.syncType === null ? '' : String(history.syncType),
            progress: history.progress ?? null,
            isLatest: history.isLatest ?? null,
            chats: history.chats?.length ?? 0,
            contacts: history.contacts?.length ?? 0,
            messages: stored,
          },
          who,
        ),
      );
    });
  }

  private async onRevoke(message: WAMessage, described: DescribedContent): Promise<void> {
    const place = await this.place(message);
    const who = await this.who();
    await this.write(async (manager, events) => {
      const row = await MessageRepository.markDeletedWithin(manager, this.instanceId, described.revokes);
      if (!row) return;
      events.push(
        messagesUpdateEvent(
          { rows: [row], state: 'Deleted', type: 'Deleted', sender: place.sender, timestamp: timestampMs(message.messageTimestamp) / 1000 },
          who,
        ),
      );
    });
  }

  /** The chat of a message as one row (phone JID + LID, or the group) and its author. */
  private async place(message: WAMessage): Promise<MessagePlace> {
    const key = message.key;
    const remote = key.remoteJid ?? '';
    const me = this.identities.me();
    if (isJidGroup(remote)) {
      const sender = key.fromMe ? me : await this.identities.party(key.participant, key.participantAlt);
      return { chatId: remote, chatLid: '', isGroup: true, sender };
    }
    const chat = await this.identities.party(remote, key.remoteJidAlt);
    return { chatId: chat.pn || chat.jid, chatLid: chat.lid, isGroup: false, sender: key.fromMe ? me : chat };
  }

  /** The other side of a 1:1 chat (who sends its receipts); the group JID for groups. */
  private async chatParty(place: MessagePlace): Promise<Party> {
    if (place.isGroup) return { jid: place.chatId, pn: '', lid: '' };
    return { jid: place.chatLid || place.chatId, pn: isPhoneJid(place.chatId) ? place.chatId : '', lid: place.chatLid };
  }

  private async groupInfo(groupJid: string): Promise<GroupInfo | null> {
    const info = await this.services.groups.get(this.context.socket, this.instanceId, groupJid, this.identities.me());
    for (const pair of info?.participants ?? []) this.identities.learn(pair.lid, pair.pn);
    return info;
  }

  private async observeChat(
    manager: EntityManager,
    place: MessagePlace,
    group: GroupInfo | null,
    extra: Omit<ChatObservation, 'waChatId' | 'waChatLid' | 'isGroup'>,
  ): Promise<ChatRow> {
    const observation: ChatObservation = {
      waChatId: isLid(place.chatId) ? undefined : place.chatId,
      waChatLid: place.chatLid || undefined,
      isGroup: place.isGroup,
      ...extra,
    };
    if (group && !observation.waName) observation.waName = group.subject || undefined;
    const { chat } = await ChatRepository.observeWithin(manager, this.instanceId, observation, () => recordId(14));
    return chat;
  }

  /** The author's contact row (push name, LID pair); returned only when it changed. */
  private async observeSender(manager: EntityManager, sender: Party, pushName: string): Promise<ContactRow | null> {
    if (!sender.pn && !sender.lid) return null;
    const { contact, changed } = await ContactRepository.observeWithin(manager, this.instanceId, { jid: sender.pn, lid: sender.lid, pushName });
    return changed ? contact : null;
  }

  /** The option text(s) a poll vote chose, decrypted with the stored creation's secret. */
  private async pollVote(message: WAMessage, voter: Party, pollId: string): Promise<string> {
    const update = message.message?.pollUpdateMessage;
    if (!update?.vote || !pollId) return '';
    const creation = await this.services.messages.findOne(this.instanceId, pollId);
    const poll = creation ? pollCreationOf(creation, this.identities.me()) : null;
    if (!poll) {
      this.logger.warn({ pollId, messageId: message.key.id }, 'poll vote for a poll that is not stored: vote left empty');
      return '';
    }
    const selected = decryptVote(update.vote, poll, voter);
    if (selected === null) this.logger.warn({ pollId, messageId: message.key.id }, 'poll vote could not be decrypted');
    return (selected ?? []).join(', ');
  }

  /** Receipts Baileys merged into a group message's upsert (`userReceipt`) count as its status. */
  private advancedByReceipts(message: WAMessage, status: string): string {
    let best = status;
    if (best === 'Pending' && this.acked.has(message.key.id ?? '')) best = 'Sent';
    for (const receipt of message.userReceipt ?? []) {
      const state = receipt.playedTimestamp ? 'Played' : receipt.readTimestamp ? 'Read' : receipt.receiptTimestamp ? 'Delivered' : '';
      if (rank(state) > rank(best)) best = state;
    }
    return best;
  }

  private async advanceTo(manager: EntityManager, row: MessageRow, status: string, error: string): Promise<MessageRow | null> {
    if (status === 'Failed') return (await MessageRepository.failWithin(manager, this.instanceId, [row.messageId], error || 'failed'))[0] ?? null;
    if (rank(status) <= rank(row.status)) return null;
    return (await MessageRepository.advanceStatusWithin(manager, this.instanceId, [row.messageId], status))[0] ?? null;
  }

  private async advanceFromUpsert(
    manager: EntityManager,
    events: NewOutboxEvent[],
    prior: MessageRow,
    status: string,
    error: string,
    place: MessagePlace,
  ): Promise<void> {
    const changed = await this.advanceTo(manager, prior, status, error);
    if (changed && (ANNOUNCED.has(status) || status === 'Failed')) {
      const failed = status === 'Failed';
      events.push(
        messagesUpdateEvent(
          {
            rows: [changed],
            state: status as 'Read',
            type: failed ? 'Failed' : 'ReadReceipt',
            sender: await this.chatParty(place),
            timestamp: Date.now() / 1000,
            error: failed ? changed.error : undefined,
          },
          await this.who(),
        ),
      );
    }
  }

  // --- receipts -----------------------------------------------------------------------------------

  /** Ids a receipt named that are not stored yet: their status is applied when they are. */
  private async rememberEarly(manager: EntityManager, ids: string[], changed: MessageRow[], receipt: Omit<EarlyReceipt, 'at'>): Promise<void> {
    const done = new Set(changed.map((row) => row.messageId));
    const rest = ids.filter((id) => !done.has(id));
    const known = new Set(await MessageRepository.storedIdsWithin(manager, this.instanceId, rest));
    const now = Date.now();
    for (const [id, entry] of this.early) if (now - entry.at > EARLY_TTL_MS) this.early.delete(id);
    for (const id of rest) {
      if (known.has(id) || this.early.size >= ACKED_LIMIT) continue;
      const previous = this.early.get(id);
      // Forward only; an error ack counts only while nothing was delivered.
      if (previous && (receipt.state === 'Failed' || rank(receipt.state) <= rank(previous.state))) continue;
      this.early.set(id, { ...receipt, at: now });
      this.logger.debug({ messageId: id, state: receipt.state }, 'receipt before its message: kept until the message is stored');
    }
  }

  private earlyReceipt(id: string): EarlyReceipt | undefined {
    const entry = this.early.get(id);
    return entry && Date.now() - entry.at <= EARLY_TTL_MS ? entry : undefined;
  }

  private rememberAck(id: string): void {
    if (this.acked.size >= ACKED_LIMIT) this.acked.delete(this.acked.values().next().value as string);
    this.acked.add(id);
  }

  /** Sent (stored, not announced): one fenced statement, as the send path's own result write. */
  private async onServerAck(messageId: string): Promise<void> {
    if (!(await OutboundLedgerRepository.acked(this.services.store.dataSource, this.context.lease, [messageId]))) throw new FencedOutError(this.instanceId);
  }

  /** 1:1 receipts (Baileys `messages.update` with a status) and error acks. */
  private async onMessageUpdates(updates: WAMessageUpdate[]): Promise<void> {
    // One transaction per (chat, state): a receipt for several messages is one event.
    type Batch = { jid: string; state: string; ids: string[]; timestamp: number; error: string };
    const batches = new Map<string, Batch>();
    for (const { key, update } of updates) {
      if (typeof update.status !== 'number' || !key.id || !key.remoteJid) continue;
      const state = statusName(update.status);
      if (!key.fromMe) {
        // Another device of ours read received messages: the chat has nothing unread any more.
        if (state === 'Read') batches.set(`read|${key.remoteJid}`, { jid: key.remoteJid, state: 'ReadSelf', ids: [], timestamp: 0, error: '' });
        continue;
      }
      if (!state || state === 'Pending') continue;
      const error = state === 'Failed' ? errorText(update.messageStubParameters) : '';
      const batchKey = `${key.remoteJid}|${state}|${error}`;
      const batch: Batch = batches.get(batchKey) ?? { jid: key.remoteJid, state, ids: [], timestamp: timestampMs(update.messageTimestamp) / 1000, error };
      batch.ids.push(key.id);
      batches.set(batchKey, batch);
    }
    for (const batch of batches.values()) {
      await this.withRetry('messages.update', { ids: batch.ids }, async () => {
        if (batch.state === 'ReadSelf') return this.markChatRead(batch.jid);
        const reader = isJidGroup(batch.jid) ? { jid: batch.jid, pn: '', lid: '' } : await this.identities.party(batch.jid);
        await this.applyStatus(batch.ids, batch.state, reader, batch.timestamp, batch.error);
      });
    }
  }

  /** Group receipts: one per participant; the message shows the most advanced one (forward only). */
  private async onGroupReceipts(updates: MessageUserReceiptUpdate[]): Promise<void> {
    type Batch = { participant: string; state: string; ids: string[]; timestamp: number };
    const batches = new Map<string, Batch>();
    for (const { key, receipt } of updates) {
      if (!key.fromMe || !key.id || !receipt.userJid) continue;
      const state = receipt.playedTimestamp ? 'Played' : receipt.readTimestamp ? 'Read' : receipt.receiptTimestamp ? 'Delivered' : '';
      if (!state) continue;
      const seconds = Number(receipt.playedTimestamp ?? receipt.readTimestamp ?? receipt.receiptTimestamp) || Date.now() / 1000;
      const batchKey = `${receipt.userJid}|${state}`;
      const batch: Batch = batches.get(batchKey) ?? { participant: receipt.userJid, state, ids: [], timestamp: seconds };
      batch.ids.push(key.id);
      batches.set(batchKey, batch);
    }
    for (const batch of batches.values()) {
      await this.withRetry('message-receipt.update', { ids: batch.ids }, async () => {
        await this.applyStatus(batch.ids, batch.state, await this.identities.party(batch.participant), batch.timestamp, '');
      });
    }
  }

  private async onGroupPlayed(groupJid: string, participant: string, ids: string[], timestamp: number): Promise<void> {
    await this.withRetry('receipt', { ids, groupJid }, async () => {
      await this.applyStatus(ids, 'Played', await this.identities.party(participant), timestamp, '');
    });
  }

  /** Moves messages forward (or to Failed) and announces the ones that changed, per chat. */
  private async applyStatus(ids: string[], state: string, sender: Party, timestamp: number, error: string): Promise<void> {
    const who = await this.who();
    await this.write(async (manager, events) => {
      const changed =
        state === 'Failed'
          ? await MessageRepository.failWithin(manager, this.instanceId, ids, error)
          : await MessageRepository.advanceStatusWithin(manager, this.instanceId, ids, state);
      if (changed.length < ids.length) await this.rememberEarly(manager, ids, changed, { state, sender, timestamp, error });
      if (!changed.length || state === 'Sent') return;
      const byChat = new Map<string, MessageRow[]>();
      for (const row of changed) byChat.set(row.chatId, [...(byChat.get(row.chatId) ?? []), row]);
      for (const rows of byChat.values()) {
        events.push(
          messagesUpdateEvent(
            { rows, state: state as 'Read', type: state === 'Failed' ? 'Failed' : 'ReadReceipt', sender, timestamp, error: error || undefined },
            who,
          ),
        );
      }
    });
  }

  private async markChatRead(jid: string): Promise<void> {
    await this.write(async (manager) => {
      await ChatRepository.applyStateWithin(manager, this.instanceId, userJid(jid) || jid, { unreadCount: 0 });
    });
  }

  // --- contacts, LIDs, chats, groups --------------------------------------------------------------

  private async onContacts(contacts: Array<Partial<Contact>>): Promise<void> {
    const me = this.identities.me();
    const observations: Array<{ pn: string; lid: string; contactName?: string; pushName?: string; verifiedName?: string }> = [];
    for (const contact of contacts) {
      const id = userJid(contact.id);
      if (!id || (!isLid(id) && !isPhoneJid(id)) || id === me.pn || id === me.lid) continue;
      const alternate = isLid(id) ? contact.phoneNumber : contact.lid;
      const party = await this.identities.party(id, alternate);
      observations.push({
        pn: party.pn,
        lid: party.lid,
        contactName: contact.name || undefined,
        pushName: contact.notify || undefined,
        verifiedName: contact.verifiedName || undefined,
      });
    }
    if (!observations.length) return;
    const who = await this.who();
    await this.withRetry('contacts', { count: observations.length }, () =>
      this.write(async (manager, events) => {
        const changed: ContactRow[] = [];
        const chats: ChatRow[] = [];
        for (const observation of observations) {
          const { contact, changed: isNew } = await ContactRepository.observeWithin(manager, this.instanceId, {
            jid: observation.pn,
            lid: observation.lid,
            contactName: observation.contactName,
            pushName: observation.pushName,
            verifiedName: observation.verifiedName,
          });
          if (!isNew) continue;
          changed.push(contact);
          if (observation.contactName) {
            const chat = await ChatRepository.applyStateWithin(manager, this.instanceId, contact.jid, { waContactName: observation.contactName });
            if (chat) chats.push(chat);
          }
        }
        if (changed.length) events.push(contactsEvent(changed, who));
        if (chats.length) events.push(chatsEvent(chats, who));
      }),
    );
  }

  /** A LID ↔ number pair: stored, and a contact or chat known under both becomes one. */
  private async onLidMapping(lid: string, pn: string): Promise<void> {
    this.identities.learn(lid, pn);
    const pair = { lid: userJid(lid), pn: userJid(pn) };
    if (!isLid(pair.lid) || !isPhoneJid(pair.pn)) return;
    await this.withRetry('lid-mapping.update', pair, () =>
      this.write(async (manager) => {
        const known =
          (await ChatRepository.findByJidWithin(manager, this.instanceId, pair.pn)) ??
          (await ChatRepository.findByJidWithin(manager, this.instanceId, pair.lid));
        if (known) await ChatRepository.observeWithin(manager, this.instanceId, { waChatId: pair.pn, waChatLid: pair.lid }, () => recordId(14));
      }),
    );
  }

  /** Chat settings from the phone (app state): archive, pin, mute, read. Message-driven updates are ignored. */
  private async onChatUpdates(updates: BaileysEventMap['chats.update']): Promise<void> {
    const changes = updates
      .map((update) => ({
        jid: userJid(update.id) || update.id || '',
        state: {
          archived: typeof update.archived === 'boolean' ? update.archived : undefined,
          pinned: update.pinned === undefined ? undefined : Boolean(update.pinned),
          muteEndTime: update.muteEndTime === undefined ? undefined : Number(update.muteEndTime ?? 0),
          unreadCount: update.unreadCount === 0 ? 0 : undefined,
        },
      }))
      .filter((change) => change.jid && Object.values(change.state).some((value) => value !== undefined));
    if (!changes.length) return;
    const who = await this.who();
    await this.withRetry('chats.update', { count: changes.length }, () =>
      this.write(async (manager, events) => {
        const chats: ChatRow[] = [];
        for (const change of changes) {
          const chat = await ChatRepository.applyStateWithin(manager, this.instanceId, change.jid, change.state);
          if (chat) chats.push(chat);
        }
        if (chats.length) events.push(chatsEvent(chats, who));
      }),
    );
  }

  /** Group subject and announce changes: the cached name and the chat row follow. */
  /** Someone joined, left, was promoted or demoted: a `groups` event in the captures' shape. */
  private async onGroupParticipants(update: BaileysEventMap['group-participants.update']): Promise<void> {
    if (!update.id || update.action === 'modify') return;
    const group = await this.groupInfo(update.id);
    const author = update.author ? await this.identities.party(update.author, update.authorPn) : null;
    const members = await Promise.all((update.participants ?? []).map((participant) => this.identities.party(participant.id, participant.phoneNumber)));
    const me = this.identities.me();
    const who = await this.who();
    const joinedByMe = update.action === 'add' && members.some((member) => (member.pn && member.pn === me.pn) || (member.lid && member.lid === me.lid));
    // The instance itself joined: `JoinedGroup` carries the whole group, as WhatsApp describes it now.
    const metadata = joinedByMe ? await this.groupMetadata(update.id) : null;
    await this.withRetry('group-participants.update', { group: update.id }, () =>
      this.write(async (_manager, events) => {
        events.push(
          joinedByMe
            ? joinedGroupEvent({ groupJid: update.id, author, me, metadata, subject: group?.subject ?? '', members }, who)
            : groupsEvent(
                { groupJid: update.id, subject: group?.subject ?? '', action: update.action as 'add' | 'remove' | 'promote' | 'demote', author, members },
                who,
              ),
        );
      }),
    );
  }

  /** The group's full metadata, fresh (null when WhatsApp does not answer in time). */
  private async groupMetadata(groupJid: string): Promise<GroupMetadata | null> {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        this.context.socket.groupMetadata(groupJid),
        new Promise<null>((resolve) => {
          timer = setTimeout(() => resolve(null), GROUP_METADATA_TIMEOUT_MS);
        }),
      ]);
    } catch (error) {
      this.logger.debug({ err: error, groupJid }, 'group metadata unavailable for JoinedGroup');
      return null;
    } finally {
      clearTimeout(timer);
    }
  }

  /** A channel post (followed newsletter): stored like a message of that chat, announced as `newsletter_messages`. */
  private async onNewsletterMessage(message: WAMessage): Promise<void> {
    const described = describeContent(message.message as ProtoMessage);
    if (!described.field || described.type === 'protocol') return;
    const remote = message.key.remoteJid ?? '';
    const place: MessagePlace = { chatId: remote, chatLid: '', isGroup: false, sender: { jid: remote, pn: '', lid: '' } };
    const row = toNewMessage(this.instanceId, { message, described, place, senderName: '', status: '', vote: undefined });
    const who = await this.who();
    await this.write(async (manager, events) => {
      const prior = await MessageRepository.findWithin(manager, this.instanceId, row.messageId, true);
      if (prior?.raw) return;
      const { row: stored } = await MessageRepository.upsertWithin(manager, row);
      const serverId = (message.key as { server_id?: string }).server_id ?? '';
      events.push(newsletterMessagesEvent(stored, serverId, who));
    });
  }

  /** A label created, renamed, recoloured or deleted (app state): a `labels` event. */
  private async onLabel(label: BaileysEventMap['labels.edit'], requestId: string): Promise<void> {
    if (!label?.id) return;
    const who = await this.who();
    const facts = {
      labelId: String(label.id),
      name: label.name ?? '',
      color: Number(label.color) || 0,
      deleted: label.deleted === true,
      predefinedId: label.predefinedId ? String(label.predefinedId) : '',
    };
    await this.withRetry('labels.edit', { labelId: label.id }, () =>
      this.write(async (manager, events) => {
        const { changed } = await LabelRepository.upsertWithin(manager, this.instanceId, facts);
        // A replay of what is stored already is news only to the refresh that asked for it.
        if (changed || requestId) events.push(labelsEvent({ ...label, name: facts.name, color: facts.color }, who, requestId));
      }),
    );
  }

  /** A label put on or taken off a chat: the chat's `wa_label` follows, and a `chat_labels` event. */
  private async onLabelAssociation(change: BaileysEventMap['labels.association'], requestId: string): Promise<void> {
    const association = change.association;
    if (association.type !== 'label_jid') return;
    const who = await this.who();
    await this.withRetry('labels.association', { labelId: association.labelId }, () =>
      this.write(async (manager, events) => {
        const labels = await ChatRepository.applyLabelWithin(manager, this.instanceId, association.chatId, association.labelId, change.type);
        events.push(chatLabelsEvent({ chatId: association.chatId, labelId: association.labelId, action: change.type, labels }, who, requestId));
      }),
    );
  }

  // --- label refresh, presence, blocklist ---------------------------------------------------------

  /**
   * `/labels/refresh`: re-reads the label collections of the app state in the background (`force`:
   * from scratch, so every label and association is announced again). One at a time per socket;
   * while one runs, its id is answered.
   */
  refreshLabels(requestId: string, force: boolean): LabelRefreshReply {
    if (this.refresh) return { status: 'in_progress', requestId: this.refresh.requestId, force: this.refresh.force };
    if (!this.context.socket.authState?.creds?.myAppStateKeyId) throw new RpcError(ErrorCode.Conflict, 'history sync still in progress, try again later');
    const refresh = { requestId, force };
    this.refresh = refresh;
    void this.runRefresh(refresh);
    return { status: 'started', requestId, force };
  }

  private async runRefresh(refresh: { requestId: string; force: boolean }): Promise<void> {
    const socket = this.context.socket;
    try {
      if (refresh.force) {
        const reset = Object.fromEntries(LABEL_COLLECTIONS.map((name) => [name, null]));
        await socket.authState.keys.set({ 'app-state-sync-version': reset });
      }
      await socket.resyncAppState([...LABEL_COLLECTIONS], false);
      this.logger.info({ requestId: refresh.requestId, force: refresh.force }, 'labels refreshed');
    } catch (error) {
      this.logger.warn({ err: error, requestId: refresh.requestId }, 'label refresh failed');
    } finally {
      if (this.refresh === refresh) this.refresh = null;
    }
  }

  /** Follows the presence of a contact the instance is talking with (WhatsApp sends it only to subscribers). */
  private followPresence(message: WAMessage): void {
    const key = message.key;
    const remote = userJid(key?.remoteJid);
    if (!remote || (!isLid(remote) && !isPhoneJid(remote))) return;
    const alternate = userJid((key as { remoteJidAlt?: string }).remoteJidAlt);
    const target = isPhoneJid(remote) ? remote : alternate && isPhoneJid(alternate) ? alternate : remote;
    const me = this.identities.me();
    if (target === me.pn || target === me.lid || this.presenceSubscribed.has(target)) return;
    if (this.presenceSubscribed.size >= PRESENCE_SUBSCRIPTIONS) return;
    this.presenceSubscribed.add(target);
    this.context.socket.presenceSubscribe(target).catch((error: unknown) => {
      this.presenceSubscribed.delete(target);
      this.logger.debug({ err: error, jid: target }, 'presence subscription failed');
    });
  }

  /** A contact online/offline, or typing/recording/paused in a chat: a `presence` event each. */
  private async onPresence(updates: Array<BaileysEventMap['presence.update']>): Promise<void> {
    const me = this.identities.me();
    const facts: PresenceFacts[] = [];
    for (const update of updates) {
      const chatJid = userJid(update.id) || update.id;
      if (!chatJid) continue;
      const isGroup = isJidGroup(chatJid) === true;
      for (const [participant, presence] of Object.entries(update.presences ?? {})) {
        const state = presence?.lastKnownPresence as PresenceState;
        if (!PRESENCE_STATES.has(state)) continue;
        const party = await this.identities.party(participant);
        if (!party.jid || (party.pn && party.pn === me.pn) || (party.lid && party.lid === me.lid)) continue;
        const lastSeen = typeof presence.lastSeen === 'number' && presence.lastSeen > 0 ? presence.lastSeen : null;
        facts.push({ chat: isGroup ? chatJid : party.pn || party.jid, isGroup, who: party, state, lastSeen });
      }
    }
    if (!facts.length) return;
    const who = await this.who();
    await this.withRetry('presence.update', { count: facts.length }, () =>
      this.write(async (_manager, events) => {
        for (const fact of facts) events.push(presenceEvent(fact, who));
      }),
    );
  }

  /** Blocked or unblocked elsewhere (the phone, another device): stored, and a `blocks` event. */
  private async onBlocklistUpdate(update: BaileysEventMap['blocklist.update']): Promise<void> {
    const action = update.type === 'add' ? 'block' : 'unblock';
    const changes = await Promise.all((update.blocklist ?? []).map((jid) => this.blockChange(jid, action)));
    const valid = changes.filter((change) => change.jid);
    if (!valid.length) return;
    await this.withRetry('blocklist.update', { count: valid.length }, async () => {
      await this.writeBlocks((manager) => BlocklistRepository.applyWithin(manager, this.instanceId, valid));
    });
  }

  private async blockChange(jid: string, action: BlockChange['action']): Promise<BlockChange> {
    const party = await this.identities.party(jid);
    return { jid: party.pn || party.jid, lid: party.lid, action };
  }

  /** One transaction: the blocklist changes, chats' `wa_isBlocked` follows, a `blocks` event if anything changed. */
  private async writeBlocks(apply: (manager: EntityManager) => Promise<BlockChange[]>): Promise<string[]> {
    const who = await this.who();
    return this.write(async (manager, events) => {
      const applied = await apply(manager);
      const list = (await BlocklistRepository.listWithin(manager, this.instanceId)).map((entry) => entry.jid);
      if (applied.length) events.push(blocksEvent(applied, list, who));
      return list;
    });
  }

  /** `GET /chat/blocklist`: WhatsApp's list; the stored one is made equal to it (differences announced). */
  async syncBlocklist(): Promise<string[]> {
    const jids = await this.context.socket.fetchBlocklist();
    const current = await Promise.all(
      jids.filter((jid): jid is string => typeof jid === 'string' && jid.length > 0).map((jid) => this.blockChange(jid, 'block')),
    );
    return this.queue.run(() => this.writeBlocks((manager) => BlocklistRepository.replaceWithin(manager, this.instanceId, current)));
  }

  /** `POST /chat/block`: asks WhatsApp, then stores the change (a later notification of it changes nothing). */
  async setBlocked(jid: string, block: boolean): Promise<string[]> {
    const socket = this.context.socket;
    const action = block ? 'block' : 'unblock';
    const change = await this.blockChange(jid, action);
    try {
      await socket.updateBlockStatus(change.jid, action);
    } catch (error) {
      if (!isUnresolved(error)) throw error;
      // Baileys blocks by LID: learn the contact's LID from WhatsApp first.
      const [found] = (await socket.onWhatsApp(change.jid).catch(() => undefined)) ?? [];
      const lid = (found as { lid?: string } | undefined)?.lid;
      if (!found?.exists || !lid) throw new RpcError(ErrorCode.NotFound, 'Contact not found on WhatsApp');
      await socket.signalRepository.lidMapping.storeLIDPNMappings([{ lid: userJid(lid), pn: change.jid }]);
      await socket.updateBlockStatus(change.jid, action);
      change.lid = userJid(lid);
    }
    return this.queue.run(() => this.writeBlocks((manager) => BlocklistRepository.applyWithin(manager, this.instanceId, [change])));
  }

  /** Call offers and their ends: a `call` event (the instance can reject through the API later) and the call's message (messageType `call`). */
  private async onCalls(calls: BaileysEventMap['call']): Promise<void> {
    const who = await this.who();
    for (const call of calls) {
      const caller = await this.identities.party(call.from, call.callerPn);
      await this.withRetry('call', { callId: call.id }, () =>
        this.write(async (manager, events) => {
          await storeCallWithin(manager, this.instanceId, call, caller);
          events.push(callEvent(call, caller, who));
        }),
      );
    }
  }

  private async onGroupUpdates(updates: BaileysEventMap['groups.update']): Promise<void> {
    const changes = updates.filter((update) => update.id && (update.subject !== undefined || update.announce !== undefined));
    for (const update of changes) if (update.subject !== undefined) this.services.groups.rename(this.instanceId, update.id!, update.subject ?? '');
    if (!changes.length) return;
    const who = await this.who();
    await this.withRetry('groups.update', { count: changes.length }, () =>
      this.write(async (manager, events) => {
        const chats: ChatRow[] = [];
        for (const update of changes) {
          const chat = await ChatRepository.applyStateWithin(manager, this.instanceId, update.id!, {
            waName: update.subject ?? undefined,
            groupFlags: update.announce === undefined ? undefined : { announce: Boolean(update.announce) },
          });
          if (chat) chats.push(chat);
        }
        if (chats.length) events.push(chatsEvent(chats, who));
      }),
    );
  }
}

/** Baileys could not map the contact between phone number and LID (it blocks by LID). */
function isUnresolved(error: unknown): boolean {
  return /Unable to resolve/i.test((error as Error)?.message ?? '');
}

/** `['463', 'Your account has been restricted']` → `463: Your account has been restricted`. */
function errorText(parameters: unknown): string {
  const parts = (Array.isArray(parameters) ? parameters : []).filter((part): part is string => typeof part === 'string' && part !== '');
  // An error ack (Baileys puts its code first, then for 463 maybe its own text): worded as the send path words it.
  if (parts.length > 0 && /^\d{3}$/.test(parts[0])) return refusalText(parts[0]);
  return parts.join(': ') || 'failed';
}

function receiptListIds(node: BinaryNode): string[] {
  const content = Array.isArray(node.content) ? node.content : [];
  const list = content.find((child) => child.tag === 'list');
  const items = Array.isArray(list?.content) ? list.content : [];
  return items.filter((item) => item.tag === 'item' && item.attrs.id).map((item) => item.attrs.id);
}
