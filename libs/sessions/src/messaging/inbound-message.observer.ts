import type { Bus } from '@gw/bus';
import { InstanceRepository, LidMappingRepository, MessageRepository } from '@gw/persistence';
import type { Logger } from '@gw/platform';
import type { DataSource } from 'typeorm';
import type { SocketContext, SocketObserver } from '../session/socket-observer';
import { GroupInfoCache } from './group-info-cache';
import { InboundSocketHandler, type InboundServices } from './inbound-socket-handler';
import { InboundStore } from './inbound-store';

export interface InboundMessageObserverOptions {
  dataSource: DataSource;
  bus: Bus;
  logger: Logger;
}

/**
 * Maps what every socket of every session receives to records and events: messages (received, and
 * sent from the phone or the API), edits, revokes, reactions, poll votes, receipts → status,
 * contacts, LID pairs, chat settings. One handler per socket; see InboundSocketHandler.
 */
export class InboundMessageObserver implements SocketObserver {
  private readonly services: InboundServices;
  /** Handlers with work possibly queued, detached ones included until they drain. */
  private readonly busy = new Set<InboundSocketHandler>();

  constructor(options: InboundMessageObserverOptions) {
    this.services = {
      store: new InboundStore(options.dataSource, options.bus, options.logger),
      instances: new InstanceRepository(options.dataSource),
      messages: new MessageRepository(options.dataSource),
      lidMappings: new LidMappingRepository(options.dataSource),
      groups: new GroupInfoCache(options.logger),
    };
  }

  attach(context: SocketContext): () => void {
    const handler = new InboundSocketHandler(context, this.services);
    const detach = handler.attach();
    this.busy.add(handler);
    return () => {
      detach();
      void handler.idle().then(() => this.busy.delete(handler));
    };
  }

  /**
   * Waits until every handler finished what it received (graceful shutdown: before the leases go,
   * or what Baileys already acknowledged to WhatsApp could no longer be written).
   */
  async drain(): Promise<void> {
    await Promise.all([...this.busy].map((handler) => handler.idle()));
  }
}
