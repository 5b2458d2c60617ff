import { databaseUnavailable, FencedOutError, type NewOutboxEvent, type Tx } from '@gw/persistence';
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Logger } from '@gw/platform';
import { proto, type BaileysEventMap } from '../baileys';
import type { LabelRefreshReply } from '@gw/contracts';
import { AwaitedAcks } from '../outbound/awaited-acks';
import { LATE_EVENTS_MS } from '../socket/events-at-close';
import { heldAcksOf } from '../socket/held-acks';
import type { SocketContext } from '../session/socket-observer';
import { NOTES_COLLECTION } from './chat-notes';
import { QUICK_REPLY_COLLECTIONS } from './quick-replies';
import { groupChangeOf, newsletterChangeOf, receiptListIds } from './inbound-stanzas';
import { SocketSubscriptions } from './socket-subscriptions';
import { groupNotificationOf } from './group-metadata-cache';
import { IdentityResolver } from './identity-resolver';
import type { SocketBacklog } from './inbound-backpressure';
import { SocketReader } from './socket-reader';
import { InboundQueue, type InboundTaskMode } from './inbound-queue';
import { InboundWriteDroppedError, InboundWriteFailedError } from './inbound-store';
import { BlocklistEvents } from './inbound/blocklist';
import { ContactChatGroupEvents, type GroupChange } from './inbound/contacts-chats-groups';
import { InstanceIdentityCache, type InboundContext, type InboundServices } from './inbound/inbound-context';
import { LabelEvents } from './inbound/labels';
import { MessageEvents } from './inbound/messages';
import { PresenceEvents } from './inbound/presence';
import { ReceiptEvents } from './inbound/receipts';
import { SenderNames } from './inbound/sender-names';

export type { InboundServices } from './inbound/inbound-context';
// Read from this module before the stanza readers had one of their own.
export { groupChangeOf } from './inbound-stanzas';

/** Tries of a handler whose failure came before its write (a failed write was already tried again by the store, in order). */
const ATTEMPTS = 3;
/** A handler that met no database before its write tries again this often at most, while the lease is ours. */
const OUTAGE_RETRY_MAX_MS = 2_000;
/** The events whose writes store what phones sent (idempotent by instance and message id, ADR 0034). */
const RECEIVED = new Set(['messages.upsert']);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The inbound side of one socket: every Baileys event that changes records (messages, receipts,
 * contacts, LID pairs, chat settings) is handled in arrival order on one queue, each change written
 * with its outbox event in one fenced transaction. A fenced-out lease stops the handler; other
 * failures are retried a few times, then logged (the message id is in the log). What each event
 * means is the business of the modules in ./inbound (one per kind of event), around one InboundContext.
 */
export class InboundSocketHandler {
  private readonly queue: InboundQueue;
  private readonly identities: IdentityResolver;
  private readonly identity: InstanceIdentityCache;
  private readonly logger: Logger;
  private stopped = false;
  /** A drain past its budget dropped this socket's backlog (drop()): nothing queued is written any more. */
  private dropped = false;
  /** Set while a task of a RECEIVED event runs: its writes are idempotent (WriteOptions.idempotent). */
  private readonly receiving = new AsyncLocalStorage<boolean>();
  /** Stops telling the reader when the store meets no database. */
  private readonly unwatch: () => void;
  /** This socket's share of the worker's inbound backlog: a full queue stops reading the websocket. */
  private readonly backlog: SocketBacklog;
  private readonly reader: SocketReader;
  private readonly messages: MessageEvents;
  private readonly receipts: ReceiptEvents;
  private readonly directory: ContactChatGroupEvents;
  private readonly labels: LabelEvents;
  private readonly presence: PresenceEvents;
  private readonly blocklist: BlocklistEvents;

