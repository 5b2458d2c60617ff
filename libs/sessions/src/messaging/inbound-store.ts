import type { Bus } from '@gw/bus';
import { Subjects, type OutboxNotice } from '@gw/contracts';
import { LeaseRepository, OutboxRepository, type Lease, type NewOutboxEvent } from '@gw/persistence';
import type { Logger } from '@gw/platform';
import type { DataSource, EntityManager } from 'typeorm';

/**
 * Writes what a socket learned, record changes and their outbox events together, in one transaction
 * that first proves the lease is still ours (a fenced-out worker never writes); then wakes the relay
 * and SSE with a notice. The pattern of SessionStateWriter.
 */
export class InboundStore {
  constructor(
    readonly dataSource: DataSource,
    private readonly bus: Bus,
    private readonly logger: Logger,
  ) {}

  async write<T>(lease: Lease, work: (manager: EntityManager, events: NewOutboxEvent[]) => Promise<T>): Promise<T> {
    const { result, lastId } = await LeaseRepository.fencedTransaction(this.dataSource, lease, async (manager) => {
      const events: NewOutboxEvent[] = [];
      const value = await work(manager, events);
      return { result: value, lastId: await OutboxRepository.insertWithin(manager, lease.instanceId, events) };
    });
    if (lastId !== null) this.notify({ instanceId: lease.instanceId, lastId });
    return result;
  }

  private notify(notice: OutboxNotice): void {
    try {
      this.bus.publish(Subjects.outbox(notice.instanceId), notice);
    } catch (error) {
      // The events are in the outbox already; the relay's poll finds them without the notice.
      this.logger.warn({ err: error, instanceId: notice.instanceId }, 'outbox notice not published');
    }
  }
}
