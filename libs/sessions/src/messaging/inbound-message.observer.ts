import type { Bus } from '@gw/bus';
import type { Lease, MessageRow, Database } from '@gw/persistence';
import { type Logger, metrics } from '@gw/platform';
import type { WASocket } from '../baileys';
import type { UnackedTarget } from '../outbound/unacked-sends';
import type { SocketContext, SocketObserver } from '../session/socket-observer';
import { GroupInfoCache } from './group-info-cache';
import { InboundBackpressure, type InboundBounds } from './inbound-backpressure';
import { GroupMetadataCache } from './group-metadata-cache';
import { messageKey, type InboundRepositories, type InboundServices } from './inbound/inbound-context';
import { messagesUpdateEvent, type InstanceIdentity } from './event-payloads';
import type { Party } from './identity-resolver';
import { InboundSocketHandler } from './inbound-socket-handler';
import { INBOUND_STORE_DEFAULTS, InboundStore } from './inbound-store';

export interface InboundMessageObserverOptions {
  dataSource: Database;
  bus: Bus;
  logger: Logger;
  repositories: InboundRepositories;
  /** When sockets stop being read for what they hold unstored (ADR 0013). */
  bounds?: InboundBounds;
  /** Whether the worker still holds this lease: writes wait out a database outage while it does (InboundStoreOptions.held). */
  held?: (lease: Lease) => boolean;
}

/**
 * Maps what every socket of every session receives to records and events: messages (received, and
 * sent from the phone or the API), edits, revokes, reactions, poll votes, receipts → status,
 * contacts, LID pairs, chat settings. One handler per socket; see InboundSocketHandler.
 */
export class InboundMessageObserver implements SocketObserver {
  private readonly services: InboundServices;
  /** What `/group/info` and `/group/list` answer without asking WhatsApp (see GroupMetadataCache). */
  readonly groupMetadata = new GroupMetadataCache();
  /** Handlers with work possibly queued, detached ones included until they drain. */
  private readonly busy = new Set<InboundSocketHandler>();
  /** The handler of each instance's last socket, until it is detached and has drained (the next socket's events wait for it). */
  private readonly latest = new Map<string, InboundSocketHandler>();
  /** The handler of each instance's current socket (commands such as a label refresh go to it). */
  private readonly current = new Map<string, { socket: unknown; handler: InboundSocketHandler }>();

  constructor(options: InboundMessageObserverOptions) {
    this.services = {
      ...options.repositories,
      store: new InboundStore(options.dataSource, options.bus, options.logger, {
        ...INBOUND_STORE_DEFAULTS,
        held: options.held,
        onGroup: (writes, seconds) => {
          metrics().inboundGroupWrites.observe(writes);
          metrics().inboundGroupDuration.observe(seconds);
        },
      }),
      groups: new GroupInfoCache(options.logger),
      groupMetadata: this.groupMetadata,
      backpressure: new InboundBackpressure(options.bounds, () => metrics().inboundPauses.inc()),
    };
  }

  /** What the worker's sockets hold received and not yet stored, the sockets paused for it, and the writes not yet committed (metrics). */
  backlog(): { depth: number; pausedSockets: number; pauses: number; writesPending: number; decryptsWaiting: number } {
    const { backpressure, store } = this.services;
    return {
      depth: backpressure.depth,
      pausedSockets: backpressure.pausedSockets,
      pauses: backpressure.pauses,
      writesPending: store.pending(),
      decryptsWaiting: backpressure.decryptsWaiting,
    };
  }

  attach(context: SocketContext): () => void {
    // A reconnect: the previous socket's handler may still be writing what it queued (Baileys acked
    // those stanzas); this socket's events go after them, as one instance's events in one order.
    const previous = this.latest.get(context.instanceId);
    const handler = new InboundSocketHandler(context, this.services, previous && this.busy.has(previous) ? previous.idle() : undefined);
    const detach = handler.attach();
    this.busy.add(handler);
    this.latest.set(context.instanceId, handler);
    this.current.set(context.instanceId, { socket: context.socket, handler });
    return () => {
      if (this.current.get(context.instanceId)?.handler === handler) this.current.delete(context.instanceId);
      detach();
      void handler.idle().then(() => {
        this.busy.delete(handler);
        if (this.latest.get(context.instanceId) === handler) this.latest.delete(context.instanceId);
      });
    };
  }