  /**
   * `after`: resolves when the instance's previous socket's handler has handled what it had queued
   * (InboundMessageObserver); this socket's events wait for it, so a reconnect keeps the instance's
   * order (a receipt or revoke the new socket brings lands after the message the old one queued).
   */
  constructor(
    private readonly context: SocketContext,
    private readonly services: InboundServices,
    after?: Promise<unknown>,
  ) {
    this.queue = new InboundQueue(after);
    this.logger = context.logger.child({ component: 'inbound' });
    const backpressure = services.backpressure;
    this.reader = new SocketReader(context.socket, backpressure.bounds.socketMax, () => this.backlog.depth, this.logger, {
      room: () => this.backlog.room(),
      full: () => this.backlog.waitForRoom(),
    });
    // A device whose first sync is not over (Baileys counts finished ones in accountSyncCounter) may get its history next.
    const creds = context.socket.authState.creds;
    this.backlog = backpressure.register(this.reader, () => !creds.accountSyncCounter);
    // Baileys' decrypts wait for this queue's room (ADR 0048). Events Baileys holds back while it reads
    // the messages that came offline (its event buffer) are let out first: they are what fills the queue.
    heldAcksOf(context.socket)?.setGate(() => {
      const ev = context.socket.ev as { isBuffering?: () => boolean; flush?: () => unknown };
      if (ev.isBuffering?.()) ev.flush?.();
      return this.backlog.whenRoom();
    });
    // Issue #39: while this instance's writes meet no database, its socket is not read (what Baileys
    // has not seen is not acknowledged, so WhatsApp keeps it); read again once a write got through.
    this.unwatch = services.store.watch(context.instanceId, (stalled) => (stalled ? this.reader.hold() : this.reader.unhold()));
    this.identities = new IdentityResolver(context.socket, context.instanceId, services.lidMappings, this.logger, () => this.reader.stuck);
    this.identity = new InstanceIdentityCache(context.instanceId, services.instances, this.identities);
    const identities = this.identities;
    const inbound: InboundContext = {
      instanceId: context.instanceId,
      socket: context.socket,
      lease: context.lease,
      logger: this.logger,
      services,
      identities,
      senders: new SenderNames(),
      ownPicture: context.ownPicture,
      who: () => this.identity.who(),
      groupInfo: async (groupJid) => {
        const info = await services.groups.get(
          context.socket,
          context.instanceId,
          groupJid,
          identities.me(),
          services.groupMetadata.get(context.instanceId, groupJid),
          () => this.reader.stuck,
        );
        for (const pair of info?.participants ?? []) identities.learn(pair.lid, pair.pn);
        return info;
      },
      readingStuck: () => this.reader.stuck,
      write: (work, keys, options) => this.write(work, keys, options),
      withRetry: (what, detail, work) => this.withRetry(what, detail, work),
      stored: (message) => heldAcksOf(context.socket)?.release(message),
      run: (task) => this.queue.run(task),
      settled: () => this.queue.settled(),
    };
    this.receipts = new ReceiptEvents(inbound);
    this.presence = new PresenceEvents(inbound);
    this.messages = new MessageEvents(inbound, this.receipts, this.presence);
    this.directory = new ContactChatGroupEvents(inbound);
    this.labels = new LabelEvents(inbound);
    this.blocklist = new BlocklistEvents(inbound);
  }

  /**
   * Subscribes to the socket; returns the detach function. Listeners of one event run in the order
   * they are added, so the order of these calls matters where families share an event:
   * `messages.upsert` (messages, then group ephemeral settings), `connection.update` (login, then the
   * groups cache) and `CB:notification` (the groups cache, group changes, then app state).
   */
  attach(): () => void {
    const on = new SocketSubscriptions(this.context.socket);
    this.listenToMessages(on);
    this.listenToReceipts(on);
    this.listenToDirectory(on);
    this.listenToLabels(on);
    this.listenToPresence(on);
    this.listenToLogin(on);
    this.listenToGroupNotifications(on);
    this.listenToAppState(on);
    // Work already queued finishes (Baileys has acked those stanzas); nothing new is taken.
    return () => {
      on.detach();
      this.unwatch();
      // The reader first: a paused socket resumed by its backlog's close hands Baileys nothing more.
      this.reader.close();
      this.backlog.close();
    };
  }

