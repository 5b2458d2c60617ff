import type { MessageRow } from '@gw/persistence';
import type { BaileysEventMap, WAMessage } from '../../baileys';
import { proto } from '../../baileys';
import { storeCallWithin } from '../call-message';
import { callEvent } from '../event-payloads';
import { HistoryEvents } from './history';
import type { InboundContext } from './inbound-context';
import { MessageStore, type StoreOutcome } from './message-store';
import { applyNewsletterChange, storeNewsletterPost, type NewsletterChange } from './newsletters';
import type { PresenceEvents } from './presence';
import type { ReceiptEvents } from './receipts';
import { storeUndecryptable } from './undecryptable';

/** How long an exact reload asked through the API waits for the phone's answer to count as history. */
const RESEND_WINDOW_MS = 5 * 60_000;

/**
 * Messages of one socket: received and sent (from the phone or the API), history syncs and exact
 * reloads, edits, revokes, poll votes, channel posts and calls.
 */
export class MessageEvents {
  /** Message ids of exact reloads asked for through the API, and when (see expectResend). */
  private readonly requestedResends = new Map<string, { at: number; requestId: string }>();
  private readonly store: MessageStore;
  private readonly history: HistoryEvents;

  constructor(
    private readonly context: InboundContext,
    receipts: ReceiptEvents,
    private readonly presence: PresenceEvents,
  ) {
    this.store = new MessageStore(context, receipts);
    this.history = new HistoryEvents(context, this.store);
  }

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
      if (await this.context.withRetry('messages.upsert', { messageId: message.key?.id }, () => this.onMessage(message))) this.context.stored(message);
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
      if (await this.context.withRetry('messages.upsert', { messageId: message.key?.id }, () => this.onMessage(message))) this.context.stored(message);
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
      const stored = await this.context.withRetry('messages.reload', { requestId, messageIds: batch.map((message) => message.key.id) }, () =>
        this.onHistory(history, requestId),
      );
      if (stored) for (const message of batch) this.context.stored(message);
      for (const message of batch) this.requestedResends.delete(message.key.id as string);
    }
  }

  /**
   * Stores one message. `history` marks messages of a history sync: stored like any other, announced
   * together in one `history` event instead of one `messages` event each.
   */
  private async onMessage(message: WAMessage, history?: MessageRow[]): Promise<void> {
    const kind = this.store.classify(message);
    if (kind.kind === 'undecryptable') return storeUndecryptable(this.context, message, history);
    if (kind.kind === 'newsletter') return storeNewsletterPost(this.context, message);
    if (kind.kind === 'revoke') return this.store.onRevoke(message, kind.described);
    if (kind.kind !== 'message') return;
    const prepared = await this.store.prepare(message, kind.described);
    const outcome: StoreOutcome = {};
    await this.context.write((tx, events) => this.store.storeMessage(tx, events, prepared, history, outcome), prepared.keys);
    this.store.afterStore(prepared, outcome);
  }

  /** See HistoryEvents.onHistory. */
  onHistory(history: BaileysEventMap['messaging-history.set'], reloadRequestId?: string): Promise<void> {
    return this.history.onHistory(history, reloadRequestId);
  }

  /** See HistoryEvents.historyWritesOnce. */
  historyWritesOnce(history: BaileysEventMap['messaging-history.set']): boolean {
    return this.history.historyWritesOnce(history);
  }

  /**
   * An admin edited (`edit="3"`, the new content) or deleted (`edit="8"`) a channel post: the stored post follows
   * and a `newsletter_messages` event says so (`edit`: edited / deleted). Baileys reads such a stanza as the post
   * again, under the same id, so the socket handler hands the raw stanza here.
   */
  onNewsletterChange(change: NewsletterChange): Promise<void> {
    return applyNewsletterChange(this.context, change);
  }

  /** Call offers and their ends: a `call` event (the instance can reject through the API later) and the call's message (messageType `call`). */
  async onCalls(calls: BaileysEventMap['call']): Promise<void> {
    const who = await this.context.who();
    for (const call of calls) {
      const caller = await this.context.identities.party(call.from, call.callerPn);
      await this.context.withRetry('call', { callId: call.id }, () =>
        this.context.write(async (tx, events) => {
          await storeCallWithin(this.context.services, tx, this.context.instanceId, call, caller);
          events.push(callEvent(call, caller, who));
        }),
      );
    }
  }
}
