import { describeContent, type DescribedContent, type ProtoMessage } from '@gw/domain';
import {
  ChatRepository,
  ContactRepository,
  InboundGroupRepository,
  MessageRepository,
  type ChatObservation,
  type ChatRow,
  type ContactRow,
  type MessageRow,
  type NewMessage,
  type NewOutboxEvent,
} from '@gw/persistence';
import { recordId } from '@gw/platform';
import type { EntityManager } from 'typeorm';
import { isJidGroup, proto, type BaileysEventMap, type WAMessage } from '../../baileys';
import { storeCallWithin } from '../call-message';
import { InboundBatch } from '../inbound-batch';
import { callEvent, chatKey, newsletterMessagesEvent, contactsEvent, historyEvent, messagesEvent, messagesUpdateEvent } from '../event-payloads';
import type { GroupInfo } from '../group-info-cache';
import type { InstanceIdentity } from '../event-payloads';
import { isLid, isPhoneJid, type Party } from '../identity-resolver';
import { statusName, timestampMs, toNewMessage, type MessagePlace } from '../message-mapper';
import { decryptVote, pollCreationOf } from '../poll-votes';
import { chatWriteKey, messageKey, type InboundContext } from './inbound-context';
import type { Written } from './sender-names';
import type { PresenceEvents } from './presence';
import { ANNOUNCED, errorText, rank, type EarlyReceipt, type ReceiptEvents } from './receipts';

/** What a placeholder of an undecryptable message says about its (missing) content. */
const UNDECRYPTABLE: DescribedContent = {
  messageType: 'placeholder',
  type: 'unknown',
  mediaType: '',
  text: '',
  content: null,
  quoted: '',
  edited: '',
  reaction: '',
  buttonOrListid: '',
  vote: '',
  revokes: '',
  field: '',
};

/** What a message is to the store (MessageEvents.classify). */
type MessageKind =
  | { kind: 'skip' }
  | { kind: 'undecryptable' }
  | { kind: 'newsletter' }
  | { kind: 'revoke'; described: DescribedContent }
  | { kind: 'message'; described: DescribedContent };

/** A message to store, with what was read for it before its write (MessageEvents.prepare). */
interface PreparedMessage {
  message: WAMessage;
  described: DescribedContent;
  place: MessagePlace;
  group: GroupInfo | null;
  vote: string | undefined;
  fromMe: boolean;
  upsertStatus: string;
  upsertError: string;
  senderName: string;
  who: InstanceIdentity;
  messageId: string;
  keys: string[];
}

/** What a message's write leaves to do after its commit (MessageEvents.afterStore). */
interface StoreOutcome {
  early?: EarlyReceipt;
  written?: Written;
}

/** How long an exact reload asked through the API waits for the phone's answer to count as history. */
const RESEND_WINDOW_MS = 5 * 60_000;

/**
 * Messages of one socket: received and sent (from the phone or the API), history syncs and exact
 * reloads, edits, revokes, poll votes, channel posts and calls.
 */
export class MessageEvents {
  /** The identity (pn|lid) of ours last stored as a contact by this socket. */
  private selfObserved = '';
  /** Message ids of exact reloads asked for through the API, and when (see expectResend). */
  private readonly requestedResends = new Map<string, { at: number; requestId: string }>();

  constructor(
    private readonly context: InboundContext,
    private readonly receipts: ReceiptEvents,
    private readonly presence: PresenceEvents,
  ) {}

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

  /**
   * An upsert without reloads as one task per message, each writing once (the socket handler runs them
   * pipelined, ADR 0013); null when some message is a reload (onUpsert then, as one task).
   */
  upsertTasks(messages: WAMessage[]): Array<() => Promise<void>> | null {
    if (this.requestedResends.size > 0 && messages.some((message) => message.key?.id && this.requestedResends.has(message.key.id))) return null;
    return messages.map((message) => async () => {
      await this.context.withRetry('messages.upsert', { messageId: message.key?.id }, () => this.onMessage(message));
      this.presence.followPresence(message);
    });
  }

