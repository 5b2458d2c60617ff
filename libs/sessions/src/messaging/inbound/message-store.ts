import { describeContent, type DescribedContent, type ProtoMessage } from '@gw/domain';
import { holdsGroupFlags, type MessageRow, type NewOutboxEvent, type Tx } from '@gw/persistence';
import { proto, type WAMessage } from '../../baileys';
import { InboundBatch } from '../inbound-batch';
import { chatKey, contactsEvent, messagesEvent, messagesUpdateEvent, type InstanceIdentity } from '../event-payloads';
import type { GroupInfo } from '../group-info-cache';
import type { Party } from '../identity-resolver';
import { statusName, timestampMs, toNewMessage, type MessagePlace } from '../message-mapper';
import { decryptVote, pollCreationOf } from '../poll-votes';
import { chatObservationKeys, messageKey, senderObservationKeys, type InboundContext } from './inbound-context';
import { chatParty, observeChatAndSender, observeSender, placeOf } from './message-places';
import type { ReceiptEvents, EarlyReceipt } from './receipts';
import { ANNOUNCED, errorText, rank } from './receipts';
import type { Written } from './sender-names';

/** What a message is to the store (MessageStore.classify). */
export type MessageKind =
  | { kind: 'skip' }
  | { kind: 'undecryptable' }
  | { kind: 'newsletter' }
  | { kind: 'revoke'; described: DescribedContent }
  | { kind: 'message'; described: DescribedContent };

/** A message to store, with what was read for it before its write (MessageStore.prepare). */
export interface PreparedMessage {
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

/** What a message's write leaves to do after its commit (MessageStore.afterStore). */
export interface StoreOutcome {
  early?: EarlyReceipt;
  written?: Written;
}

/**
 * One message's write: what it is to the store, what is read for it before the write, the write itself
 * (a message, an edit, a poll vote, our own message moving the row its send reserved forward), a revoke.
 */
export class MessageStore {
  /** The identity (pn|lid) of ours last stored as a contact by this socket. */
  private selfObserved = '';

  constructor(
    private readonly context: InboundContext,
    private readonly receipts: ReceiptEvents,
  ) {}

  /** Whether `identity` (pn|lid) is ours as last stored as a contact by this socket (afterStore notes it). */
  isObservedSelf(identity: string): boolean {
    return this.selfObserved === identity;
  }

