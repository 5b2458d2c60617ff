import type { Bus } from '@gw/bus';
import { Subjects, type OutboxNotice } from '@gw/contracts';
import {
  databaseUnavailable,
  FencedOutError,
  InboundGroupRepository,
  LeaseRepository,
  OutboxRepository,
  type Lease,
  type NewOutboxEvent,
  type Database,
} from '@gw/persistence';
import { failSpan, type Logger, startSpan, traceparentOf } from '@gw/platform';
import { noticeOf, writeGroupWithin, type EventsNotice, type GroupOutcome } from './inbound-group-write';
import { InboundStalls } from './inbound-stalls';
import {
  ATTEMPTS,
  INBOUND_STORE_DEFAULTS,
  InboundWriteDroppedError,
  InboundWriteFailedError,
  MAX_ALONE_IN_FLIGHT,
  OUTAGE_RETRY_MAX_MS,
  OUTAGE_WAIT_DEFAULT_MS,
  sleep,
  type InboundStoreOptions,
  type StallListener,
  type Waiting,
  type Work,
  type WriteOptions,
} from './inbound-store-options';

// The store's options, limits and error live in inbound-store-options.ts; its importers keep importing them from here.
export {
  INBOUND_STORE_DEFAULTS,
  InboundWriteDroppedError,
  InboundWriteFailedError,
  type InboundStoreOptions,
  type StallListener,
  type WriteOptions,
} from './inbound-store-options';

/**
 * Writes what a socket learned, record changes and their outbox events together, in one transaction
 * that first proves the lease is still ours (a fenced-out worker never writes); then wakes the relay
 * and SSE with a notice. The pattern of SessionStateWriter.
 *
 * Group commit (ADR 0012, 0013): the writes of all sockets of this worker that arrive while
 * transactions are in flight share the next one: one begin with the proof of every lease in the
 * group, the writes' own statements (in waves, each instance's in its order: ADR 0021), one insert
 * for all their outbox events, one commit. An instance (one socket) never has two transactions in
 * flight: its writes that arrive while one is in flight wait, in order, and go together in its next
 * group (ADR 0013: a socket no longer waits for each write's commit before handing over the next one).
 * Each lease holds per instance: a write whose lease is gone fails with FencedOutError and runs
 * nothing, the others go on. Every caller's promise settles only after the commit of the transaction
 * holding its write. If a group fails (one write's error aborts the whole transaction), nothing of it
 * was written, and each write runs again alone in its own transaction, in order, so only a bad write
 * fails its caller; a write that fails alone is tried again (ATTEMPTS, backing off) before the next
 * writes of its instance, so retries keep the instance's order. Writes must therefore be safe to run
 * again.
 *
 * A long write (WriteOptions.alone: a history chunk) goes in no group: it runs alone, fenced, beside
 * the groups (MAX_ALONE_IN_FLIGHT at once), once its instance has nothing in flight, and its instance's
 * later writes wait for it as for a group; the other instances' groups go on meanwhile (issue #38).
 */
export class InboundStore {
  private waiting: Waiting[] = [];
  /** Per instance, its writes in `waiting` (all, and those that may go in a group): kept as they come and go, so no write scans the backlog. */
  private readonly waitingOf = new Map<string, { all: number; groupable: number }>();
  /** Writes of their own (WriteOptions.alone) in `waiting`. */
  private aloneWaiting = 0;
  private inFlight = 0;
  /** Writes of their own (WriteOptions.alone) in flight. */
  private aloneInFlight = 0;
  /** Instances with a transaction in flight (their next writes wait for its end). */
  private readonly busy = new Set<string>();
  /** Writes accepted and not settled yet, per instance (waiting or in flight). */
  private readonly pendingByInstance = new Map<string, number>();
  private pendingTotal = 0;
  /** Instances whose last write met no database (their sockets are not read meanwhile). */
  private readonly stalls: InboundStalls;
  /** Transactions written, writes they carried, and groups that fell back to one transaction per write. */
  readonly stats = { transactions: 0, writes: 0, fallbacks: 0 };
  /** Received messages written without the fence after it refused them (ADR 0034). */
  unfencedWrites = 0;
  /** Leases whose writes were dropped (drop()): their later writes are refused at once. */
  private readonly dropped = new Set<string>();
  /** The round statement of a group's parked writes (InboundBatch), bound within each group's transaction. */
  private readonly groups: InboundGroupRepository;

  constructor(
    private readonly dataSource: Database,
    private readonly bus: Bus,
    private readonly logger: Logger,
    private readonly options: InboundStoreOptions = INBOUND_STORE_DEFAULTS,
  ) {
    this.stalls = new InboundStalls(logger);
    this.groups = new InboundGroupRepository(dataSource);
  }

