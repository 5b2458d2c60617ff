import { FencedOutError, STATUS_RANK, type StatusChange, type Tx } from '@gw/persistence';
import { isJidGroup, type MessageUserReceiptUpdate, type WAMessage, type WAMessageUpdate } from '../../baileys';
import { AwaitedAcks } from '../../outbound/awaited-acks';
import { refusalText } from '../../outbound/refusal';
import { messagesUpdateEvent } from '../event-payloads';
import { InboundBatch } from '../inbound-batch';
import { userJid, type Party } from '../identity-resolver';
import { statusName, timestampMs } from '../message-mapper';
import { messageKey, type InboundContext } from './inbound-context';

const ACKED_LIMIT = 256;
const EARLY_TTL_MS = 120_000;
/** Receipt states that are announced (`Sent` is the server ack: stored, not announced). */
export const ANNOUNCED = new Set(['Delivered', 'Read', 'Played']);

/** A receipt (or error ack) for a message not stored yet. */
export interface EarlyReceipt {
  state: string;
  sender: Party;
  timestamp: number;
  error: string;
  at: number;
}

export function rank(status: string): number {
  return STATUS_RANK[status] ?? -1;
}

/**
 * Receipts of one socket: server acks (Sent), 1:1 and group receipts, played receipts, error acks.
 * A receipt that comes before its message is kept until the message is stored.
 */
export class ReceiptEvents {
  private readonly acked = new Set<string>();
  /** Receipts that arrived before their message was stored (Baileys may emit them first). */
  private readonly early = new Map<string, EarlyReceipt>();
  private readonly refusalsTakenInUpsert = new WeakSet<WAMessage>();

  constructor(private readonly context: InboundContext) {}

  /** Ids a receipt named that are not stored yet: their status is applied when they are. */
  private async rememberEarly(tx: Tx, ids: string[], changed: StatusChange[], receipt: Omit<EarlyReceipt, 'at'>): Promise<void> {
    const done = new Set(changed.map((row) => row.messageId));
    const rest = ids.filter((id) => !done.has(id));
    const known = new Set(await this.context.services.messages.within(tx).storedIds(this.context.instanceId, rest));
    const now = Date.now();
    for (const [id, entry] of this.early) if (now - entry.at > EARLY_TTL_MS) this.early.delete(id);
    for (const id of rest) {
      if (known.has(id) || this.early.size >= ACKED_LIMIT) continue;
      const previous = this.early.get(id);
      // Forward only; an error ack counts only while nothing was delivered.
      if (previous && (receipt.state === 'Failed' || rank(receipt.state) <= rank(previous.state))) continue;
      this.early.set(id, { ...receipt, at: now });
      this.context.logger.debug({ messageId: id, state: receipt.state }, 'receipt before its message: kept until the message is stored');
    }
  }

  earlyReceipt(id: string): EarlyReceipt | undefined {
    const entry = this.early.get(id);
    return entry && Date.now() - entry.at <= EARLY_TTL_MS ? entry : undefined;
  }

  /** Whether the server acked this id on this socket (recently). */
  wasAcked(id: string): boolean {
    return this.acked.has(id);
  }

  /**
   * Whether the Failed status Baileys announced for this message (alone, or merged into its buffered
   * upsert) is an error ack a send took as its outcome (one claim taken): then it is the send's to record.
   */
  tookRefusal(id: string): boolean {
    return AwaitedAcks.takeRefusal(this.context.socket, id);
  }

  /**
   * On an upsert's arrival (before anything awaits): its messages of ours whose Failed status is an error
   * ack a send took, which Baileys' event buffer merged into the upsert. They are stored without it.
   */
  noteUpsert(messages: readonly WAMessage[]): void {
    for (const message of messages) {
      if (!message.key?.fromMe || !message.key.id) continue;
      const status = statusName(message.status);
      if (status === 'Failed' && this.tookRefusal(message.key.id)) this.refusalsTakenInUpsert.add(message);
      else if (rank(status) > rank('Sent')) AwaitedAcks.dropRefusals(this.context.socket, message.key.id);
    }
  }

  /** See noteUpsert. */
  upsertRefusalTaken(message: WAMessage): boolean {
    return this.refusalsTakenInUpsert.has(message);
  }

  /** The message's early receipt was applied with it. */
  forgetEarly(id: string): void {
    this.early.delete(id);
  }

  rememberAck(id: string): void {
    if (this.acked.size >= ACKED_LIMIT) this.acked.delete(this.acked.values().next().value as string);
    this.acked.add(id);
  }

  /** Sent (stored, not announced): one fenced statement, as the send path's own result write. */
  async onServerAck(messageId: string): Promise<void> {
    if (!(await this.context.services.ledger.acked(this.context.lease, [messageId]))) throw new FencedOutError(this.context.instanceId);
  }