  /** Received and history messages, calls, and channel admins' edits of their posts. */
  private listenToMessages(on: SocketSubscriptions): void {
    // A message Baileys decrypted and receipted as this socket went may be emitted after that
    // (keepEventsAtClose): WhatsApp counts it delivered and never sends it again, so it is still stored.
    on.eventUntilLate(
      'messages.upsert',
      ({ messages }) => {
        this.receipts.noteUpsert(messages);
        const tasks = this.messages.upsertTasks(messages);
        if (tasks) this.pipelined('messages.upsert', tasks);
        else this.enqueue('messages.upsert', () => this.messages.onUpsert(messages), 'ordered', messages.length);
      },
      LATE_EVENTS_MS,
    );
    // A chunk that is one write lets the next chunk be read and prepared while it commits (pipelined, ADR 0013).
    on.event('messaging-history.set', (history) =>
      this.enqueue(
        'messaging-history.set',
        () => this.messages.onHistory(history),
        this.messages.historyWritesOnce(history) ? 'pipelined' : 'ordered',
        // Held decrypted until stored: a chunk weighs what it holds (a thousand messages is not one event).
        history.messages.length + history.chats.length + history.contacts.length,
      ),
    );
    this.queued(on, 'call', (calls) => this.messages.onCalls(calls));
    // A channel admin's edit (edit="3") or deletion (edit="8") of a post: Baileys reads it as the post again.
    on.stanza('CB:message', (node) => {
      const change = newsletterChangeOf(node);
      if (!change) return;
      this.enqueue('newsletter edit', () => this.messages.onNewsletterChange(change));
    });
  }

  /**
   * Status updates and receipts; and raw stanzas Baileys does not turn into events: the server ack of
   * our sends (→ Sent), and `played` receipts in groups (Baileys reports those as read).
   */
  private listenToReceipts(on: SocketSubscriptions): void {
    on.event('messages.update', (updates) => this.pipelined('messages.update', this.receipts.messageUpdateTasks(updates)));
    on.event('message-receipt.update', (updates) => this.pipelined('message-receipt.update', this.receipts.groupReceiptTasks(updates)));
    on.stanza('CB:ack,class:message', (node) => {
      if (node.attrs.error || !node.attrs.id) return;
      this.receipts.rememberAck(node.attrs.id);
      // A send waiting for this ack writes Sent with its result.
      if (AwaitedAcks.has(this.context.socket, node.attrs.id)) return;
      // One statement of its own, outside the store: after everything before it.
      this.enqueue('ack', () => this.receipts.onServerAck(node.attrs.id), 'serial');
    });
    on.stanza('CB:receipt', (node) => {
      if (node.attrs.type !== 'played' || !node.attrs.from?.endsWith('@g.us') || !node.attrs.participant) return;
      const ids = [node.attrs.id, ...receiptListIds(node)].filter(Boolean);
      this.enqueue(
        'receipt',
        () => this.receipts.onGroupPlayed(node.attrs.from, node.attrs.participant, ids, Number(node.attrs.t) || Date.now() / 1000),
        'pipelined',
      );
    });
  }

  /** Contacts, LID pairs, chats and groups as Baileys reports them. */
  private listenToDirectory(on: SocketSubscriptions): void {
    // Names and LID pairs (what every received message brings) are one write; a picture change adds more.
    for (const event of ['contacts.upsert', 'contacts.update'] as const) {
      on.event(event, (contacts) =>
        this.enqueue(event, () => this.directory.onContacts(contacts), ContactChatGroupEvents.writesOnce(contacts) ? 'pipelined' : 'ordered', contacts.length),
      );
    }
    this.queued(on, 'lid-mapping.update', (mapping) => this.directory.onLidMapping(mapping.lid, mapping.pn));
    this.queued(on, 'chats.update', (updates) => this.directory.onChatUpdates(updates));
    this.queued(on, 'groups.update', (updates) => this.directory.onGroupUpdates(updates));
    this.queued(on, 'group-participants.update', (update) => this.directory.onGroupParticipants(update));
    this.queued(on, 'group.join-request', (update) => this.directory.onJoinRequest(update));
  }

  private listenToLabels(on: SocketSubscriptions): void {
    // The refresh id is taken when Baileys emits, not when the queue gets to the event.
    on.event('labels.edit', (label) => {
      const requestId = this.labels.currentRefreshId();
      this.enqueue('labels.edit', () => this.labels.onLabel(label, requestId));
    });
    on.event('labels.association', (change) => {
      const requestId = this.labels.currentRefreshId();
      this.enqueue('labels.association', () => this.labels.onLabelAssociation(change, requestId));
    });
  }

  private listenToPresence(on: SocketSubscriptions): void {
    // Presence comes in bursts (typing indicators): what piled up while the queue was busy is written in one transaction.
    on.event('presence.update', (update) => {
      if (this.presence.collect(update)) this.enqueue('presence.update', () => this.presence.flush(), 'pipelined');
    });
  }