  /**
   * Tells `listener` when this instance's writes stop reaching the database and when they reach it
   * again (at once if they are stopped now); returns the function that stops telling it.
   */
  watch(instanceId: string, listener: StallListener): () => void {
    return this.stalls.watch(instanceId, listener);
  }

  /** Whether this instance's last write met no database and has not got through since. */
  isStalled(instanceId: string): boolean {
    return this.stalls.has(instanceId);
  }

  /** Whether the worker still holds this lease (always yes without a keeper to ask). */
  holds(lease: Lease): boolean {
    return this.options.held?.(lease) ?? true;
  }

  private setStalled(instanceId: string, stalled: boolean): void {
    this.stalls.set(instanceId, stalled);
  }

  /** Writes accepted and not yet committed (or failed): of one instance, or of the whole worker. */
  pending(instanceId?: string): number {
    return instanceId === undefined ? this.pendingTotal : (this.pendingByInstance.get(instanceId) ?? 0);
  }

  /**
   * Writes `work` in the instance's order. `keys`: what it touches (its messages, the chat whose row it
   * updates), when that is all besides its senders' contacts (a receipt, a message or its copy); writes
   * of one instance sharing no key may go in one wave of a group (waves()). Without keys a write waits
   * for every earlier write of its instance in its group.
   */
  write<T>(lease: Lease, work: Work<T>, keys?: readonly string[], options: WriteOptions = {}): Promise<T> {
    const instanceId = lease.instanceId;
    if (this.dropped.has(leaseKey(lease))) return Promise.reject(new InboundWriteDroppedError(instanceId));
    // Tracing on: what a socket learned starts a trace of its own (`inbound store`, ended at its commit);
    // its events carry the span's traceparent into the outbox, where the relay's delivery span continues it.
    const span = startSpan('session-worker', 'inbound store', { newTrace: true, attributes: { 'wa.instance.id': instanceId } });
    if (span) {
      const traceparent = traceparentOf(span);
      const untraced = work;
      work = async (tx, events) => {
        const from = events.length;
        const result = await untraced(tx, events);
        for (let index = from; index < events.length; index++) events[index].traceparent ??= traceparent;
        return result;
      };
    }
    this.pendingByInstance.set(instanceId, (this.pendingByInstance.get(instanceId) ?? 0) + 1);
    this.pendingTotal++;
    const settled = () => {
      this.pendingTotal--;
      const left = (this.pendingByInstance.get(instanceId) ?? 1) - 1;
      if (left > 0) this.pendingByInstance.set(instanceId, left);
      else this.pendingByInstance.delete(instanceId);
    };
    return new Promise<T>((resolve, reject) => {
      // Only a write of an instance with nothing in flight and nothing waiting can start now: after the
      // last pump nothing else could, and this write changes no one else's turn (a write behind its
      // instance's waits with it). The others skip the pump, which reads the whole backlog (ADR 0049).
      const mayStart = !this.busy.has(instanceId) && !this.waitingOf.has(instanceId);
      this.enqueue({
        lease,
        work,
        keys,
        idempotent: options.idempotent === true,
        alone: options.alone === true,
        resolve: (value) => {
          settled();
          span?.end();
          resolve(value as T);
        },
        reject: (error) => {
          settled();
          failSpan(span, error);
          span?.end();
          reject(error);
        },
      });
      if (mayStart) this.pump();
    });
  }

  private enqueue(entry: Waiting): void {
    this.waiting.push(entry);
    if (entry.alone) this.aloneWaiting++;
    const id = entry.lease.instanceId;
    const counts = this.waitingOf.get(id);
    if (counts) {
      counts.all++;
      if (!entry.alone) counts.groupable++;
    } else this.waitingOf.set(id, { all: 1, groupable: entry.alone ? 0 : 1 });
  }

  /** `entry` left `waiting` (taken into a transaction, or dropped). */
  private unwait(entry: Waiting): void {
    if (entry.alone) this.aloneWaiting--;
    const id = entry.lease.instanceId;
    const counts = this.waitingOf.get(id);
    if (!counts) return;
    counts.all--;
    if (!entry.alone) counts.groupable--;
    if (counts.all <= 0) this.waitingOf.delete(id);
  }

  /**
   * A drain past its budget (issue #39): the writes of this lease that wait are rejected unwritten
   * (InboundWriteDroppedError), and so is every later one; a transaction already in flight ends as it
   * ends. Returns how many were dropped. Safe only because a received message is receipted once stored
   * (ADR 0035): one dropped here was never receipted, and WhatsApp delivers it again to the heir.
   */
  drop(lease: Lease): number {
    const key = leaseKey(lease);
    this.dropped.add(key);
    const kept: Waiting[] = [];
    const dropped: Waiting[] = [];
    for (const entry of this.waiting) (leaseKey(entry.lease) === key ? dropped : kept).push(entry);
    this.waiting = kept;
    for (const entry of dropped) this.unwait(entry);
    for (const entry of dropped) entry.reject(new InboundWriteDroppedError(lease.instanceId));
    return dropped.length;
  }

