import type { Bus } from '@gw/bus';
import { Subjects, type OutboxNotice } from '@gw/contracts';
import { databaseUnavailable, FencedOutError, LeaseRepository, OutboxRepository, type Lease, type NewOutboxEvent } from '@gw/persistence';
import { failSpan, type Logger, startSpan, traceparentOf } from '@gw/platform';
import type { DataSource, EntityManager } from 'typeorm';
import { InboundBatch } from './inbound-batch';

type Work<T> = (manager: EntityManager, events: NewOutboxEvent[]) => Promise<T>;

interface Waiting {
  lease: Lease;
  work: Work<unknown>;
  /** What the write touches (its messages, the chat whose row it updates), when it says: see waves(). */
  keys?: readonly string[];
  /** Stored even when the fence refuses it because the lease moved (see WriteOptions.idempotent). */
  idempotent: boolean;
  /** Written in a transaction of its own, outside the groups (see WriteOptions.alone). */
  alone: boolean;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export interface WriteOptions {
  /**
   * The write changes nothing when run a second time and writes its events only when it inserted what
   * they announce (a received message, keyed by instance and message id): when the fence refuses it
   * because the lease moved, it runs once more without the fence (ADR 0034), since WhatsApp was already
   * told we have it and will not give it to the new holder.
   */
  idempotent?: boolean;
  /**
   * The write is long (a history chunk: up to ~1,000 messages, 1–5 s of statements): it runs in a
   * transaction of its own, fenced by its lease, outside the group transactions, so the writes of the
   * worker's other instances (receipts, the copies of sent messages a send waits for) do not wait for
   * its commit (issue #38: in a group they did, their send p99 17–25 s). Its instance's order holds: it
   * starts after the instance's earlier writes committed, and the instance's later writes wait for it.
   */
  alone?: boolean;
}

/**
 * Times a write is tried when it fails alone for a reason of its own (not a lost lease, not a database
 * out of reach), 200 ms × attempt apart; its instance's later writes wait.
 */
const ATTEMPTS = 3;
/** A write that meets no database is tried again this often at most (backing off from 200 ms). */
const OUTAGE_RETRY_MAX_MS = 2_000;
/** Without a lease keeper to ask (`held`), a write waits out a database outage this long at most. */
const OUTAGE_WAIT_DEFAULT_MS = 10_000;

/** Writes of their own in flight at once by default: with two groups, four of the pool's connections (10 by default). */
const MAX_ALONE_IN_FLIGHT = 2;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * What InboundStore.write rejects with when a write failed ATTEMPTS times alone: the store already
 * retried it in its instance's order, so a caller must not write it again (it would land after the
 * writes queued behind it). `cause` is the last error.
 */
