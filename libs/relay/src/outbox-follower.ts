import { Bus, type BusSubscription } from '@gw/bus';
import { Subjects, type OutboxNotice } from '@gw/contracts';
import type { CursorHandler, OutboxCursorRepository } from '@gw/persistence';
import { forEachAtMost, LoopWaker, type Logger } from '@gw/platform';

export interface OutboxFollowerOptions<T = void> {
  /** The consumer's name ('chatbot', 'chatwoot', …): one durable cursor per (consumer, instance). */
  consumer: string;
  /** Only these event types reach `handle`; the cursor still moves past the others. All when absent. */
  eventTypes?: string[];
  /** The instances to follow now (those with the feature enabled); asked again every `refreshMs` and on `refresh()`. */
  instances: () => Promise<string[]>;
  /**
   * Turns events into work rows, inside the transaction that holds the (consumer, instance) cursor and
   * then moves it: what it writes with `tx` commits together with the cursor (each event once).
   * Keep it short and local: no calls to remote services here. Throwing rolls the step back; the same
   * events come again on the next pass. What it returns reaches `committed` once the step committed.
   */
  handle: CursorHandler<T>;
  /**
   * Told after a step of `instanceId` committed (what `handle` wrote is visible now), with what `handle`
   * returned in that step (undefined when it was not called): wake the work's consumers here, not from
   * `handle`. Never told of a step that rolled back.
   */
  committed?: (instanceId: string, handled: T | undefined) => void;
  /**
   * JSON paths over an event's payload (jsonpath, as `@?` takes them) that mark events of `eventTypes`
   * the handler would ignore anyway (needs `eventTypes`): they never reach it. With them, a notice first
   * peeks at what is past the cursor without a transaction, and steps only when some event is wanted:
   * the others are moved past by the next step that is (or by the poll's), not by a transaction of their own.
   */
  ignore?: string[];
  /**
   * A notice whose commit this consumer knows holds nothing for it (the events `ignore` marks, told by
   * the notice itself: `sentByApi`, `origin`): skipped, as one naming no wanted type is, without a peek.
   * Its events are moved past by the next step that has something to hand over, or by the poll's.
   */
  skipNotice?: (notice: Partial<OutboxNotice>) => boolean;
  /** Events per step (one transaction). */
  batchSize?: number;
  /** Fallback pass when no notice arrives (events written by a process without the bus, missed notices). */
  pollIntervalMs?: number;
  /** How often the followed set is asked for again. */
  refreshMs?: number;
  /** Instances stepped at once. */
  concurrency?: number;
}

const DEFAULTS = { batchSize: 200, pollIntervalMs: 1_000, refreshMs: 5_000, concurrency: 4 } as const;

/** Steps of one instance in one pass, so that a busy instance cannot hold the others back for long. */
const MAX_STEPS_PER_PASS = 20;

/**
 * How soon an instance whose cursor another process held is looked at again: 2 ms, then twice as long
 * each time it is still held, at most 20 ms. That process's step may have started before the events
 * that woke this one committed; looking again hands them over without waiting for the poll.
 */
const BUSY_RETRY_FIRST_MS = 2;
const BUSY_RETRY_MAX_MS = 20;

/** What a pass did: nothing to do, its work, its work with more ready at once, or none (every step it tried failed). */
type PassOutcome = 'idle' | 'done' | 'more' | 'failed';
type DrainOutcome = 'done' | 'more' | 'failed';

/**
 * A durable consumer of the event outbox, for features that turn events into their own work (the
 * chatbot's rounds, the Chatwoot bridge's sync jobs). The cursors live in Postgres
 * (OutboxCursorRepository), so any number of processes may follow the same consumer side by side: each
 * (consumer, instance) cursor is held by one of them at a time, events are handed over as they commit (ADR 0020),
 * and every event becomes work exactly once, across crashes and restarts.
 *
 * Wakes on the bus's `events.<instance>` notices (published after each commit that wrote events) and
 * polls every `pollIntervalMs` for whatever a notice did not announce.
 */
export class OutboxFollower<T = void> {
  private readonly options: Required<Omit<OutboxFollowerOptions<T>, 'eventTypes' | 'committed' | 'ignore' | 'skipNotice'>> &
    Pick<OutboxFollowerOptions<T>, 'committed' | 'ignore' | 'skipNotice'> & { eventTypes?: ReadonlySet<string> };
  private subscription?: BusSubscription;
  private followed = new Set<string>();
  private refreshedAt = 0;
  private refreshWanted = true;
  private readonly dirty = new Set<string>();
  /** Instances whose cursor another process held: how many looks in a row found it held. */
  private readonly held = new Map<string, number>();
  private pollDue = true;
  private running = false;
  private readonly waker = new LoopWaker();
  private loop?: Promise<void>;

  constructor(
    /** The consumers' cursors (one per consumer and instance). */
    private readonly cursors: OutboxCursorRepository,
    private readonly bus: Bus,
    options: OutboxFollowerOptions<T>,
    private readonly logger: Logger,
  ) {
    this.options = {
      ...DEFAULTS,
      ...options,
      eventTypes: options.eventTypes ? new Set(options.eventTypes) : undefined,
    };
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.subscription = this.bus.subscribe(Subjects.outboxWildcard, (data, subject) => {
      // A commit that wrote only types this consumer does not want has nothing for it: the next step
      // (a wanted event's, or the poll's) moves the cursor past them.
      const notice = (data ?? {}) as Partial<OutboxNotice>;
      const wanted = this.options.eventTypes;
      if (wanted && Array.isArray(notice.types) && !notice.types.some((type) => wanted.has(type))) return;
      if (this.options.skipNotice?.(notice)) return;
      this.poke(subject.slice(subject.indexOf('.') + 1));
    });
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.subscription?.unsubscribe();
    this.subscription = undefined;
    this.waker.halt();
    await this.loop;
  }