  /** The blocklist, and what a login brings: the instance's own identity and picture, and the blocklist as WhatsApp has it. */
  private listenToLogin(on: SocketSubscriptions): void {
    this.queued(on, 'blocklist.update', (update) => this.blocklist.onBlocklistUpdate(update));
    this.queued(on, 'connection.update', async (update) => {
      if (update.connection === 'open') this.identity.forget();
      // The instance's own picture, as WhatsApp serves it at login, is its profilePicUrl.
      if (update.connection === 'open') await this.directory.onOwnPicture();
    });
    // Baileys asks WhatsApp for the blocklist at login (its init queries; the patch hands the answer over as
    // `blocklist.set`): ours follows it, so what changed while the instance was away is stored and announced,
    // without asking WhatsApp a second time (one query per login, as WhatsApp Web makes).
    on.event('blocklist.set', ({ blocklist }) => {
      this.blocklist
        .applyBlocklist(blocklist)
        .catch((error: unknown) =>
          error instanceof FencedOutError ? this.failed('blocklist', error) : this.logger.warn({ err: error }, 'blocklist not synchronised at login'),
        );
    });
  }

  /** Group notifications: the groups cache, and changes Baileys turns into no group event. */
  private listenToGroupNotifications(on: SocketSubscriptions): void {
    // The groups cache drops a group as soon as WhatsApp says it changed (before the change is handled), and forgets
    // the instance on a reconnect (notifications may have been missed).
    on.stanza('CB:notification', (node) => {
      const about = groupNotificationOf(node);
      if (!about) return;
      this.services.groupMetadata.invalidate(this.context.instanceId, about.groupJid, about.membership);
      this.services.groups.invalidate(this.context.instanceId, about.groupJid);
    });
    on.event('connection.update', (update) => {
      if (update.connection === 'open' || update.connection === 'close') this.services.groupMetadata.forget(this.context.instanceId);
    });
    // A group's picture and its community links: notifications Baileys turns into no group event.
    on.stanza('CB:notification', (node) => {
      const change = groupChangeOf(node);
      if (change) this.enqueue('group change', () => this.directory.onGroupChange(node.attrs.from, change));
    });
    // Disappearing messages of a group turned on or off: Baileys makes an ephemeral-setting protocol message of the w:gp2 notification.
    on.event('messages.upsert', ({ messages }) => {
      for (const message of messages) {
        const jid = message.key?.remoteJid ?? '';
        const protocol = message.message?.protocolMessage;
        if (!jid.endsWith('@g.us') || protocol?.type !== proto.Message.ProtocolMessage.Type.EPHEMERAL_SETTING) continue;
        const change: GroupChange = {
          author: message.key.participant ?? undefined,
          authorPn: message.key.participantAlt ?? undefined,
          ephemeralSeconds: Number(protocol.ephemeralExpiration ?? 0),
        };
        this.enqueue('group ephemeral', () => this.directory.onGroupChange(jid, change));
      }
    });
  }

  /** Another device changed app state: the chat notes and the quick replies (which Baileys drops) are read again when their collection changed. */
  private listenToAppState(on: SocketSubscriptions): void {
    on.stanza('CB:notification', (node) => {
      if (node.attrs.type !== 'server_sync') return;
      const collections = Array.isArray(node.content) ? node.content : [];
      const changed = (name: string) => collections.some((item) => item.tag === 'collection' && item.attrs.name === name);
      if (changed(NOTES_COLLECTION))
        this.readBeside(
          'chat notes',
          () => this.directory.readNotesChange(),
          (notes) => this.directory.storeNotes(notes),
        );
      if (QUICK_REPLY_COLLECTIONS.some(changed))
        this.readBeside(
          'quick replies',
          () => this.directory.readQuickRepliesChange(),
          (replies) => this.directory.storeQuickReplies(replies),
        );
    });
  }

  /** Reads of app state under way beside the queue, by kind: `again` when it changed once more meanwhile. */
  private readonly readsBeside = new Map<string, { again: boolean }>();

  /**
   * Reads WhatsApp's app state beside the socket's queue, and queues only the write of what it read. The
   * read's queries (and blobs) are answered on this socket: inside the queue, during a reconnect's flood,
   * their answers were frames behind the ones the queue held back, and the queue waited out the query's
   * timeout (60 s) with every message behind it (ADR 0065). One read of a kind at a time; a change meanwhile
   * reads again once it is done.
   */
  private readBeside<T>(what: string, read: () => Promise<T | null>, store: (value: T) => Promise<void>): void {
    const running = this.readsBeside.get(what);
    if (running) {
      running.again = true;
      return;
    }
    const entry = { again: false };
    this.readsBeside.set(what, entry);
    void (async () => {
      try {
        do {
          entry.again = false;
          const value = await read();
          if (value !== null && !this.stopped && !this.dropped) this.enqueue(what, () => store(value));
        } while (entry.again && !this.stopped && !this.dropped);
      } finally {
        this.readsBeside.delete(what);
      }
    })();
  }