export class InboundWriteFailedError extends Error {
  constructor(override readonly cause: unknown) {
    super(`inbound write failed ${ATTEMPTS} times: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'InboundWriteFailedError';
  }
}

export interface InboundStoreOptions {
  /** Writes per group transaction at most. */
  maxBatch: number;
  /** Group transactions in flight at once. */
  maxInFlight: number;
  /**
   * Writes of their own (WriteOptions.alone) in flight at once, besides the groups (default
   * MAX_ALONE_IN_FLIGHT); one more waits, its instance's later writes behind it.
   */
  maxAloneInFlight?: number;
  /** Told of every group transaction that committed: its writes and how long it took (metrics). */
  onGroup?: (writes: number, seconds: number) => void;
  /**
   * Whether this lease is still the worker's (its keeper has not given it up): a write that meets no
   * database (issue #39) waits and tries again for as long as this says yes, then fails. Without it, a
   * write waits out an outage OUTAGE_WAIT_DEFAULT_MS at most.
   */
  held?: (lease: Lease) => boolean;
}

/** Told when an instance's writes stop reaching the database (`true`) and when one got through again (`false`). */
export type StallListener = (stalled: boolean) => void;

/**
 * Two transactions in flight, up to 64 writes each; the writes of every socket of the worker that
 * arrive meanwhile go in the next one. A group's writes run one after the other on its connection, so
 * one in flight made the inbound writes fall behind the sends under load (ADR 0012: bench/send,
 * eventsDrainSeconds 0.42–0.48 s here). Four of 32 (until ADR 0021) made groups small: once a group's
 * rounds went in waves, two of 64 (the same 128 writes in flight at most) took bench/send from
 * 1.55–1.71 to 1.20–1.28 statements per send and Postgres from 0.79–0.92 to 0.62–0.73 ms per send, the
 * events written 0.07–0.30 s after the last send (0.05–0.09 before).
 */
export const INBOUND_STORE_DEFAULTS: InboundStoreOptions = { maxBatch: 64, maxInFlight: 2 };

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
  private inFlight = 0;
  /** Writes of their own (WriteOptions.alone) in flight. */
  private aloneInFlight = 0;
  /** Instances with a transaction in flight (their next writes wait for its end). */
  private readonly busy = new Set<string>();
  /** Writes accepted and not settled yet, per instance (waiting or in flight). */
  private readonly pendingByInstance = new Map<string, number>();
  private pendingTotal = 0;
  /** Instances whose last write met no database (their sockets are not read meanwhile). */
  private readonly stalled = new Set<string>();
  private readonly stallListeners = new Map<string, Set<StallListener>>();
  /** Transactions written, writes they carried, and groups that fell back to one transaction per write. */
  readonly stats = { transactions: 0, writes: 0, fallbacks: 0 };
  /** Received messages written without the fence after it refused them (ADR 0034). */
  unfencedWrites = 0;

  constructor(
    readonly dataSource: DataSource,
    private readonly bus: Bus,
    private readonly logger: Logger,
    private readonly options: InboundStoreOptions = INBOUND_STORE_DEFAULTS,
  ) {}

  /**
   * Tells `listener` when this instance's writes stop reaching the database and when they reach it
   * again (at once if they are stopped now); returns the function that stops telling it.
   */
  watch(instanceId: string, listener: StallListener): () => void {
    let listeners = this.stallListeners.get(instanceId);
    if (!listeners) this.stallListeners.set(instanceId, (listeners = new Set()));
    listeners.add(listener);
    if (this.stalled.has(instanceId)) listener(true);
    return () => {
      listeners.delete(listener);
      if (listeners.size === 0 && this.stallListeners.get(instanceId) === listeners) this.stallListeners.delete(instanceId);
    };
  }

  /** Whether this instance's last write met no database and has not got through since. */
  isStalled(instanceId: string): boolean {
    return this.stalled.has(instanceId);
  }

  /** Whether the worker still holds this lease (always yes without a keeper to ask). */
  holds(lease: Lease): boolean {
    return this.options.held?.(lease) ?? true;
  }

  private setStalled(instanceId: string, stalled: boolean): void {
    if (this.stalled.has(instanceId) === stalled) return;
    if (stalled) this.stalled.add(instanceId);
    else this.stalled.delete(instanceId);
    this.logger[stalled ? 'warn' : 'info'](
      { instanceId },
      stalled ? 'inbound writes meet no database: socket not read, writes kept and retried' : 'inbound writes reach the database again',
    );
    for (const listener of [...(this.stallListeners.get(instanceId) ?? [])]) {
      try {
        listener(stalled);
      } catch (error) {
        this.logger.warn({ err: error, instanceId }, 'a stall listener failed');
      }
    }
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
    // Tracing on: what a socket learned starts a trace of its own (`inbound store`, ended at its commit);
    // its events carry the span's traceparent into the outbox, where the relay's delivery span continues it.
    const span = startSpan('session-worker', 'inbound store', { newTrace: true, attributes: { 'wa.instance.id': instanceId } });
    if (span) {
      const traceparent = traceparentOf(span);
      const untraced = work;
      work = async (manager, events) => {
        const from = events.length;
        const result = await untraced(manager, events);
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
      this.waiting.push({
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
      this.pump();
    });
  }

  private pump(): void {
    const maxAlone = this.options.maxAloneInFlight ?? MAX_ALONE_IN_FLIGHT;
    for (;;) {
      const groupOpen = this.inFlight < this.options.maxInFlight;
      // In arrival order, the writes of instances with nothing in flight (all that wait of each, in order);
      // a write of its own goes alone when it is the first of its instance that waits, outside the group.
      const group: Waiting[] = [];
      const alone: Waiting[] = [];
      const rest: Waiting[] = [];
      const full = new Set<string>();
      const grouped = new Set<string>();
      for (const entry of this.waiting) {
        const id = entry.lease.instanceId;
        const free = !this.busy.has(id) && !full.has(id);
        if (free && entry.alone && !grouped.has(id) && this.aloneInFlight + alone.length < maxAlone) {
          alone.push(entry);
          // Its instance's later writes wait for its commit.
          full.add(id);
        } else if (free && !entry.alone && groupOpen && group.length < this.options.maxBatch) {
          group.push(entry);
          grouped.add(id);
        } else {
          // Once one write of an instance stays behind, its later ones do too.
          full.add(id);
          rest.push(entry);
        }
      }
      if (group.length === 0 && alone.length === 0) return;
      this.waiting = rest;
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
      for (const id of grouped) this.busy.add(id);
      this.inFlight++;
      void this.flush(group).finally(() => {
        for (const id of grouped) this.busy.delete(id);
        this.inFlight--;
        this.pump();
      });
    }
  }

  private async flush(group: Waiting[]): Promise<void> {
    this.stats.transactions++;
    this.stats.writes += group.length;
    if (group.length === 1) return this.writeAlone(group[0]);
    const started = performance.now();
    let outcomes: Array<{ value: unknown } | { fenced: true }>;
    let lastIds = new Map<string, string>();
    let notices: Map<string, EventsNotice>;
    try {
      ({ outcomes, notices } = await LeaseRepository.fencedGroupTransaction(
        this.dataSource,
        group.map((entry) => entry.lease),
        async (manager, held) => {
          const results = new Array<{ value: unknown } | { fenced: true }>(group.length);
          // Each write's events, in arrival order whatever wave it runs in: an instance's events keep their order in the outbox.
          const eventsOf = group.map(() => [] as NewOutboxEvent[]);
          const batches: Array<{ instanceId: string; events: NewOutboxEvent[] }> = [];
          // Receipts' status changes, our own messages' copies and the chats' updates park and go together,
          // one statement per kind (InboundBatch).
          const receipts = InboundBatch.open(manager);
          // The writes parked and not finished yet (each until it finished, parking once per statement kind it reaches).
          const parked: Array<{ slot: number; done: Promise<unknown> }> = [];
          // Every parked write goes on once a round handed it its rows (or failed it): all of them have
          // finished before this returns or throws, so none is still writing when the group commits or
          // rolls back (a statement sent after the ROLLBACK would run outside the transaction and the fence).
          // One round is one statement for every parked write (InboundBatch); a write that parks again (a
          // copy, then its chat) goes in the next round, until none is parked.
          const settleParked = async () => {
            while (parked.length > 0) {
              let again: Set<number>;
              try {
                again = await receipts.flush(parked);
              } catch (error) {
                await Promise.allSettled(parked.map(({ done }) => done));
                parked.length = 0;
                throw error;
              }
              const finished = parked.filter((write) => !again.has(write.slot));
              parked.splice(0, parked.length, ...parked.filter((write) => again.has(write.slot)));
              // A finished write that failed fails the group (the finally waits for those still parked).
              for (const write of finished) results[write.slot] = { value: await write.done };
            }
          };
          try {
            // In waves (waves()): every instance's first write, then each one's next, and so on; writes of one
            // instance that share no key with each other or with a write between them go in one wave. A
            // write comes after every write of its instance it may depend on (its parked write is written
            // before the next one starts), and the writes of a wave park together, so a round carries all of
            // them. In arrival order an instance's next write flushed every parked write after one or two.
            group.forEach((entry, position) => {
              if (held.has(entry.lease.instanceId)) batches.push({ instanceId: entry.lease.instanceId, events: eventsOf[position] });
            });
            for (const wave of waves(group)) {
              for (const position of wave) {
                const entry = group[position];
                if (!held.has(entry.lease.instanceId)) {
                  results[position] = { fenced: true };
                  continue;
                }
                const { done, parked: isParked } = await receipts.run(position, () => entry.work(manager, eventsOf[position]));
                if (isParked) parked.push({ slot: position, done });
                else results[position] = { value: await done };
              }
              await settleParked();
            }
          } finally {
            // A failed group: the parked writes fail with it (and run again alone in the fallback), and
            // have stopped before the transaction ends.
            receipts.close();
            await Promise.allSettled(parked.map(({ done }) => done));
          }
          return { outcomes: results, batches, notices: noticesOf(batches) };
        },
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
          (manager) => entry.work(manager, events),
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
          (manager) => entry.work(manager, events),
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

/**
 * The positions of a group's writes in waves (arrival order within a wave). A write that names what it
 * touches (`keys`: its messages, and the chat whose row it updates) goes in the wave after the last one
 * holding a write of its instance that names one of them, or a write that names none; a write that names
 * none goes after every write of its instance. So writes of one instance about different messages and
 * chats share a wave (a busy instance's receipts, copies and received messages: one round each, not one
 * wave each), and every write comes after the ones it may depend on: a receipt after its message's
 * copy, a second receipt of a message after the first, a chat's next message after its last. A key
 * that misses (a chat named by its JID in one write and by its LID only in another) costs a round trip,
 * not order: a round leaves a chat two of its observations found to them, alone and in order, after its
 * statement (InboundGroupRepository).
 */
function waves(group: ReadonlyArray<Waiting>): number[][] {
  const result: number[][] = [];
  const instances = new Map<string, { after: number; last: number; byKey: Map<string, number> }>();
  group.forEach((entry, position) => {
    const id = entry.lease.instanceId;
    let seen = instances.get(id);
    if (!seen) instances.set(id, (seen = { after: -1, last: -1, byKey: new Map() }));
    let wave: number;
    if (entry.keys === undefined || entry.keys.length === 0) {
      wave = seen.last + 1;
      seen.after = wave;
    } else {
      wave = Math.max(seen.after, ...entry.keys.map((key) => seen.byKey.get(key) ?? -1)) + 1;
      for (const key of entry.keys) seen.byKey.set(key, wave);
    }
    seen.last = Math.max(seen.last, wave);
    (result[wave] ??= []).push(position);
  });
  return result;
}

/** What a notice says of the events its commit wrote (OutboxNotice: a follower that wants none of them skips it). */
type EventsNotice = Pick<OutboxNotice, 'types' | 'sentByApi'>;

/**
 * The notice's account of these events: their types, each once, and `sentByApi` when every `messages`
 * event among them is of a message sent through the API (our own copies).
 */
function noticeOf(events: ReadonlyArray<NewOutboxEvent>): EventsNotice {
  const types = [...new Set(events.map((event) => event.eventType))];
  const messages = events.filter((event) => event.eventType === 'messages');
  const sentByApi =
    messages.length > 0 &&
    messages.every((event) => {
      const message = (event.payload as { message?: { fromMe?: unknown; wasSentByApi?: unknown } }).message;
      return message?.fromMe === true && message.wasSentByApi === true;
    });
  return sentByApi ? { types, sentByApi } : { types };
}

/** noticeOf() each instance's events in these batches. */
function noticesOf(batches: ReadonlyArray<{ instanceId: string; events: ReadonlyArray<NewOutboxEvent> }>): Map<string, EventsNotice> {
  const events = new Map<string, NewOutboxEvent[]>();
  for (const batch of batches) events.set(batch.instanceId, [...(events.get(batch.instanceId) ?? []), ...batch.events]);
  return new Map([...events].map(([instanceId, all]) => [instanceId, noticeOf(all)]));
}
