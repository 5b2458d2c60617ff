import { databaseUnavailable, FencedOutError, LidMappingRepository, type NewOutboxEvent } from '@gw/persistence';
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Logger } from '@gw/platform';
import type { EntityManager } from 'typeorm';
import { getBinaryNodeChild, proto, type BaileysEventMap, type BinaryNode } from '../baileys';
import type { LabelRefreshReply } from '@gw/contracts';
import { AwaitedAcks } from '../outbound/awaited-acks';
import { LATE_EVENTS_MS } from '../socket/events-at-close';
import { heldAcksOf } from '../socket/held-acks';
import type { SocketContext } from '../session/socket-observer';
import { NOTES_COLLECTION } from './chat-notes';
import { QUICK_REPLY_COLLECTIONS } from './quick-replies';
import { groupNotificationOf } from './group-metadata-cache';
import { IdentityResolver } from './identity-resolver';
import type { SocketBacklog } from './inbound-backpressure';
import { SocketReader } from './socket-reader';
import { InboundQueue, type InboundTaskMode } from './inbound-queue';
import { InboundWriteFailedError } from './inbound-store';
import { BlocklistEvents } from './inbound/blocklist';
import { ContactChatGroupEvents, type GroupChange } from './inbound/contacts-chats-groups';
import { InstanceIdentityCache, type InboundContext, type InboundServices } from './inbound/inbound-context';
import { LabelEvents } from './inbound/labels';
import { MessageEvents } from './inbound/messages';
import { PresenceEvents } from './inbound/presence';
import { ReceiptEvents } from './inbound/receipts';
import { SenderNames } from './inbound/sender-names';