  /** `handle` runs on the queue, in the socket's order, for every `event`. */
  private queued<E extends keyof BaileysEventMap>(on: SocketSubscriptions, event: E, handle: (data: BaileysEventMap[E]) => Promise<void>): void {
    on.event(event, (data) => this.enqueue(event, () => handle(data), 'ordered', Array.isArray(data) ? data.length : 1));
  }

  /** The hot kinds write once per task, so a socket's next ones need not wait for the commit (ADR 0013). */
  private pipelined(event: string, tasks: Array<() => Promise<void>>): void {
    for (const task of tasks) this.enqueue(event, task, 'pipelined');
  }

  get instanceId(): string {
    return this.context.instanceId;
  }

  /**
   * A drain past its budget (issue #39): the socket is no longer read and nothing queued is written, not
   * even a received message (unlike a lost lease): none of them was receipted (ADR 0035), so WhatsApp
   * delivers each again to the heir. Returns how many receipts are held (messages decrypted, not stored).
   */
  drop(): number {
    this.dropped = true;
    this.stopped = true;
    this.reader.stop();
    const held = heldAcksOf(this.context.socket);
    const plaintexts = held?.heldPlaintexts() ?? [];
    // Their copies come to the next holder, which reads them from these plaintexts (ADR 0035): a copy it
    // cannot read logs the same hash ("no plaintext was kept for it").
    if (plaintexts.length > 0)
      this.logger.warn({ plaintexts: plaintexts.map((hash) => hash.slice(0, 16)) }, 'unstored messages dropped with their plaintexts kept');
    return held?.size ?? 0;
  }

  /**
   * A drain whose ops are done (issue #39): no more frames go to Baileys. What Baileys has not seen is
   * neither decrypted nor acknowledged, so WhatsApp delivers it to the heir, which decrypts it with the
   * Signal state this worker stores; what was decrypted already is still written (idle()).
   */
  stopReading(): void {
    this.reader.stop();
  }

  /** Inbound tasks queued or running now (a drain logs it: what its store has left). */
  get queuedTasks(): number {
    return this.queue.depth;
  }

  /** Resolves when everything queued so far has been handled (tests, shutdown). */
  idle(): Promise<void> {
    return this.queue.run(() => undefined);
  }

  /** See MessageEvents.expectResend. */
  expectResend(messageId: string): { requested(requestId: string): void; failed(): void } {
    return this.messages.expectResend(messageId);
  }

  /** See LabelEvents.refreshLabels. */
  refreshLabels(requestId: string, force: boolean): LabelRefreshReply {
    return this.labels.refreshLabels(requestId, force);
  }

  /** `GET /chat/blocklist` (see BlocklistEvents.syncBlocklist). */
  syncBlocklist(): Promise<string[]> {
    return this.blocklist.syncBlocklist();
  }

  /** `POST /chat/block` (see BlocklistEvents.setBlocked). */
  setBlocked(jid: string, block: boolean): Promise<string[]> {
    return this.blocklist.setBlocked(jid, block);
  }

  /**
   * `/chat/pin`, `/chat/archive`, `/chat/mute`, `/chat/read`: the change WhatsApp accepted, stored in order with the
   * socket's events. Baileys' own `chats.update` for it comes after its event buffer flushes (or waits for the chat
   * in the buffer), and then changes nothing.
   */
  chatChanged(update: BaileysEventMap['chats.update'][number]): Promise<void> {
    return this.queue.run(() => this.directory.onChatUpdates([update]));
  }

  /** `/call/reject`: the instance's own rejection of a call (WhatsApp does not echo it), stored in order with the socket's events. */
  callChanged(call: BaileysEventMap['call'][number]): Promise<void> {
    return this.queue.run(() => this.messages.onCalls([call]));
  }

  /** `/contact/add` and `/contact/remove`: the address book change, stored in order with the socket's events (see ContactChatGroupEvents.onAddressBook). */
  addressBookChanged(jid: string, name: string | null): Promise<void> {
    return this.queue.run(() => this.directory.onAddressBook(jid, name));
  }