  /** 1:1 receipts (Baileys `messages.update` with a status) and error acks: one task per (chat, state), each writing once. */
  messageUpdateTasks(updates: WAMessageUpdate[]): Array<() => Promise<void>> {
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
      if (rank(state) > rank('Sent')) AwaitedAcks.dropRefusals(this.context.socket, key.id);
      // An error ack a send took, or of a message a send is waiting for: the send writes its outcome with
      // its event (it may also relay it again, e.g. after a 475 from a cap that is over, and this stale
      // refusal must not fail it, however late Baileys' event buffer hands it over).
      if (state === 'Failed' && (this.tookRefusal(key.id) || AwaitedAcks.has(this.context.socket, key.id))) continue;
      const error = state === 'Failed' ? errorText(update.messageStubParameters) : '';
      const batchKey = `${key.remoteJid}|${state}|${error}`;
      const batch: Batch = batches.get(batchKey) ?? { jid: key.remoteJid, state, ids: [], timestamp: timestampMs(update.messageTimestamp) / 1000, error };
      batch.ids.push(key.id);
      batches.set(batchKey, batch);
    }
    return [...batches.values()].map((batch) => async () => {
      await this.context.withRetry('messages.update', { ids: batch.ids }, async () => {
        if (batch.state === 'ReadSelf') return this.markChatRead(batch.jid);
        const reader = isJidGroup(batch.jid) ? { jid: batch.jid, pn: '', lid: '' } : await this.context.identities.party(batch.jid);
        await this.applyStatus(batch.ids, batch.state, reader, batch.timestamp, batch.error);
      });
    });
  }

  /** Group receipts: one per participant; the message shows the most advanced one (forward only). One task per (participant, state). */
  groupReceiptTasks(updates: MessageUserReceiptUpdate[]): Array<() => Promise<void>> {
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
    return [...batches.values()].map((batch) => async () => {
      await this.context.withRetry('message-receipt.update', { ids: batch.ids }, async () => {
        await this.applyStatus(batch.ids, batch.state, await this.context.identities.party(batch.participant), batch.timestamp, '');
      });
    });
  }

  async onGroupPlayed(groupJid: string, participant: string, ids: string[], timestamp: number): Promise<void> {
    await this.context.withRetry('receipt', { ids, groupJid }, async () => {
      await this.applyStatus(ids, 'Played', await this.context.identities.party(participant), timestamp, '');
    });
  }

  /** Messages of ours the server never acked, given up on (UnackedSends): Failed with the reason, and announced. */
  async failUnacked(chatJid: string, ids: string[], reason: string): Promise<void> {
    await this.context.withRetry('unacked', { ids }, async () => {
      const chat = isJidGroup(chatJid) ? { jid: chatJid, pn: '', lid: '' } : await this.context.identities.party(chatJid);
      await this.applyStatus(ids, 'Failed', chat, Math.floor(Date.now() / 1000), reason);
    });
  }

  /** Moves messages forward (or to Failed) and announces the ones that changed, per chat. */
  private async applyStatus(ids: string[], state: string, sender: Party, timestamp: number, error: string): Promise<void> {
    const who = await this.context.who();
    // Keyed by the messages it moves: receipts of other messages may share a wave of the group with it (InboundStore).
    await this.context.write(async (tx, events) => {
      const changed =
        state === 'Failed'
          ? await this.context.services.messages.within(tx).fail(this.context.instanceId, ids, error)
          : await InboundBatch.advanceStatus(this.context.services.messages, tx, this.context.instanceId, ids, state);
      if (changed.length < ids.length) await this.rememberEarly(tx, ids, changed, { state, sender, timestamp, error });
      if (!changed.length || state === 'Sent') return;
      const byChat = new Map<string, StatusChange[]>();
      for (const row of changed) byChat.set(row.chatId, [...(byChat.get(row.chatId) ?? []), row]);
      for (const rows of byChat.values()) {
        events.push(
          messagesUpdateEvent(
            { rows, state: state as 'Read', type: state === 'Failed' ? 'Failed' : 'ReadReceipt', sender, timestamp, error: error || undefined },
            who,
          ),
        );
      }
    }, ids.map(messageKey));
  }

  private async markChatRead(jid: string): Promise<void> {
    await this.context.write(async (tx) => {
      await this.context.services.chats.within(tx).applyState(this.context.instanceId, userJid(jid) || jid, { unreadCount: 0 });
    });
  }
}

/** `['463', 'Your account has been restricted']` → `463: Your account has been restricted`. */
export function errorText(parameters: unknown): string {
  const parts = (Array.isArray(parameters) ? parameters : []).filter((part): part is string => typeof part === 'string' && part !== '');
  // An error ack (Baileys puts its code first, then for 463 maybe its own text): worded as the send path words it.
  if (parts.length > 0 && /^\d{3}$/.test(parts[0])) return refusalText(parts[0]);
  return parts.join(': ') || 'failed';
}