export type { InboundServices } from './inbound/inbound-context';

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
    this.reader = new SocketReader(context.socket, services.backpressure.bounds.socketMax, () => this.backlog.depth, this.logger);
    this.backlog = services.backpressure.register(this.reader);
    // Issue #39: while this instance's writes meet no database, its socket is not read (what Baileys
    // has not seen is not acknowledged, so WhatsApp keeps it); read again once a write got through.
    this.unwatch = services.store.watch(context.instanceId, (stalled) => (stalled ? this.reader.hold() : this.reader.unhold()));
    this.identities = new IdentityResolver(context.socket, context.instanceId, services.lidMappings, this.logger);
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
      who: () => this.identity.who(),
      groupInfo: async (groupJid) => {
        const info = await services.groups.get(
          context.socket,
          context.instanceId,
          groupJid,
          identities.me(),
          services.groupMetadata.get(context.instanceId, groupJid),
        );
        for (const pair of info?.participants ?? []) identities.learn(pair.lid, pair.pn);
        return info;
      },
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

  /** Subscribes to the socket; returns the detach function. */
  attach(): () => void {
    const { socket } = this.context;
    const detachers: Array<() => void> = [];
    const on = <E extends keyof BaileysEventMap>(event: E, handle: (data: BaileysEventMap[E]) => Promise<void>) => {
      const listener = (data: BaileysEventMap[E]) => this.enqueue(event, () => handle(data));
      socket.ev.on(event, listener);
      detachers.push(() => socket.ev.off(event, listener));
    };
    // The hot kinds write once per task, so a socket's next ones need not wait for the commit (ADR 0013).
    const pipelined = (event: string, tasks: Array<() => Promise<void>>) => {
      for (const task of tasks) this.enqueue(event, task, 'pipelined');
    };
    const onUpsert = ({ messages }: BaileysEventMap['messages.upsert']) => {
      const tasks = this.messages.upsertTasks(messages);
      if (tasks) pipelined('messages.upsert', tasks);
      else this.enqueue('messages.upsert', () => this.messages.onUpsert(messages));
    };
    socket.ev.on('messages.upsert', onUpsert);
    // A message Baileys decrypted and receipted as this socket went may be emitted after that
    // (keepEventsAtClose): WhatsApp counts it delivered and never sends it again, so it is still stored.
    detachers.push(() => setTimeout(() => socket.ev.off('messages.upsert', onUpsert), LATE_EVENTS_MS).unref());
    const onUpdates = (updates: BaileysEventMap['messages.update']) => pipelined('messages.update', this.receipts.messageUpdateTasks(updates));
    socket.ev.on('messages.update', onUpdates);
    detachers.push(() => socket.ev.off('messages.update', onUpdates));
    const onReceipts = (updates: BaileysEventMap['message-receipt.update']) => pipelined('message-receipt.update', this.receipts.groupReceiptTasks(updates));
    socket.ev.on('message-receipt.update', onReceipts);
    detachers.push(() => socket.ev.off('message-receipt.update', onReceipts));
    // Names and LID pairs (what every received message brings) are one write; a picture change adds more.
    const onContacts = (event: 'contacts.upsert' | 'contacts.update') => (contacts: BaileysEventMap['contacts.update']) =>
      this.enqueue(event, () => this.directory.onContacts(contacts), ContactChatGroupEvents.writesOnce(contacts) ? 'pipelined' : 'ordered');
    const onContactsUpsert = onContacts('contacts.upsert');
    const onContactsUpdate = onContacts('contacts.update');
    socket.ev.on('contacts.upsert', onContactsUpsert);
    socket.ev.on('contacts.update', onContactsUpdate);
    detachers.push(() => socket.ev.off('contacts.upsert', onContactsUpsert));
    detachers.push(() => socket.ev.off('contacts.update', onContactsUpdate));
    on('lid-mapping.update', (mapping) => this.directory.onLidMapping(mapping.lid, mapping.pn));
    on('chats.update', (updates) => this.directory.onChatUpdates(updates));
    on('groups.update', (updates) => this.directory.onGroupUpdates(updates));
    // A chunk that is one write lets the next chunk be read and prepared while it commits (pipelined, ADR 0013).
    const onHistory = (history: BaileysEventMap['messaging-history.set']) =>
      this.enqueue('messaging-history.set', () => this.messages.onHistory(history), this.messages.historyWritesOnce(history) ? 'pipelined' : 'ordered');
    socket.ev.on('messaging-history.set', onHistory);
    detachers.push(() => socket.ev.off('messaging-history.set', onHistory));
    on('group-participants.update', (update) => this.directory.onGroupParticipants(update));
    on('group.join-request', (update) => this.directory.onJoinRequest(update));
    on('call', (calls) => this.messages.onCalls(calls));
    // The refresh id is taken when Baileys emits, not when the queue gets to the event.
    const onNow = <E extends keyof BaileysEventMap>(event: E, prepare: (data: BaileysEventMap[E]) => () => Promise<void>) => {
      const listener = (data: BaileysEventMap[E]) => this.enqueue(event, prepare(data));
      socket.ev.on(event, listener);
      detachers.push(() => socket.ev.off(event, listener));
    };
    onNow('labels.edit', (label) => {
      const requestId = this.labels.currentRefreshId();
      return () => this.labels.onLabel(label, requestId);
    });
    onNow('labels.association', (change) => {
      const requestId = this.labels.currentRefreshId();
      return () => this.labels.onLabelAssociation(change, requestId);
    });
    // Presence comes in bursts (typing indicators): what piled up while the queue was busy is written in one transaction.
    const onPresence = (update: BaileysEventMap['presence.update']) => {
      if (this.presence.collect(update)) this.enqueue('presence.update', () => this.presence.flush(), 'pipelined');
    };
    socket.ev.on('presence.update', onPresence);
    detachers.push(() => socket.ev.off('presence.update', onPresence));
    on('blocklist.update', (update) => this.blocklist.onBlocklistUpdate(update));
    on('connection.update', async (update) => {
      if (update.connection === 'open') this.identity.forget();
      // The instance's own picture, as WhatsApp serves it at login, is its profilePicUrl.
      if (update.connection === 'open') await this.directory.onOwnPicture();
    });
    // Baileys asks for the blocklist at login but keeps the answer to itself: ours follows it, so
    // what changed while the instance was away is stored and announced.
    const onOpen = (update: BaileysEventMap['connection.update']) => {
      if (update.connection !== 'open') return;
      this.blocklist
        .syncBlocklist()
        .catch((error: unknown) =>
          error instanceof FencedOutError ? this.failed('blocklist', error) : this.logger.warn({ err: error }, 'blocklist not synchronised at login'),
        );
    };
    socket.ev.on('connection.update', onOpen);
    detachers.push(() => socket.ev.off('connection.update', onOpen));

    // Raw stanzas Baileys does not turn into events: the server ack of our sends (→ Sent), and
    // `played` receipts in groups (Baileys reports those as read).
    const onAck = (node: BinaryNode) => {
      if (node.attrs.error || !node.attrs.id) return;
      this.receipts.rememberAck(node.attrs.id);
      // A send waiting for this ack writes Sent with its result.
      if (AwaitedAcks.has(this.context.socket, node.attrs.id)) return;
      // One statement of its own, outside the store: after everything before it.
      this.enqueue('ack', () => this.receipts.onServerAck(node.attrs.id), 'serial');
    };
    const onReceipt = (node: BinaryNode) => {
      if (node.attrs.type !== 'played' || !node.attrs.from?.endsWith('@g.us') || !node.attrs.participant) return;
      const ids = [node.attrs.id, ...receiptListIds(node)].filter(Boolean);
      this.enqueue(
        'receipt',
        () => this.receipts.onGroupPlayed(node.attrs.from, node.attrs.participant, ids, Number(node.attrs.t) || Date.now() / 1000),
        'pipelined',
      );
    };
    socket.ws.on('CB:ack,class:message', onAck);
    socket.ws.on('CB:receipt', onReceipt);
    detachers.push(() => socket.ws.off('CB:ack,class:message', onAck));
    detachers.push(() => socket.ws.off('CB:receipt', onReceipt));
    // A channel admin's edit (edit="3") or deletion (edit="8") of a post: Baileys reads it as the post again.
    const onNewsletterEdit = (node: BinaryNode) => {
      const { from, id, edit } = node.attrs;
      if (!from?.endsWith('@newsletter') || !id || (edit !== '3' && edit !== '8')) return;
      const plaintext = getBinaryNodeChild(node, 'plaintext')?.content;
      const change = {
        jid: from,
        messageId: id,
        serverId: node.attrs.server_id ?? '',
        edit: edit === '3' ? ('edited' as const) : ('deleted' as const),
        content: plaintext instanceof Uint8Array ? Buffer.from(plaintext) : undefined,
        t: Number(node.attrs.t) || Math.floor(Date.now() / 1000),
      };
      this.enqueue('newsletter edit', () => this.messages.onNewsletterChange(change));
    };
    socket.ws.on('CB:message', onNewsletterEdit);
    detachers.push(() => socket.ws.off('CB:message', onNewsletterEdit));
    // The groups cache drops a group as soon as WhatsApp says it changed (before the change is handled), and forgets
    // the instance on a reconnect (notifications may have been missed).
    const onGroupCacheNotification = (node: BinaryNode) => {
      const about = groupNotificationOf(node);
      if (!about) return;
      this.services.groupMetadata.invalidate(this.context.instanceId, about.groupJid, about.membership);
      this.services.groups.invalidate(this.context.instanceId, about.groupJid);
    };
    const onGroupCacheConnection = (update: BaileysEventMap['connection.update']) => {
      if (update.connection === 'open' || update.connection === 'close') this.services.groupMetadata.forget(this.context.instanceId);
    };
    socket.ws.on('CB:notification', onGroupCacheNotification);
    socket.ev.on('connection.update', onGroupCacheConnection);
    detachers.push(() => socket.ws.off('CB:notification', onGroupCacheNotification));
    detachers.push(() => socket.ev.off('connection.update', onGroupCacheConnection));
    // A group's picture and its community links: notifications Baileys turns into no group event.
    const onGroupNotification = (node: BinaryNode) => {
      const change = groupChangeOf(node);
      if (change) this.enqueue('group change', () => this.directory.onGroupChange(node.attrs.from, change));
    };
    socket.ws.on('CB:notification', onGroupNotification);
    detachers.push(() => socket.ws.off('CB:notification', onGroupNotification));
    // Another device changed app state: the chat notes and the quick replies (which Baileys drops) are read again when their collection changed.
    const onServerSync = (node: BinaryNode) => {
      if (node.attrs.type !== 'server_sync') return;
      const collections = Array.isArray(node.content) ? node.content : [];
      const changed = (name: string) => collections.some((item) => item.tag === 'collection' && item.attrs.name === name);
      if (changed(NOTES_COLLECTION)) this.enqueue('chat notes', () => this.directory.onNotesChanged());
      if (QUICK_REPLY_COLLECTIONS.some(changed)) this.enqueue('quick replies', () => this.directory.onQuickRepliesChanged());
    };
    socket.ws.on('CB:notification', onServerSync);
    detachers.push(() => socket.ws.off('CB:notification', onServerSync));
    // Disappearing messages of a group turned on or off: Baileys makes an ephemeral-setting protocol message of the w:gp2 notification.
    const onGroupEphemeral = ({ messages }: BaileysEventMap['messages.upsert']) => {
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
    };
    socket.ev.on('messages.upsert', onGroupEphemeral);
    detachers.push(() => socket.ev.off('messages.upsert', onGroupEphemeral));

    // Work already queued finishes (Baileys has acked those stanzas); nothing new is taken.
    return () => {
      for (const detach of detachers.splice(0)) detach();
      this.unwatch();
      this.backlog.close();
      this.reader.close();
    };
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

  private enqueue(what: string, task: () => Promise<void>, mode: InboundTaskMode = 'ordered'): void {
    if (this.stopped) return;
    this.backlog.added();
    const received = RECEIVED.has(what);
    void this.queue.run(async () => {
      try {
        // A received message Baileys already acknowledged is still stored after the lease was lost
        // (idempotently, ADR 0034): WhatsApp will not give it to the new holder.
        if (this.stopped && !received) return;
        await (received ? this.receiving.run(true, task) : task());
      } catch (error) {
        this.failed(what, error);
      } finally {
        this.backlog.removed();
        this.reader.pump();
      }
    }, mode);
  }

  private failed(what: string, error: unknown, detail: Record<string, unknown> = {}): void {
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
        if (this.stopped && !this.receiving.getStore()) return false;
        try {
          await work();
          return true;
        } catch (error) {
          if (error instanceof FencedOutError || error instanceof InboundWriteFailedError) {
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
  private async write<T>(
    work: (manager: EntityManager, events: NewOutboxEvent[]) => Promise<T>,
    keys?: readonly string[],
    options: { alone?: boolean } = {},
  ): Promise<T> {
    // An `ordered` task's write waits for the socket's earlier tasks (InboundQueue).
    await this.queue.beforeWrite();
    const learned = this.identities.takeLearned();
    try {
      const written = this.services.store.write(
        this.context.lease,
        async (manager, events) => {
          const changed = await LidMappingRepository.storeWithin(manager, this.context.instanceId, learned);
          // Messages stored while their sender was only a LID get its number now (guarantee 4).
          await LidMappingRepository.resolveMessagesWithin(manager, this.context.instanceId, changed);
          return work(manager, events);
        },
        keys,
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

/** A `picture` notification of a group, or a w:gp2 `link` / `unlink` (community) one, as a GroupChange; else null. */
export function groupChangeOf(node: BinaryNode): GroupChange | null {
  const { from, type, participant, participant_pn: participantPn } = node.attrs;
  if (!from?.endsWith('@g.us') || !Array.isArray(node.content)) return null;
  const first = node.content[0];
  if (!first) return null;
  if (type === 'picture' && (first.tag === 'set' || first.tag === 'delete')) {
    return { author: first.attrs.author ?? participant, authorPn: participantPn, picture: { remove: first.tag === 'delete', id: first.attrs.id ?? '' } };
  }
  if (type === 'w:gp2' && (first.tag === 'link' || first.tag === 'unlink')) {
    const group = getBinaryNodeChild(first, 'group');
    if (!group?.attrs.jid) return null;
    return {
      author: participant,
      authorPn: participantPn,
      link: {
        change: first.tag,
        type: first.attrs.link_type ?? first.attrs.unlink_type ?? '',
        reason: first.attrs.unlink_reason ?? '',
        jid: group.attrs.jid,
        name: group.attrs.subject ?? '',
        defaultSub: Boolean(getBinaryNodeChild(group, 'default_sub_group')),
      },
    };
  }
  return null;
}

function receiptListIds(node: BinaryNode): string[] {
  const content = Array.isArray(node.content) ? node.content : [];
  const list = content.find((child) => child.tag === 'list');
  const items = Array.isArray(list?.content) ? list.content : [];
  return items.filter((item) => item.tag === 'item' && item.attrs.id).map((item) => item.attrs.id);
}