  /** Fails messages of ours the server never acked (UnackedSends), after what this socket received before. */
  failUnacked(chatJid: string, ids: string[], reason: string): Promise<void> {
    return new Promise((resolve) => {
      if (this.stopped) return resolve();
      this.enqueue('unacked', () => this.receipts.failUnacked(chatJid, ids, reason).finally(resolve));
    });
  }

  /** `weight`: the items the event holds until stored (InboundBackpressure counts items, at least one per event). */
  private enqueue(what: string, task: () => Promise<void>, mode: InboundTaskMode = 'ordered', weight = 1): void {
    if (this.stopped) return;
    const items = Math.max(1, weight);
    this.backlog.added(items);
    const received = RECEIVED.has(what);
    void this.queue.run(async () => {
      try {
        // A received message Baileys already acknowledged is still stored after the lease was lost
        // (idempotently, ADR 0034): WhatsApp will not give it to the new holder.
        if (this.dropped || (this.stopped && !received)) return;
        await (received ? this.receiving.run(true, task) : task());
      } catch (error) {
        this.failed(what, error);
      } finally {
        this.backlog.removed(items);
        this.reader.pump();
      }
    }, mode);
  }

  private failed(what: string, error: unknown, detail: Record<string, unknown> = {}): void {
    if (error instanceof InboundWriteDroppedError) return; // a drain dropped it on purpose (drop())
    if (error instanceof FencedOutError) {
      // The session is being aborted by the lease keeper; nothing more may be written, and nothing more
      // is read (Baileys would acknowledge messages this worker then drops; unacknowledged, WhatsApp
      // delivers them to the instance's new holder).
      this.stopped = true;
      this.reader.stop();
      this.logger.warn({ event: what, ...detail }, 'lease lost: inbound handling stopped');
      return;
    }
    this.logger.error({ err: error, event: what, ...detail }, 'inbound event could not be stored');
  }

  private async withRetry(what: string, detail: Record<string, unknown>, work: () => Promise<void>): Promise<boolean> {
    let outage = false;
    try {
      for (let attempt = 1; ; attempt++) {
        if (this.dropped || (this.stopped && !this.receiving.getStore())) return false;
        try {
          await work();
          return true;
        } catch (error) {
          if (error instanceof FencedOutError || error instanceof InboundWriteFailedError || error instanceof InboundWriteDroppedError) {
            this.failed(what, error, detail);
            return false;
          }
          // No database before the write (a lookup): the socket waits and so does this event, while the lease is ours.
          if (databaseUnavailable(error) && !this.stopped && this.services.store.holds(this.context.lease)) {
            if (!outage) this.reader.hold();
            outage = true;
            await sleep(Math.min(OUTAGE_RETRY_MAX_MS, 200 * attempt));
            continue;
          }
          if (attempt >= ATTEMPTS) {
            this.failed(what, error, detail);
            return false;
          }
          await sleep(200 * attempt);
        }
      }
    } finally {
      if (outage) this.reader.unhold();
    }
  }

  /**
   * One fenced transaction with its events; LID pairs learned since the last write go with it (and
   * are kept for the next one if this one fails).
   */
  private async write<T>(work: (tx: Tx, events: NewOutboxEvent[]) => Promise<T>, keys?: readonly string[], options: { alone?: boolean } = {}): Promise<T> {
    // An `ordered` task's write waits for the socket's earlier tasks (InboundQueue).
    await this.queue.beforeWrite();
    const learned = this.identities.takeLearned();
    try {
      const written = this.services.store.write(
        this.context.lease,
        async (tx, events) => {
          if (learned.length > 0) {
            const lidMappings = this.services.lidMappings.within(tx);
            const changed = await lidMappings.store(this.context.instanceId, learned);
            // Messages stored while their sender was only a LID get its number now (guarantee 4).
            await lidMappings.resolveMessages(this.context.instanceId, changed);
          }
          return work(tx, events);
        },
        // A write carrying LID pairs also changes other messages' senders (resolveMessages): in a wave of its own.
        learned.length > 0 ? undefined : keys,
        { idempotent: this.receiving.getStore() === true, alone: options.alone === true },
      );
      // In the store's order now: a pipelined task's successor may start.
      this.queue.handedOver();
      return await written;
    } catch (error) {
      this.identities.giveBack(learned);
      throw error;
    }
  }
}