  async onUpsert(messages: WAMessage[]): Promise<void> {
    const now = Date.now();
    const reloaded = messages.filter((message) => {
      const entry = message.key?.id ? this.requestedResends.get(message.key.id) : undefined;
      return entry !== undefined && now - entry.at <= RESEND_WINDOW_MS;
    });
    // New messages first: nothing that goes wrong with a reload's announcement can cost them.
    for (const message of messages) {
      if (reloaded.includes(message)) continue;
      await this.context.withRetry('messages.upsert', { messageId: message.key?.id }, () => this.onMessage(message));
      this.presence.followPresence(message);
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
      await this.context.withRetry('messages.reload', { requestId, messageIds: batch.map((message) => message.key.id) }, () =>
        this.onHistory(history, requestId),
      );
      for (const message of batch) this.requestedResends.delete(message.key.id as string);
    }
  }

  /**
   * Stores one message. `history` marks messages of a history sync: stored like any other, announced
   * together in one `history` event instead of one `messages` event each.
   */
  private async onMessage(message: WAMessage, history?: MessageRow[]): Promise<void> {
    const kind = this.classify(message);
    if (kind.kind === 'undecryptable') return this.onUndecryptable(message, history);
    if (kind.kind === 'newsletter') return this.onNewsletterMessage(message);
    if (kind.kind === 'revoke') return this.onRevoke(message, kind.described);
    if (kind.kind !== 'message') return;
    const prepared = await this.prepare(message, kind.described);
    const outcome: StoreOutcome = {};
    await this.context.write((manager, events) => this.storeMessage(manager, events, prepared, history, outcome), prepared.keys);
    this.afterStore(prepared, outcome);
  }

  /** What a message is to the store: skipped, a placeholder, a channel post, a revoke, or a message to store (onMessage). */
  private classify(message: WAMessage): MessageKind {
    const key = message.key;
    const remote = key?.remoteJid ?? '';
    if (key?.id && remote && !message.message && message.messageStubType === proto.WebMessageInfo.StubType.CIPHERTEXT) {
      if (remote.endsWith('@newsletter') || remote.endsWith('@broadcast')) return { kind: 'skip' };
      if ((message as { category?: string }).category === 'peer') return { kind: 'skip' };
      return { kind: 'undecryptable' };
    }
    if (!key?.id || !remote || !message.message) return { kind: 'skip' }; // other stubs
    if (remote.endsWith('@newsletter')) return { kind: 'newsletter' };
    if (remote.endsWith('@broadcast')) return { kind: 'skip' }; // status updates: not stored
    if ((message as { category?: string }).category === 'peer') return { kind: 'skip' };
    const described = describeContent(message.message as ProtoMessage);
    if (!described.field) return { kind: 'skip' }; // sender-key distribution or context only
    if (described.type === 'protocol') return described.revokes ? { kind: 'revoke', described } : { kind: 'skip' }; // history notifications, app-state key shares, ephemeral settings…
    return { kind: 'message', described };
  }

  /** What storing a message needs that is read before its write: its chat, group, poll vote, status and sender. */
  private async prepare(message: WAMessage, described: DescribedContent): Promise<PreparedMessage> {
    const key = message.key;
    const remote = key.remoteJid as string;
    const place = await this.place(message);
    const group = place.isGroup ? await this.context.groupInfo(remote) : null;
    const vote = described.field === 'pollUpdateMessage' ? await this.pollVote(message, place.sender, described.quoted) : undefined;
    const fromMe = Boolean(key.fromMe);
    let upsertStatus = fromMe ? statusName(message.status) : '';
    const upsertError = upsertStatus === 'Failed' ? errorText(message.messageStubParameters) : '';
    if (fromMe) upsertStatus = this.advancedByReceipts(message, upsertStatus);
    const senderName = message.pushName || (fromMe ? (this.context.socket.user?.name ?? '') : '') || '';
    const who = await this.context.who();
    const messageId = key.id as string;
    // What it touches: this message (and the one it edits) and its chat. Writes about other messages and
    // chats (receipts, which name only their messages) may share a wave of the group with it (InboundStore).
    const keys = [
      messageKey(messageId),
      ...(described.edited ? [messageKey(described.edited)] : []),
      ...[place.chatId, place.chatLid].filter(Boolean).map(chatWriteKey),
    ];
    return { message, described, place, group, vote, fromMe, upsertStatus, upsertError, senderName, who, messageId, keys };
  }