  /** What a message is to the store: skipped, a placeholder, a channel post, a revoke, or a message to store (onMessage). */
  classify(message: WAMessage): MessageKind {
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
  async prepare(message: WAMessage, described: DescribedContent): Promise<PreparedMessage> {
    const key = message.key;
    const remote = key.remoteJid as string;
    const place = await placeOf(this.context, message);
    const group = place.isGroup ? await this.context.groupInfo(remote) : null;
    const vote = described.field === 'pollUpdateMessage' ? await this.pollVote(message, place.sender, described.quoted) : undefined;
    const fromMe = Boolean(key.fromMe);
    let upsertStatus = fromMe ? statusName(message.status) : '';
    // An error ack a send took as its outcome, merged into the upsert by Baileys' event buffer: the send
    // records it (or has resent the message), so the copy knows no status of its own.
    if (upsertStatus === 'Failed' && this.receipts.upsertRefusalTaken(message)) upsertStatus = 'Pending';
    const upsertError = upsertStatus === 'Failed' ? errorText(message.messageStubParameters) : '';
    if (fromMe) upsertStatus = this.advancedByReceipts(message, upsertStatus);
    const senderName = message.pushName || (fromMe ? (this.context.socket.user?.name ?? '') : '') || '';
    const who = await this.context.who();
    const messageId = key.id as string;
    // What it touches: this message (and the one it edits), its chat and its sender's contact. Writes about
    // other messages and chats (receipts, which name only their messages) may share a wave of the group with
    // it (InboundStore).
    const keys = [
      messageKey(messageId),
      ...(described.edited ? [messageKey(described.edited)] : []),
      ...chatObservationKeys([place.chatId, place.chatLid]),
      ...senderObservationKeys([place.sender.pn, place.sender.lid], fromMe ? '' : message.pushName || ''),
    ];
    return { message, described, place, group, vote, fromMe, upsertStatus, upsertError, senderName, who, messageId, keys };
  }

  /** The status and error a message is stored with: its own, or an earlier receipt's (read in the write, in order: ADR 0013). */
  statusAt(prepared: PreparedMessage, outcome: StoreOutcome): { status: string; error: string } {
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
  afterStore(prepared: PreparedMessage, outcome: StoreOutcome): void {
    if (outcome.early) this.receipts.forgetEarly(prepared.messageId);
    if (outcome.written) this.context.senders.committed(outcome.written);
    if (prepared.fromMe) this.selfObserved = `${prepared.place.sender.pn}|${prepared.place.sender.lid}`;
  }

  /** One message's write (onMessage; a history chunk's messages it cannot store set-oriented). */
  async storeMessage(tx: Tx, events: NewOutboxEvent[], prepared: PreparedMessage, history: MessageRow[] | undefined, outcome: StoreOutcome): Promise<void> {
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
    // A received message's copy goes in the round's statement too (a wave's copies in one insert, ADR 0048):
    // its status is none, which moves nothing, so the round's copy is storeCopy's.
    // Baileys announces a live message's push name again (contacts.update); not a history sync's. Told
    // before this write parks in its first round: the update, most often in the same wave, then finds it
    // covered by this transaction, which writes it in a later round (ADR 0055).
    const pushName = fromMe ? '' : message.pushName || '';
    if (pushName && !history) outcome.written = this.context.senders.wrote(tx, [place.sender.pn, place.sender.lid], pushName);
    const copy =
      merged || !fromMe
        ? await InboundBatch.storeOwnCopy(this.context.services.messages, tx, row)
        : await this.context.services.messages.within(tx).storeCopy(row);
    if (!copy) {
      // Seen before: only a status this copy knows better can change. Its push name, told as written
      // above (a contacts.update of this wave may have left it to this write), is observed all the same.
      if (outcome.written) {
        const contact = await observeSender(this.context, tx, place.sender, pushName);
        if (contact) events.push(contactsEvent([contact], who));
      }
      const prior = await this.context.services.messages.within(tx).findByMessageId(this.context.instanceId, row.messageId);
      if (fromMe && prior) await this.advanceFromUpsert(tx, events, prior, status, error, place);
      // A history batch (or an exact reload) names what it brought, stored before or not.
      if (history && prior) history.push(prior);
      return;
    }
    const { row: stored, created } = copy;

    // Our own identity is observed once per socket (and again if it changes), not on every send.
    const self = fromMe ? `${place.sender.pn}|${place.sender.lid}` : '';
    const incoming = !fromMe && described.type !== 'reaction' && !described.edited && described.field !== 'pollUpdateMessage';
    // The chat and the author's contact in one round of the group (ADR 0055).
    const observed = await observeChatAndSender(
      this.context,
      tx,
      place,
      group,
      {
        waName: place.isGroup ? group?.subject : fromMe ? undefined : message.pushName || undefined,
        lastMessage: { timestamp: row.messageTimestamp, type: row.messageType, textVote: row.text || row.vote, sender: row.sender, incoming },
      },
      fromMe && this.selfObserved === self ? null : pushName,
    );
    if (observed.contact) events.push(contactsEvent([observed.contact], who));
    let chat = observed.chat;
    // The group's flags as the chat holds them already (as most messages find them) are not written again:
    // applyState would change nothing (its `group_flags @>` test), and a busy group paid a statement per message.
    if (group && !holdsGroupFlags(chat, group.flags))
      chat = (await this.context.services.chats.within(tx).applyState(this.context.instanceId, chatKey(chat), { groupFlags: group.flags })) ?? chat;

    // An edit (from the phone, another device, or our own /message/edit coming back): the edit is a
    // message of its own whose `edited` names the original (as the captures show); the original takes
    // the new text, `edited` = the edit's id, and is announced as a messages_update `Edited`.
    const original = described.edited
      ? await this.context.services.messages.within(tx).applyEdit(this.context.instanceId, described.edited, {
          text: described.text,
          content: described.content,
          editId: row.messageId,
        })
      : null;
    // A row the send path stored first keeps its status unless this copy knows a later one.
    const advanced =
      !fromMe || created ? null : merged ? ('advanced' in copy && copy.advanced ? stored : null) : await this.advanceTo(tx, stored, status, error);
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
      const by = early?.state === current.status ? early : { sender: await chatParty(place), timestamp: Date.now() / 1000 };
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

  async onRevoke(message: WAMessage, described: DescribedContent): Promise<void> {
    const place = await placeOf(this.context, message);
    const who = await this.context.who();
    await this.context.write(async (tx, events) => {
      const row = await this.context.services.messages.within(tx).markDeleted(this.context.instanceId, described.revokes);
      if (!row) return;
      events.push(
        messagesUpdateEvent(
          { rows: [row], state: 'Deleted', type: 'Deleted', sender: place.sender, timestamp: timestampMs(message.messageTimestamp) / 1000 },
          who,
        ),
      );
    });
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

  private async advanceTo(tx: Tx, row: MessageRow, status: string, error: string): Promise<MessageRow | null> {
    if (status === 'Failed')
      return (await this.context.services.messages.within(tx).fail(this.context.instanceId, [row.messageId], error || 'failed'))[0] ?? null;
    if (rank(status) <= rank(row.status)) return null;
    return (await this.context.services.messages.within(tx).advanceStatus(this.context.instanceId, [row.messageId], status))[0] ?? null;
  }

  private async advanceFromUpsert(tx: Tx, events: NewOutboxEvent[], prior: MessageRow, status: string, error: string, place: MessagePlace): Promise<void> {
    const changed = await this.advanceTo(tx, prior, status, error);
    if (changed && (ANNOUNCED.has(status) || status === 'Failed')) {
      const failed = status === 'Failed';
      events.push(
        messagesUpdateEvent(
          {
            rows: [changed],
            state: status as 'Read',
            type: failed ? 'Failed' : 'ReadReceipt',
            sender: await chatParty(place),
            timestamp: Date.now() / 1000,
            error: failed ? changed.error : undefined,
          },
          await this.context.who(),
        ),
      );
    }
  }
}
