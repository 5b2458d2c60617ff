import type { Bus } from '@gw/bus';
import { Subjects, type OutboxNotice } from '@gw/contracts';
import { FencedOutError, LeaseRepository, OutboxRepository, type Lease, type NewOutboxEvent } from '@gw/persistence';
import type { Logger } from '@gw/platform';
import type { DataSource, EntityManager } from 'typeorm';

type Work<T> = (manager: EntityManager, events: NewOutboxEvent[]) => Promise<T>;

interface Waiting {
  lease: Lease;
  work: Work<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export interface InboundStoreOptions {
  /** Writes per group transaction at most. */
  maxBatch: number;
  /** Group transactions in flight at once. */
  maxInFlight: number;
}

/**
 * Four transactions in flight; the writes of every socket of the worker that arrive meanwhile go in the
 * next one. A group's writes run one after the other on its connection, so one in flight made the
 * inbound writes fall behind the sends under load (ADR 0012: bench/send, eventsDrainSeconds).
 */
export const INBOUND_STORE_DEFAULTS: InboundStoreOptions = { maxBatch: 32, maxInFlight: 4 };

/**
 * Writes what a socket learned, record changes and their outbox events together, in one transaction
 * that first proves the lease is still ours (a fenced-out worker never writes); then wakes the relay
 * and SSE with a notice. The pattern of SessionStateWriter.
 *
 * Group commit (ADR 0012): writes of all sockets of this worker that arrive while a transaction is in
 * flight share the next one: one begin with the proof of every lease in the group, each write's own
 * statements in arrival order, one insert for all their outbox events, one commit. Each lease holds
 * per instance: a write whose lease is gone fails with FencedOutError and runs nothing, the others
 * go on. Every caller's promise settles only after the commit of the transaction holding its write. If
 * a group fails (one write's error aborts the whole transaction), nothing of it was written, and each
 * write runs again alone in its own transaction, so only a bad write fails its caller. Writes must
 * therefore be safe to run again (they already are: callers retry them, see withRetry). A socket's
 * writes are serial (its event queue), so a group never holds two writes of one instance at once.
 */
export class InboundStore {
  private waiting: Waiting[] = [];
  private inFlight = 0;
  /** Transactions written, writes they carried, and groups that fell back to one transaction per write. */
  readonly stats = { transactions: 0, writes: 0, fallbacks: 0 };

  constructor(
    readonly dataSource: DataSource,
    private readonly bus: Bus,
    private readonly logger: Logger,
    private readonly options: InboundStoreOptions = INBOUND_STORE_DEFAULTS,
  ) {}

  write<T>(lease: Lease, work: Work<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ lease, work, resolve: resolve as (value: unknown) => void, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < this.options.maxInFlight && this.waiting.length > 0) {
      const group = this.waiting.splice(0, this.options.maxBatch);
      this.inFlight++;
      void this.flush(group).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  private async flush(group: Waiting[]): Promise<void> {
    this.stats.transactions++;
    this.stats.writes += group.length;
    if (group.length === 1) return this.writeAlone(group[0]);
    let outcomes: Array<{ value: unknown } | { fenced: true }>;
    let lastIds: Map<string, string>;
    try {
      ({ outcomes, lastIds } = await LeaseRepository.fencedGroupTransaction(
        this.dataSource,
        group.map((entry) => entry.lease),
        async (manager, held) => {
          const results: Array<{ value: unknown } | { fenced: true }> = [];
          const batches: Array<{ instanceId: string; events: NewOutboxEvent[] }> = [];
          for (const entry of group) {
            if (!held.has(entry.lease.instanceId)) {
              results.push({ fenced: true });
              continue;
            }
            const events: NewOutboxEvent[] = [];
            results.push({ value: await entry.work(manager, events) });
            batches.push({ instanceId: entry.lease.instanceId, events });
          }
          return { outcomes: results, lastIds: await OutboxRepository.insertManyWithin(manager, batches) };
        },
      ));
    } catch {
      this.stats.fallbacks++;
      for (const entry of group) await this.writeAlone(entry);
      return;
    }
    group.forEach((entry, index) => {
      const outcome = outcomes[index];
      if ('fenced' in outcome) entry.reject(new FencedOutError(entry.lease.instanceId));
      else entry.resolve(outcome.value);
    });
    for (const [instanceId, lastId] of lastIds) this.notify({ instanceId, lastId });
  }

  private async writeAlone(entry: Waiting): Promise<void> {
    try {
      const { result, lastId } = await LeaseRepository.fencedTransaction(this.dataSource, entry.lease, async (manager) => {
        const events: NewOutboxEvent[] = [];
        const value = await entry.work(manager, events);
        return { result: value, lastId: await OutboxRepository.insertWithin(manager, entry.lease.instanceId, events) };
      });
      entry.resolve(result);
      if (lastId !== null) this.notify({ instanceId: entry.lease.instanceId, lastId });
    } catch (error) {
      entry.reject(error);
    }
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