  /** The status and error a message is stored with: its own, or an earlier receipt's (read in the write, in order: ADR 0013). */
  private statusAt(prepared: PreparedMessage, outcome: StoreOutcome): { status: string; error: string } {
    let status = prepared.upsertStatus;
    let error = prepared.upsertError;
    const early = prepared.fromMe ? this.receipts.earlyReceipt(prepared.messageId) : undefined;
    outcome.early = early;
    if (early?.state === 'Failed' && rank(status) < rank('Delivered')) {
      status = 'Failed';
      error = early.error;
    } else if (early && rank(early.state) > rank(status)) {
      status = early.state;
    }
    return { status, error };
  }

  /** After the commit of a message's write: the receipt it took is forgotten, its push name and our identity noted. */
  private afterStore(prepared: PreparedMessage, outcome: StoreOutcome): void {
    if (outcome.early) this.receipts.forgetEarly(prepared.messageId);
    if (outcome.written) this.context.senders.committed(outcome.written);
    if (prepared.fromMe) this.selfObserved = `${prepared.place.sender.pn}|${prepared.place.sender.lid}`;
  }

  /** One message's write (onMessage; a history chunk's messages it cannot store set-oriented). */
  private async storeMessage(
    manager: EntityManager,
    events: NewOutboxEvent[],
    prepared: PreparedMessage,
    history: MessageRow[] | undefined,
    outcome: StoreOutcome,
  ): Promise<void> {
    const { message, described, place, group, vote, fromMe, senderName, who } = prepared;
    // A receipt that came before the message is read here, in order: an earlier event's write may
    // have kept it while this one was prepared (ADR 0013, pipelined).
    const { status, error } = this.statusAt(prepared, outcome);
    const early = outcome.early;
    const row = toNewMessage(this.context.instanceId, { message, described, place, senderName, status, vote });
    if (status === 'Failed') row.error = error;
    // The copy first: a re-emitted upsert (Baileys emits some messages twice) must not count as a
    // new message for the chat. This queue is the only writer of stored copies (`raw`); the row is
    // locked from here to the commit, a few round trips (a send's result write may wait for it).
    // Our own message moves the row the send reserved forward in the same statement (ADR 0012).
    const merged = fromMe && status !== 'Failed';
    const copy = merged ? await InboundBatch.storeOwnCopy(manager, row) : await MessageRepository.storeCopyWithin(manager, row);
    if (!copy) {
      // Seen before: only a status this copy knows better can change.
      const prior = await MessageRepository.findWithin(manager, this.context.instanceId, row.messageId);
      if (fromMe && prior) await this.advanceFromUpsert(manager, events, prior, status, error, place);
      // A history batch (or an exact reload) names what it brought, stored before or not.
      if (history && prior) history.push(prior);
      return;
    }
    const { row: stored, created } = copy;

    // Our own identity is observed once per socket (and again if it changes), not on every send.
    const self = fromMe ? `${place.sender.pn}|${place.sender.lid}` : '';
    const pushName = fromMe ? '' : message.pushName || '';
    const contact = fromMe && this.selfObserved === self ? null : await this.observeSender(manager, place.sender, pushName);
    if (contact) events.push(contactsEvent([contact], who));
    // Baileys announces a live message's push name again (contacts.update); not a history sync's.
    if (pushName && !history) outcome.written = this.context.senders.wrote(manager, [place.sender.pn, place.sender.lid], pushName);

    const incoming = !fromMe && described.type !== 'reaction' && !described.edited && described.field !== 'pollUpdateMessage';
    let chat = await this.observeChat(manager, place, group, {
      waName: place.isGroup ? group?.subject : fromMe ? undefined : message.pushName || undefined,
      lastMessage: { timestamp: row.messageTimestamp, type: row.messageType, textVote: row.text || row.vote, sender: row.sender, incoming },
    });
    if (group) chat = (await ChatRepository.applyStateWithin(manager, this.context.instanceId, chatKey(chat), { groupFlags: group.flags })) ?? chat;

    // An edit (from the phone, another device, or our own /message/edit coming back): the edit is a
    // message of its own whose `edited` names the original (as the captures show); the original takes
    // the new text, `edited` = the edit's id, and is announced as a messages_update `Edited`.
    const original = described.edited
      ? await MessageRepository.applyEditWithin(manager, this.context.instanceId, described.edited, {
          text: described.text,
          content: described.content,
          editId: row.messageId,
        })
      : null;
    // A row the send path stored first keeps its status unless this copy knows a later one.
    const advanced =
      !fromMe || created ? null : merged ? ('advanced' in copy && copy.advanced ? stored : null) : await this.advanceTo(manager, stored, status, error);
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
  }