  /** Events of `instanceId` (or of any instance) are ready: pass soon. */
  poke(instanceId?: string): void {
    if (instanceId === undefined) this.pollDue = true;
    else this.dirty.add(instanceId);
    this.waker.wake();
  }

  /** Pokes `instanceId` again after BUSY_RETRY_FIRST_MS, doubled for each look in a row that found its cursor held. */
  private lookAgain(instanceId: string): void {
    const looks = this.held.get(instanceId) ?? 0;
    this.held.set(instanceId, looks + 1);
    setTimeout(() => this.poke(instanceId), Math.min(BUSY_RETRY_MAX_MS, BUSY_RETRY_FIRST_MS * 2 ** looks)).unref();
  }

  /** The followed set changed (a feature was turned on or off for an instance): ask `instances()` again now. */
  refresh(): void {
    this.refreshWanted = true;
    this.waker.wake();
  }

  private async run(): Promise<void> {
    while (this.running) {
      this.waker.begin();
      let outcome: PassOutcome = 'failed';
      try {
        outcome = await this.pass();
      } catch (error) {
        this.logger.error({ err: error, consumer: this.options.consumer }, 'outbox follower pass failed');
      }
      if (!this.running) break;
      if (outcome === 'failed') {
        // Notices keep coming while the database is down (or a step keeps failing): wait before the
        // next pass, however many come; the poll after it retries the instances whose steps failed.
        await this.waker.backoff(this.options.pollIntervalMs);
        this.pollDue = true;
        continue;
      }
      if (outcome !== 'idle') this.waker.succeeded();
      if (outcome === 'more' || this.dirty.size > 0 || this.refreshWanted) {
        await this.waker.turn();
        continue;
      }
      // A poke during the pass (a poll asked for, say) ends this sleep at once; the interval's end is a poll.
      if (!(await this.waker.sleep(this.options.pollIntervalMs))) this.pollDue = true;
    }
  }

  /** One pass: whether some instance has more ready at once, or every step it tried failed. */
  private async pass(): Promise<PassOutcome> {
    const now = Date.now();
    if (this.refreshWanted || now - this.refreshedAt >= this.options.refreshMs) {
      this.refreshWanted = false;
      this.followed = new Set(await this.cursors.follow(this.options.consumer, this.options.instances));
      this.refreshedAt = now;
    }
    // Instance → whether it came from a notice only (it may be peeked at first) or from the poll.
    const targets = new Map<string, boolean>();
    for (const id of this.dirty) if (this.followed.has(id)) targets.set(id, true);
    this.dirty.clear();
    if (this.pollDue) {
      this.pollDue = false;
      for (const id of await this.cursors.behind(this.options.consumer, 1_000)) targets.set(id, false);
    }
    if (targets.size === 0) return 'idle';
    let more = false;
    let failed = 0;
    await forEachAtMost([...targets], this.options.concurrency, async ([instanceId, notified]) => {
      // Stopping: the instances not started yet are left for the next pass.
      if (!this.running) return;
      const drained = await this.drain(instanceId, notified);
      if (drained === 'more') more = true;
      else if (drained === 'failed') failed++;
    });
    // Some instance that failed beside others that did not (one handler's bug) holds none of them back.
    if (failed > 0 && failed === targets.size) return 'failed';
    return more ? 'more' : 'done';
  }

  /**
   * Steps one instance until it is caught up (or has had its share of this pass): 'more' when more is
   * ready, 'failed' when its peek or step failed. `notified`: woken by a notice, so with `ignore` set it peeks first and steps only if an event
   * is wanted (or a full batch waits); the poll always steps, moving past what was left.
   */
  private async drain(instanceId: string, notified: boolean): Promise<DrainOutcome> {
    const { consumer, batchSize, handle, eventTypes, ignore } = this.options;
    if (notified && ignore?.length && eventTypes) {
      let peek;
      try {
        peek = await this.cursors.peek(consumer, instanceId, batchSize, eventTypes, ignore);
      } catch (error) {
        this.logger.error({ err: error, consumer, instanceId }, 'outbox follower peek failed; retried on the next poll');
        return 'failed';
      }
      if (!peek.wanted && !peek.full) return 'done';
    }
    for (let steps = 0; steps < MAX_STEPS_PER_PASS && this.running; steps++) {
      let step;
      try {
        step = await this.cursors.step(consumer, instanceId, batchSize, handle, eventTypes, ignore);
      } catch (error) {
        // Rolled back: the same events come again on the next poll.
        this.logger.error({ err: error, consumer, instanceId }, 'outbox follower step failed; retried on the next poll');
        return 'failed';
      }
      // No cursor (the instance was just unfollowed or deleted): nothing to look at again; the refresh catches up.
      if (step.gone) return 'done';
      if (step.busy) {
        // Another process steps this instance; its snapshot may predate what woke us: look again shortly.
        this.lookAgain(instanceId);
        return 'done';
      }
      this.held.delete(instanceId);
      if (step.read > 0) this.options.committed?.(instanceId, step.handled);
      if (!step.more) return 'done';
    }
    return this.running ? 'more' : 'done';
  }
}