  /** The handler attached to this socket (undefined once it was replaced or closed). */
  handlerFor(instanceId: string, socket: unknown): InboundSocketHandler | undefined {
    const entry = this.current.get(instanceId);
    return entry && entry.socket === socket ? entry.handler : undefined;
  }

  /** The current socket's handler of each of these instances (UnackedSends' targets). */
  unackedTargets(instanceIds: Iterable<string>): Map<string, UnackedTarget> {
    const targets = new Map<string, UnackedTarget>();
    for (const instanceId of instanceIds) {
      const entry = this.current.get(instanceId);
      if (!entry) continue;
      const { handler } = entry;
      targets.set(instanceId, { socket: entry.socket as WASocket, fail: (chatJid, ids, reason) => handler.failUnacked(chatJid, ids, reason) });
    }
    return targets;
  }

  /**
   * A send of ours ended Failed (WhatsApp refused it, or it never went out): the status and its
   * `messages_update` in one fenced transaction, in the instance's order of writes about that message.
   * Only the write that moves it to Failed announces it — this one or an error ack's receipt (also a
   * write of this store, keyed by the message), so the event is written once. A message further along
   * already (delivered, or failed before) stays as it is. Returns the row as it is afterwards.
   */
  failSend(lease: Lease, failure: { messageId: string; chat: Party; error: string; who: InstanceIdentity }): Promise<MessageRow | null> {
    const { messageId, chat, error, who } = failure;
    return this.services.store.write(
      lease,
      async (tx, events) => {
        const messages = this.services.messages.within(tx);
        const [changed] = await messages.fail(lease.instanceId, [messageId], error);
        if (!changed) return messages.findByMessageId(lease.instanceId, messageId);
        events.push(messagesUpdateEvent({ rows: [changed], state: 'Failed', type: 'Failed', sender: chat, timestamp: Date.now() / 1000, error }, who));
        return changed;
      },
      [messageKey(messageId)],
    );
  }

  /**
   * Waits until every handler finished what it received (graceful shutdown: before the leases go,
   * or what Baileys already acknowledged to WhatsApp could no longer be written).
   */
  async drain(): Promise<void> {
    await Promise.all([...this.busy].map((handler) => handler.idle()));
  }

  /**
   * A drain past its budget (issue #39): this lease's sockets are no longer read and what they queued
   * unstored is dropped (InboundStore.drop); a transaction in flight ends as it ends. Only received
   * messages not receipted are among them (ADR 0035), and WhatsApp delivers those again to the heir.
   * Returns the writes dropped and the receipts held (messages decrypted, not stored, not receipted).
   */
  dropInstance(lease: Lease): { writes: number; unreceipted: number } {
    let unreceipted = 0;
    for (const handler of this.busy) if (handler.instanceId === lease.instanceId) unreceipted += handler.drop();
    return { writes: this.services.store.drop(lease), unreceipted };
  }

  /** A drain whose ops are done: the instance's sockets hand Baileys no more frames (stopReading). */
  stopReading(instanceId: string): void {
    for (const handler of this.busy) if (handler.instanceId === instanceId) handler.stopReading();
    this.latest.get(instanceId)?.stopReading();
  }

  /** Inbound tasks queued or running for the instance's latest socket (0 without one). */
  queuedFor(instanceId: string): number {
    return this.latest.get(instanceId)?.queuedTasks ?? 0;
  }

  /**
   * The same for one instance (a drain hands each instance over on its own): what its last socket's
   * handler queued so far is handled, after whatever earlier sockets of the instance queued.
   */
  async drainInstance(instanceId: string): Promise<void> {
    await this.latest.get(instanceId)?.idle();
  }
}