  /**
   * A message Baileys could not decrypt (a CIPHERTEXT stub: Bad MAC, no session, no `<enc>` at all):
   * stored as a placeholder — messageType `placeholder`, `content: {placeholder: "undecryptable",
   * reason}` — and announced as a `messages` event, so nothing a phone sent is silently missing.
   * Baileys has asked the sender for a retry (and its own phone for a resend); when the content
   * arrives under the same id, onMessage completes this row (it has no stored copy, `raw`) and
   * announces the message again with its content. A placeholder already stored, or the content,
   * is left as it is (Baileys emits the stub again on every failed retry).
   */
  private async onUndecryptable(message: WAMessage, history?: MessageRow[]): Promise<void> {
    const key = message.key;
    const remote = key.remoteJid ?? '';
    if (remote.endsWith('@newsletter') || remote.endsWith('@broadcast')) return;
    if ((message as { category?: string }).category === 'peer') return;
    const place = await this.place(message);
    const group = place.isGroup ? await this.context.groupInfo(remote) : null;
    const reason = message.messageStubParameters?.[0] ?? '';
    const fromMe = Boolean(key.fromMe);
    const senderName = message.pushName || '';
    const row: NewMessage = {
      ...toNewMessage(this.context.instanceId, { message, described: UNDECRYPTABLE, place, senderName, status: '' }),
      content: { placeholder: 'undecryptable', reason },
      raw: null,
    };
    const who = await this.context.who();
    const messageId = key.id as string;
    await this.context.write(
      async (manager, events) => {
        const prior = await MessageRepository.findWithin(manager, this.context.instanceId, messageId);
        if (prior) {
          if (history) history.push(prior);
          return;
        }
        const { row: stored } = await MessageRepository.upsertWithin(manager, row);
        const contact = fromMe ? null : await this.observeSender(manager, place.sender, senderName);
        if (contact) events.push(contactsEvent([contact], who));
        // Not counted as unread: the content, when it comes, is (onMessage).
        const chat = await this.observeChat(manager, place, group, {
          waName: place.isGroup ? group?.subject : fromMe ? undefined : senderName || undefined,
          lastMessage: { timestamp: row.messageTimestamp, type: row.messageType, textVote: '', sender: row.sender, incoming: false },
        });
        if (history) {
          history.push(stored);
          return;
        }
        events.push(messagesEvent(chat, stored, who, group?.subject ?? ''));
      },
      [messageKey(messageId), ...[place.chatId, place.chatLid].filter(Boolean).map(chatWriteKey)],
    );
  }