  private pump(): void {
    const maxAlone = this.options.maxAloneInFlight ?? MAX_ALONE_IN_FLIGHT;
    for (;;) {
      const groupOpen = this.inFlight < this.options.maxInFlight;
      // Nothing can start: answered without reading the backlog (ADR 0049).
      if (this.waiting.length === 0 || (!groupOpen && (this.aloneInFlight >= maxAlone || this.aloneWaiting === 0))) return;
      // In arrival order, the writes of instances with nothing in flight (each one's share of the group, in
      // order); a write of its own goes alone when it is the first of its instance that waits, outside the group.
      const group: Waiting[] = [];
      const alone: Waiting[] = [];
      const rest: Waiting[] = [];
      const full = new Set<string>();
      const grouped = new Map<string, number>();
      const share = this.groupShare();
      const waiting = this.waiting;
      let index = 0;
      let aloneSeen = 0;
      for (; index < waiting.length; index++) {
        // The group is full and no write may go alone (no room, or none left to read): the rest of the
        // backlog stays as it is, unread.
        const groupDone = !groupOpen || group.length >= this.options.maxBatch;
        if (groupDone && (this.aloneInFlight + alone.length >= maxAlone || aloneSeen === this.aloneWaiting)) break;
        const entry = waiting[index];
        if (entry.alone) aloneSeen++;
        const id = entry.lease.instanceId;
        const free = !this.busy.has(id) && !full.has(id);
        const inGroup = grouped.get(id) ?? 0;
        if (free && entry.alone && inGroup === 0 && this.aloneInFlight + alone.length < maxAlone) {
          alone.push(entry);
          // Its instance's later writes wait for its commit.
          full.add(id);
        } else if (free && !entry.alone && groupOpen && group.length < this.options.maxBatch && inGroup < share) {
          group.push(entry);
          grouped.set(id, inGroup + 1);
        } else {
          // Once one write of an instance stays behind, its later ones do too.
          full.add(id);
          rest.push(entry);
        }
      }
      if (group.length === 0 && alone.length === 0) return;
      this.waiting = index < waiting.length ? rest.concat(waiting.slice(index)) : rest;
      for (const entry of alone) this.unwait(entry);
      for (const entry of group) this.unwait(entry);
      for (const entry of alone) {
        const id = entry.lease.instanceId;
        this.busy.add(id);
        this.aloneInFlight++;
        this.stats.transactions++;
        this.stats.writes++;
        void this.writeAlone(entry).finally(() => {
          this.busy.delete(id);
          this.aloneInFlight--;
          this.pump();
        });
      }
      if (group.length === 0) continue;
      for (const id of grouped.keys()) this.busy.add(id);
      this.inFlight++;
      void this.flush(group).finally(() => {
        for (const id of grouped.keys()) this.busy.delete(id);
        this.inFlight--;
        this.pump();
      });
    }
  }

  /**
   * How many writes of one instance the next group takes at most: its room shared among the instances
   * whose writes wait for it (issue #39). A group runs in waves, one round trip each, and an instance's
   * writes about one chat (a received message, the copies and receipts of the sends to it) take one
   * wave each: a group filled with one busy instance's backlog took a round trip per write while the
   * other instances' writes waited for the next one, and under bench/cluster's traffic a worker's
   * backlog grew to 1,000–2,500 writes (5–10 s), which a drain stores before it hands an instance over.
   * Shared, a group's waves carry one write of every instance each. Alone, an instance has the whole group.
   */
  private groupShare(): number {
    let instances = 0;
    for (const [id, counts] of this.waitingOf) if (counts.groupable > 0 && !this.busy.has(id)) instances++;
    return Math.max(1, Math.ceil(this.options.maxBatch / Math.max(1, instances)));
  }

  private async flush(group: Waiting[]): Promise<void> {
    this.stats.transactions++;
    this.stats.writes += group.length;
    if (group.length === 1) return this.writeAlone(group[0]);
    const started = performance.now();
    let outcomes: GroupOutcome[];
    let lastIds = new Map<string, string>();
    let notices: Map<string, EventsNotice>;
    try {
      ({ outcomes, notices } = await LeaseRepository.fencedGroupTransaction(
        this.dataSource,
        group.map((entry) => entry.lease),
        (tx, held) => writeGroupWithin(tx, group, held, this.groups),
        // The events of the whole group in one insert, written with the COMMIT.
        ({ batches }) => {
          const insert = OutboxRepository.insertManyStatement(batches);
          return insert && { ...insert, rows: (rows) => (lastIds = insert.lastIds(rows)) };
        },
      ));
    } catch (error) {
      this.stats.fallbacks++;
      // No database: none of these instances' writes gets through until it is back; their sockets wait.
      if (databaseUnavailable(error)) for (const entry of group) this.setStalled(entry.lease.instanceId, true);
      for (const entry of group) await this.writeAlone(entry);
      return;
    }
    this.options.onGroup?.(group.length, (performance.now() - started) / 1000);
    for (const entry of group) this.setStalled(entry.lease.instanceId, false);
    for (const [instanceId, lastId] of lastIds) this.notify({ instanceId, lastId, ...notices.get(instanceId) });
    for (const [index, entry] of group.entries()) {
      const outcome = outcomes[index];
      if (!('fenced' in outcome)) entry.resolve(outcome.value);
      else if (entry.idempotent) await this.writeUnfenced(entry, new FencedOutError(entry.lease.instanceId));
      else entry.reject(new FencedOutError(entry.lease.instanceId));
    }
  }

