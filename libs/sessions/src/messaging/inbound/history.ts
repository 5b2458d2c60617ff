import { type ChatObservation, type MessageRow, type NewMessage, type NewOutboxEvent, type Tx } from '@gw/persistence';
import { recordId } from '@gw/platform';
import type { BaileysEventMap, WAMessage } from '../../baileys';
import { chatKey, contactsEvent, historyEvent, type InstanceIdentity } from '../event-payloads';
import type { GroupInfo } from '../group-info-cache';
import { isLid, type Party } from '../identity-resolver';
import { toNewMessage, type MessagePlace } from '../message-mapper';
import type { InboundContext } from './inbound-context';
import { observeSender } from './message-places';
import type { MessageKind, MessageStore, PreparedMessage, StoreOutcome } from './message-store';
import { storeNewsletterPost } from './newsletters';
import { storeUndecryptable } from './undecryptable';

/** History syncs (the initial history after a pairing, later syncs, exact reloads): one write per chunk. */
export class HistoryEvents {
  constructor(
    private readonly context: InboundContext,
    private readonly store: MessageStore,
  ) {}

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
      const kind = this.store.classify(message);
      if (kind.kind === 'undecryptable')
        await this.context.withRetry('messaging-history.set', { messageId: message.key?.id }, () => storeUndecryptable(this.context, message, collected));
      else if (kind.kind === 'message') prepared.push(await this.store.prepare(message, kind.described));
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
        async (tx, events) => {
          const written = await this.storeChunk(tx, events, prepared, who);
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
      if (outcomes[index]) this.store.afterStore(message, outcomes[index]);
    });
    for (const { message, kind } of after) {
      if (kind.kind === 'revoke')
        await this.context.withRetry('messaging-history.set', { messageId: message.key?.id }, () => this.store.onRevoke(message, kind.described));
      else await this.context.withRetry('messaging-history.set', { messageId: message.key?.id }, () => storeNewsletterPost(this.context, message));
    }
  }

  /** Whether onHistory writes this chunk in one write (no placeholder, revoke or channel post in it): it may then run pipelined. */
  historyWritesOnce(history: BaileysEventMap['messaging-history.set']): boolean {
    return (history.messages ?? []).every((message) => {
      const kind = this.store.classify(message).kind;
      return kind === 'message' || kind === 'skip';
    });
  }

  /**
   * A history chunk's messages, set-oriented: the new ones inserted together (MessageRepository.insertNewKeys),
   * their senders observed once each, their chats once each (the chunk's newest message, its incoming
   * ones counted: what one observation per message leaves); the others through storeMessage, in order.
   */
  private async storeChunk(
    tx: Tx,
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
      const { status, error } = this.store.statusAt(message, outcomes[index]);
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
    // By message id: a record id already taken in the instance was replaced by the insert. The insert
    // answers only what the table chose (record id, times); the rest of the row is the one sent.
    const inserted = new Map((await this.context.services.messages.within(tx).insertNewKeys(news)).map((stored) => [stored.messageId, stored]));
    const created: number[] = [];
    plain.forEach((index, position) => {
      const stored = inserted.get(news[position].messageId);
      // The first of a message id the chunk carries twice is the one inserted.
      if (stored) inserted.delete(news[position].messageId);
      if (stored) {
        rows[index] = storedRow(news[position], stored);
        created.push(index);
      }
    });

    // Senders: each once, with the last push name the chunk gave it.
    const senders = new Map<string, { sender: Party; pushName: string }>();
    for (const index of created) {
      const { place, fromMe, message } = prepared[index];
      const identity = `${place.sender.pn}|${place.sender.lid}`;
      // Our own identity is observed once per socket (afterStore notes it), not for each of our messages.
      if (fromMe && this.store.isObservedSelf(identity)) continue;
      const pushName = fromMe ? '' : message.pushName || '';
      const seen = senders.get(identity);
      senders.set(identity, { sender: place.sender, pushName: pushName || seen?.pushName || '' });
    }
    // The new ones in one statement (a fresh pairing's history: all of them), the others one by one.
    const observations = [...senders.values()].filter(({ sender }) => sender.pn || sender.lid);
    const createdContacts = await this.context.services.contacts.within(tx).createMissing(
      this.context.instanceId,
      observations.map(({ sender, pushName }) => ({ jid: sender.pn, lid: sender.lid, pushName })),
    );
    for (const contact of createdContacts) events.push(contactsEvent([contact], who));
    // Created with all the observation says: nothing left to observe (another observation of the same row still is).
    const createdKeys = new Set(createdContacts.map((contact) => `${contact.jid}|${contact.lid}|${contact.pushName}`));
    for (const { sender, pushName } of observations) {
      if (createdKeys.has(`${sender.pn || sender.lid}|${sender.lid}|${pushName}`)) continue;
      const contact = await observeSender(this.context, tx, sender, pushName);
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
    const storedChats = this.context.services.chats.within(tx);
    await storedChats.createMissing(
      this.context.instanceId,
      observed.map(({ observation }) => ({ pn: observation.waChatId ?? '', lid: observation.waChatLid ?? '', isGroup: observation.isGroup ?? false })),
      () => recordId(14),
    );
    const written = await this.context.services.inboundGroups.within(tx).write({
      chats: observed.map(({ observation }) => ({ instanceId: this.context.instanceId, observation, newId: () => recordId(14) })),
    });
    for (const [index, { group }] of observed.entries()) {
      if (group) await storedChats.applyState(this.context.instanceId, chatKey(written.chats[index]), { groupFlags: group.flags });
    }

    // Stored before, an edit, a poll vote: one by one, in order.
    const history: MessageRow[] = [];
    for (let index = 0; index < prepared.length; index++) {
      if (rows[index]) continue;
      const before = history.length;
      await this.store.storeMessage(tx, events, prepared[index], history, outcomes[index]);
      if (history.length > before) rows[index] = history[history.length - 1];
    }
    return { rows: rows.filter((stored): stored is MessageRow => stored !== undefined), outcomes };
  }
}

/** The row as stored: what was sent, with what the table chose (as toMessageRow reads a row back: no call peer or AI metadata is null). */
function storedRow(sent: NewMessage, chosen: { id: string; createdAt: Date; updatedAt: Date }): MessageRow {
  return {
    ...sent,
    id: chosen.id,
    callPeer: sent.callPeer ?? null,
    aiMetadata: sent.aiMetadata ?? null,
    createdAt: chosen.createdAt,
    updatedAt: chosen.updatedAt,
  };
}