  /**
   * The initial history after a pairing (and later syncs): every message stored, then one `history`
   * event carrying the pairing's request_id, so a client can tie the history to its connect.
   *
   * A chunk is one write (issue #38): its new messages in a few multi-row inserts, each chat's and
   * sender's observation once for the chunk, and its `history` event, in one fenced transaction of its
   * own (outside the worker's group transactions, so other instances' writes do not wait for it) in the
   * instance's order. A message that is stored already (a chunk delivered again), an edit or a poll
   * vote takes onMessage's path inside that transaction; placeholders are written before it (they are
   * counted in its event), revokes and channel posts after it (they name messages it stores).
   */
  async onHistory(history: BaileysEventMap['messaging-history.set'], reloadRequestId?: string): Promise<void> {
    const messages = history.messages ?? [];
    const collected: MessageRow[] = [];
    const prepared: PreparedMessage[] = [];
    const after: Array<{ message: WAMessage; kind: MessageKind }> = [];
    for (const message of messages) {
      const kind = this.classify(message);
      if (kind.kind === 'undecryptable')
        await this.context.withRetry('messaging-history.set', { messageId: message.key?.id }, () => this.onUndecryptable(message, collected));
      else if (kind.kind === 'message') prepared.push(await this.prepare(message, kind.described));
      else if (kind.kind !== 'skip') after.push({ message, kind });
    }
    const who = await this.context.who();
    const row = await this.context.services.instances.findById(this.context.instanceId);
    const details = {
      // An on-demand sync (POST /message/history-sync) carries its own request's id; the others the pairing's.
      // An exact reload carries the id its request got (empty when the message came before it was sent).
      requestId: reloadRequestId ?? (history.peerDataRequestSessionId || (row?.pairingRequestId ?? '')),
      syncType: history.syncType === undefined || history.syncType === null ? '' : String(history.syncType),
      progress: history.progress ?? null,
      isLatest: history.isLatest ?? null,
      chats: history.chats?.length ?? 0,
      contacts: history.contacts?.length ?? 0,
    };
    let outcomes: StoreOutcome[] = [];
    await this.context.withRetry('messaging-history.set', { messages: messages.length, stored: prepared.length }, async () => {
      outcomes = await this.context.write(
        async (manager, events) => {
          const written = await this.storeChunk(manager, events, prepared, who);
          const rows = [...collected, ...written.rows];
          // Once per message, its last state, in the chunk's order.
          const byId = new Map(rows.map((stored) => [stored.messageId, stored]));
          const order = new Map(messages.map((message, index) => [message.key?.id ?? '', index]));
          const stored = [...byId.values()].sort((a, b) => (order.get(a.messageId) ?? 0) - (order.get(b.messageId) ?? 0));
          events.push(historyEvent({ ...details, messages: stored }, who));
          return written.outcomes;
          // Its own transaction (1–5 s for ~1,000 messages): the worker's other instances' writes do not wait for it (issue #38).
        },
        undefined,
        { alone: true },
      );
    });
    prepared.forEach((message, index) => {
      if (outcomes[index]) this.afterStore(message, outcomes[index]);
    });
    for (const { message, kind } of after) {
      if (kind.kind === 'revoke')
        await this.context.withRetry('messaging-history.set', { messageId: message.key?.id }, () => this.onRevoke(message, kind.described));
      else await this.context.withRetry('messaging-history.set', { messageId: message.key?.id }, () => this.onNewsletterMessage(message));
    }
  }

  /** Whether onHistory writes this chunk in one write (no placeholder, revoke or channel post in it): it may then run pipelined. */
  historyWritesOnce(history: BaileysEventMap['messaging-history.set']): boolean {
    return (history.messages ?? []).every((message) => {
      const kind = this.classify(message).kind;
      return kind === 'message' || kind === 'skip';
    });
  }