  private async writeAlone(entry: Waiting): Promise<void> {
    const instanceId = entry.lease.instanceId;
    let outageSince = 0;
    for (let attempt = 1; ; attempt++) {
      const started = performance.now();
      try {
        const events: NewOutboxEvent[] = [];
        let lastId: string | null = null;
        const result = await LeaseRepository.fencedTransaction(
          this.dataSource,
          entry.lease,
          (tx) => entry.work(tx, events),
          // The events in one insert, written with the COMMIT.
          () => {
            const insert = OutboxRepository.insertStatement(entry.lease.instanceId, events);
            return insert && { ...insert, rows: (rows) => (lastId = insert.lastId(rows)) };
          },
        );
        this.options.onGroup?.(1, (performance.now() - started) / 1000);
        this.setStalled(instanceId, false);
        entry.resolve(result);
        if (lastId !== null) this.notify({ instanceId, lastId, ...noticeOf(events) });
        return;
      } catch (error) {
        if (error instanceof FencedOutError) return entry.idempotent ? this.writeUnfenced(entry, error) : entry.reject(error);
        if (databaseUnavailable(error)) {
          // Issue #39: the database is gone (a failover). The write is kept and tried again, its
          // instance's later writes behind it and its socket not read, for as long as the lease is ours.
          outageSince ||= Date.now();
          this.setStalled(instanceId, true);
          if (!this.outageMayLast(entry.lease, outageSince)) return entry.reject(new InboundWriteFailedError(error));
          await sleep(Math.min(OUTAGE_RETRY_MAX_MS, 200 * attempt));
          continue;
        }
        if (attempt >= ATTEMPTS) return entry.reject(new InboundWriteFailedError(error));
        await sleep(200 * attempt);
      }
    }
  }

  /** Whether a write that has met no database since `since` may still wait for it. */
  private outageMayLast(lease: Lease, since: number): boolean {
    if (this.options.held) return this.options.held(lease);
    return Date.now() - since < OUTAGE_WAIT_DEFAULT_MS;
  }

  /**
   * An idempotent write the fence refused (the lease moved while it was on its way): written without
   * the fence (ADR 0034). Its work stores nothing a second time and events only what it inserted, so
   * the new holder (which may store the same message) and this write together store and announce it
   * once. A database out of reach is waited for a while (the new holder cannot get the message from
   * WhatsApp either); `fenced` is what the caller learns when it still fails.
   */
  private async writeUnfenced(entry: Waiting, fenced: FencedOutError): Promise<void> {
    const instanceId = entry.lease.instanceId;
    const since = Date.now();
    for (let attempt = 1; ; attempt++) {
      try {
        const events: NewOutboxEvent[] = [];
        let lastId: string | null = null;
        const result = await LeaseRepository.unfencedTransaction(
          this.dataSource,
          (tx) => entry.work(tx, events),
          () => {
            const insert = OutboxRepository.insertStatement(instanceId, events);
            return insert && { ...insert, rows: (rows) => (lastId = insert.lastId(rows)) };
          },
        );
        this.unfencedWrites++;
        this.logger.warn({ instanceId, events: events.length }, 'lease moved while a received message was being stored: stored without the fence');
        entry.resolve(result);
        if (lastId !== null) this.notify({ instanceId, lastId, ...noticeOf(events) });
        return;
      } catch (error) {
        const waiting = databaseUnavailable(error) && Date.now() - since < OUTAGE_WAIT_DEFAULT_MS;
        if (!waiting && attempt >= ATTEMPTS) {
          this.logger.error({ err: error, instanceId }, 'a received message refused by the fence could not be stored without it');
          return entry.reject(fenced);
        }
        await sleep(Math.min(OUTAGE_RETRY_MAX_MS, 200 * attempt));
      }
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

/** A lease as one string: its instance and fencing token. */
function leaseKey(lease: Lease): string {
  return `${lease.instanceId}\u0000${lease.fencingToken}`;
}