  /**
   * A history chunk's messages, set-oriented: the new ones inserted together (MessageRepository.insertNewWithin),
   * their senders observed once each, their chats once each (the chunk's newest message, its incoming
   * ones counted: what one observation per message leaves); the others through storeMessage, in order.
   */
  private async storeChunk(
    manager: EntityManager,
    events: NewOutboxEvent[],
    prepared: PreparedMessage[],
    who: InstanceIdentity,
  ): Promise<{ rows: MessageRow[]; outcomes: StoreOutcome[] }> {
    const outcomes = prepared.map((): StoreOutcome => ({}));
    const rows = new Array<MessageRow | undefined>(prepared.length);
    const plain: number[] = [];
    const news: NewMessage[] = [];
    prepared.forEach((message, index) => {
      // Edits and poll votes change other rows: their own path.
      if (message.described.edited || message.described.field === 'pollUpdateMessage') return;
      const { status, error } = this.statusAt(message, outcomes[index]);
      const row = toNewMessage(this.context.instanceId, {
        message: message.message,
        described: message.described,
        place: message.place,
        senderName: message.senderName,
        status,
        vote: message.vote,
      });
      if (status === 'Failed') row.error = error;
      plain.push(index);
      news.push(row);
    });
    const inserted = new Map((await MessageRepository.insertNewWithin(manager, news)).map((stored) => [stored.id, stored]));
    const created: number[] = [];
    plain.forEach((index, position) => {
      const stored = inserted.get(news[position].id);
      if (stored) {
        rows[index] = stored;
        created.push(index);
      }
    });

    // Senders: each once, with the last push name the chunk gave it.
    const senders = new Map<string, { sender: Party; pushName: string }>();
    for (const index of created) {
      const { place, fromMe, message } = prepared[index];
      const identity = `${place.sender.pn}|${place.sender.lid}`;
      // Our own identity is observed once per socket (afterStore notes it), not for each of our messages.
      if (fromMe && this.selfObserved === identity) continue;
      const pushName = fromMe ? '' : message.pushName || '';
      const seen = senders.get(identity);
      senders.set(identity, { sender: place.sender, pushName: pushName || seen?.pushName || '' });
    }
    // The new ones in one statement (a fresh pairing's history: all of them), the others one by one.
    const observations = [...senders.values()].filter(({ sender }) => sender.pn || sender.lid);
    const createdContacts = await ContactRepository.createMissingWithin(
      manager,
      this.context.instanceId,
      observations.map(({ sender, pushName }) => ({ jid: sender.pn, lid: sender.lid, pushName })),
    );
    for (const contact of createdContacts) events.push(contactsEvent([contact], who));
    // Created with all the observation says: nothing left to observe (another observation of the same row still is).
    const createdKeys = new Set(createdContacts.map((contact) => `${contact.jid}|${contact.lid}|${contact.pushName}`));
    for (const { sender, pushName } of observations) {
      if (createdKeys.has(`${sender.pn || sender.lid}|${sender.lid}|${pushName}`)) continue;
      const contact = await this.observeSender(manager, sender, pushName);
      if (contact) events.push(contactsEvent([contact], who));
    }

    // Chats: one observation each, as the chunk's observations one by one would leave it.
    const chats = new Map<string, { place: MessagePlace; group: GroupInfo | null; observation: ChatObservation }>();
    for (const index of created) {
      const { place, group, fromMe, described, message } = prepared[index];
      const stored = rows[index] as MessageRow;
      const incoming = !fromMe && described.type !== 'reaction';
      const waName = place.isGroup ? group?.subject : fromMe ? undefined : message.pushName || undefined;
      const chatOf = `${place.chatId}|${place.chatLid}`;
      let chat = chats.get(chatOf);
      if (!chat) {
        chat = {
          place,
          group,
          observation: {
            waChatId: isLid(place.chatId) ? undefined : place.chatId,
            waChatLid: place.chatLid || undefined,
            isGroup: place.isGroup,
            lastMessage: { timestamp: -1, type: '', textVote: '', sender: '', incoming: false, incomingCount: 0 },
          },
        };
        chats.set(chatOf, chat);
      }
      const observation = chat.observation;
      const last = observation.lastMessage as NonNullable<ChatObservation['lastMessage']>;
      if (waName) observation.waName = waName;
      if (stored.messageTimestamp >= last.timestamp) {
        last.timestamp = stored.messageTimestamp;
        if (stored.messageType) {
          last.type = stored.messageType;
          last.textVote = stored.text || stored.vote;
          last.sender = stored.sender;
        }
      }
      if (incoming) last.incomingCount = (last.incomingCount ?? 0) + 1;
    }
    const observed = [...chats.values()];
    for (const { observation, group } of observed) if (group && !observation.waName) observation.waName = group.subject || undefined;
    // New chats in one statement, then every observation in one (InboundGroupRepository: a chat stored with exactly its identifiers).
    await ChatRepository.createMissingWithin(
      manager,
      this.context.instanceId,
      observed.map(({ observation }) => ({ pn: observation.waChatId ?? '', lid: observation.waChatLid ?? '', isGroup: observation.isGroup ?? false })),
      () => recordId(14),
    );
    const written = await InboundGroupRepository.writeWithin(manager, {
      chats: observed.map(({ observation }) => ({ instanceId: this.context.instanceId, observation, newId: () => recordId(14) })),
    });
    for (const [index, { group }] of observed.entries()) {
      if (group) await ChatRepository.applyStateWithin(manager, this.context.instanceId, chatKey(written.chats[index]), { groupFlags: group.flags });
    }

    // Stored before, an edit, a poll vote: one by one, in order.
    const history: MessageRow[] = [];
    for (let index = 0; index < prepared.length; index++) {
      if (rows[index]) continue;
      const before = history.length;
      await this.storeMessage(manager, events, prepared[index], history, outcomes[index]);
      if (history.length > before) rows[index] = history[history.length - 1];
    }
    return { rows: rows.filter((stored): stored is MessageRow => stored !== undefined), outcomes };
  }

  private async onRevoke(message: WAMessage, described: DescribedContent): Promise<void> {
    const place = await this.place(message);
    const who = await this.context.who();
    await this.context.write(async (manager, events) => {
      const row = await MessageRepository.markDeletedWithin(manager, this.context.instanceId, described.revokes);
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
    const me = this.context.identities.me();
    if (isJidGroup(remote)) {
      const sender = key.fromMe ? me : await this.context.identities.party(key.participant, key.participantAlt);
      return { chatId: remote, chatLid: '', isGroup: true, sender };
    }
    const chat = await this.context.identities.party(remote, key.remoteJidAlt);
    return { chatId: chat.pn || chat.jid, chatLid: chat.lid, isGroup: false, sender: key.fromMe ? me : chat };
  }

  /** The other side of a 1:1 chat (who sends its receipts); the group JID for groups. */
  private async chatParty(place: MessagePlace): Promise<Party> {
    if (place.isGroup) return { jid: place.chatId, pn: '', lid: '' };
    return { jid: place.chatLid || place.chatId, pn: isPhoneJid(place.chatId) ? place.chatId : '', lid: place.chatLid };
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
    // Through the group's batch: the chats of a group transaction's messages are updated in one statement (ADR 0017).
    return InboundBatch.observeChat(manager, this.context.instanceId, observation, () => recordId(14));
  }

  /** The author's contact row (push name, LID pair); returned only when it changed. */
  private async observeSender(manager: EntityManager, sender: Party, pushName: string): Promise<ContactRow | null> {
    if (!sender.pn && !sender.lid) return null;
    const { contact, changed } = await ContactRepository.observeWithin(manager, this.context.instanceId, { jid: sender.pn, lid: sender.lid, pushName });
    return changed ? contact : null;
  }

  /** The option text(s) a poll vote chose, decrypted with the stored creation's secret. */
  private async pollVote(message: WAMessage, voter: Party, pollId: string): Promise<string> {
    const update = message.message?.pollUpdateMessage;
    if (!update?.vote || !pollId) return '';
    // The poll may be an earlier event of this socket, still being committed.
    await this.context.settled();
    const creation = await this.context.services.messages.findOne(this.context.instanceId, pollId);
    const poll = creation ? pollCreationOf(creation, this.context.identities.me()) : null;
    if (!poll) {
      this.context.logger.warn({ pollId, messageId: message.key.id }, 'poll vote for a poll that is not stored: vote left empty');
      return '';
    }
    const selected = decryptVote(update.vote, poll, voter);
    if (selected === null) this.context.logger.warn({ pollId, messageId: message.key.id }, 'poll vote could not be decrypted');
    return (selected ?? []).join(', ');
  }

  /** Receipts Baileys merged into a group message's upsert (`userReceipt`) count as its status. */
  private advancedByReceipts(message: WAMessage, status: string): string {
    let best = status;
    if (best === 'Pending' && this.receipts.wasAcked(message.key.id ?? '')) best = 'Sent';
    for (const receipt of message.userReceipt ?? []) {
      const state = receipt.playedTimestamp ? 'Played' : receipt.readTimestamp ? 'Read' : receipt.receiptTimestamp ? 'Delivered' : '';
      if (rank(state) > rank(best)) best = state;
    }
    return best;
  }

  private async advanceTo(manager: EntityManager, row: MessageRow, status: string, error: string): Promise<MessageRow | null> {
    if (status === 'Failed') return (await MessageRepository.failWithin(manager, this.context.instanceId, [row.messageId], error || 'failed'))[0] ?? null;
    if (rank(status) <= rank(row.status)) return null;
    return (await MessageRepository.advanceStatusWithin(manager, this.context.instanceId, [row.messageId], status))[0] ?? null;
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
          await this.context.who(),
        ),
      );
    }
  }

  /** A channel post (followed newsletter): stored like a message of that chat, announced as `newsletter_messages`. */
  private async onNewsletterMessage(message: WAMessage): Promise<void> {
    const described = describeContent(message.message as ProtoMessage);
    if (!described.field || described.type === 'protocol') return;
    const remote = message.key.remoteJid ?? '';
    const place: MessagePlace = { chatId: remote, chatLid: '', isGroup: false, sender: { jid: remote, pn: '', lid: '' } };
    const row = toNewMessage(this.context.instanceId, { message, described, place, senderName: '', status: '', vote: undefined });
    const who = await this.context.who();
    await this.context.write(async (manager, events) => {
      const prior = await MessageRepository.findWithin(manager, this.context.instanceId, row.messageId, true);
      if (prior?.raw) return;
      const { row: stored } = await MessageRepository.upsertWithin(manager, row);
      const serverId = (message.key as { server_id?: string }).server_id ?? '';
      events.push(newsletterMessagesEvent(stored, serverId, who));
    });
  }

  /**
   * An admin edited (`edit="3"`, the new content) or deleted (`edit="8"`) a channel post: the stored post follows
   * and a `newsletter_messages` event says so (`edit`: edited / deleted). Baileys reads such a stanza as the post
   * again, under the same id, so the socket handler hands the raw stanza here.
   */
  async onNewsletterChange(change: {
    jid: string;
    messageId: string;
    serverId: string;
    edit: 'edited' | 'deleted';
    content?: Buffer;
    t: number;
  }): Promise<void> {
    const who = await this.context.who();
    let content: ProtoMessage | undefined;
    if (change.edit === 'edited') {
      try {
        content = proto.Message.decode(change.content ?? Buffer.alloc(0)) as unknown as ProtoMessage;
      } catch {
        return;
      }
    }
    const described = content ? describeContent(content) : undefined;
    if (change.edit === 'edited' && (!described?.field || described.type === 'protocol')) return;
    await this.context.withRetry('newsletter edit', { messageId: change.messageId }, () =>
      this.context.write(async (manager, events) => {
        let row: MessageRow | null;
        if (change.edit === 'deleted') row = await MessageRepository.markDeletedWithin(manager, this.context.instanceId, change.messageId);
        else {
          row = await MessageRepository.applyEditWithin(manager, this.context.instanceId, change.messageId, {
            text: described!.text,
            content: described!.content,
            editId: change.messageId,
          });
          if (!row) {
            // A post the instance had not stored: stored as it is now.
            const message = { key: { remoteJid: change.jid, id: change.messageId, fromMe: false }, message: content, messageTimestamp: change.t } as WAMessage;
            const place: MessagePlace = { chatId: change.jid, chatLid: '', isGroup: false, sender: { jid: change.jid, pn: '', lid: '' } };
            const created = toNewMessage(this.context.instanceId, { message, described: described!, place, senderName: '', status: '', vote: undefined });
            row = (await MessageRepository.upsertWithin(manager, created)).row;
          }
        }
        if (row) events.push(newsletterMessagesEvent(row, change.serverId, who, change.edit));
      }),
    );
  }

  /** Call offers and their ends: a `call` event (the instance can reject through the API later) and the call's message (messageType `call`). */
  async onCalls(calls: BaileysEventMap['call']): Promise<void> {
    const who = await this.context.who();
    for (const call of calls) {
      const caller = await this.context.identities.party(call.from, call.callerPn);
      await this.context.withRetry('call', { callId: call.id }, () =>
        this.context.write(async (manager, events) => {
          await storeCallWithin(manager, this.context.instanceId, call, caller);
          events.push(callEvent(call, caller, who));
        }),
      );
    }
  }
}
