import { outboundMessageRow } from '@gw/persistence';
import type { Bus } from '@gw/bus';
import { Subjects, type QueueNotice, type SendRequest } from '@gw/contracts';
import { SendQueueRepository, type MessageRow, type NewMessage } from '@gw/persistence';
import { ENQUEUE_BATCHER_DEFAULTS, EnqueueBatcher, type EnqueueBatcherOptions } from './enqueue-batcher';

export type QueueStatusName = 'idle' | 'queued' | 'processing' | 'waiting_connection' | 'resetting';

/** `GET /message/async` → `queue`. */
export interface AsyncQueueStatus {
  status: QueueStatusName;
  /** Sends accepted and not finished (the one in flight included). */
  pending: number;
  /** A send of this instance is with the worker right now. */
  processingNow: boolean;
  /** False only while a reset runs (sends accepted then still queue, behind the reset). */
  acceptingNewMessages: boolean;
  sessionReady: boolean;
  resetting: boolean;
}

/**
 * `DELETE /message/async` → `stats`. The upstream's names come from an in-memory queue with a channel
 * and an overflow backlog; in our design everything queued is in Postgres, so they mean:
 * - trackedJobsCleared: send_queue rows deleted (every pending send of the instance but the one in flight);
 * - bufferedJobsMarkedCanceled: of those, sends already handed over at least once and waiting for a
 *   retry (session disconnected, worker timeout or error backoff);
 * - drainedChannelJobs: sends in flight when the reset began that were let finish (0 or 1: one per instance at a time);
 * - clearedOverflowJobs: always 0: there is no overflow backlog, the Postgres queue is not bounded;
 * - persistedQueuedCanceled: messages rows moved to `Canceled` (queued and never relayed; sent ones are untouched).
 */
export interface AsyncQueueClearStats {
  trackedJobsCleared: number;
  bufferedJobsMarkedCanceled: number;
  drainedChannelJobs: number;
  clearedOverflowJobs: number;
  persistedQueuedCanceled: number;
}

export type AsyncQueueClearOutcome =
  | { ok: true; stats: AsyncQueueClearStats }
  /** resetting: another reset of this instance is running; not_drained: the send in flight did not finish in time (the rest is canceled). */
  | { ok: false; reason: 'resetting' | 'not_drained'; stats: AsyncQueueClearStats };

export interface AsyncQueueOptions {
  /** How long DELETE /message/async waits for the send in flight. */
  drainTimeoutMs: number;
  drainPollMs: number;
  /** Group commit of concurrent accepts (see EnqueueBatcher). */
  batching?: EnqueueBatcherOptions;
}

export const ASYNC_QUEUE_DEFAULTS: AsyncQueueOptions = { drainTimeoutMs: 5_000, drainPollMs: 50, batching: ENQUEUE_BATCHER_DEFAULTS };

type Accept = { message: NewMessage; request: SendRequest };

/** The gateway's side of the async queue: accept (durably), report, reset. */
export class AsyncQueue {
  private readonly accepts: EnqueueBatcher<Accept, MessageRow>;

  /** `queue`: the process's SendQueueRepository. */
  constructor(
    private readonly queue: SendQueueRepository,
    private readonly bus: Bus,
    private readonly options: AsyncQueueOptions = ASYNC_QUEUE_DEFAULTS,
  ) {
    this.accepts = new EnqueueBatcher<Accept, MessageRow>(
      (items) => this.queue.enqueueMany(items),
      (item) => this.queue.enqueue(item.message, item.request),
      options.batching ?? ENQUEUE_BATCHER_DEFAULTS,
    );
  }

  /**
   * Guarantee 1: the `Queued` messages row and the queue row (the whole request, ids fixed) commit
   * together before the caller answers 200, in one statement (shared with the accepts that arrived
   * meanwhile: group commit); then a wake-up for the dispatchers.
   */
  async enqueue(request: SendRequest, owner: string): Promise<MessageRow> {
    const row = await this.accepts.write({ message: outboundMessageRow(request, owner, 'Queued'), request });
    this.notify(request.instanceId);
    return row;
  }

  async status(instanceId: string, sessionReady: boolean): Promise<AsyncQueueStatus> {
    const row = await this.queue.status(instanceId);
    const status: QueueStatusName = row.resetting
      ? 'resetting'
      : row.processingNow
        ? 'processing'
        : row.pending > 0 && !sessionReady
          ? 'waiting_connection'
          : row.pending > 0
            ? 'queued'
            : 'idle';
    return { status, pending: row.pending, processingNow: row.processingNow, acceptingNewMessages: !row.resetting, sessionReady, resetting: row.resetting };
  }

  /**
   * Cancels everything pending: marks the lane resetting (no dispatcher starts a new send), cancels
   * the queued rows in one transaction, lets the send in flight finish (up to drainTimeoutMs), then
   * ends the reset and wakes the dispatchers so new sends go at once.
   */
  async clear(instanceId: string): Promise<AsyncQueueClearOutcome> {
    const empty: AsyncQueueClearStats = {
      trackedJobsCleared: 0,
      bufferedJobsMarkedCanceled: 0,
      drainedChannelJobs: 0,
      clearedOverflowJobs: 0,
      persistedQueuedCanceled: 0,
    };
    if (!(await this.queue.beginReset(instanceId, this.options.drainTimeoutMs + 10_000))) return { ok: false, reason: 'resetting', stats: empty };
    try {
      const cleared = await this.queue.clear(instanceId);
      const stats: AsyncQueueClearStats = {
        trackedJobsCleared: cleared.deleted,
        bufferedJobsMarkedCanceled: cleared.waitingDeleted,
        drainedChannelJobs: 0,
        clearedOverflowJobs: 0,
        persistedQueuedCanceled: cleared.canceled,
      };
      if (cleared.inFlightId === null) return { ok: true, stats };
      const deadline = Date.now() + this.options.drainTimeoutMs;
      while (await this.queue.stillInFlight(instanceId, cleared.inFlightId)) {
        if (Date.now() >= deadline) return { ok: false, reason: 'not_drained', stats };
        await new Promise((resolve) => setTimeout(resolve, this.options.drainPollMs));
      }
      return { ok: true, stats: { ...stats, drainedChannelJobs: 1 } };
    } finally {
      await this.queue.endReset(instanceId);
      this.notify(instanceId);
    }
  }

  /** Accept statements written and the sends they carried. */
  get acceptStats(): { statements: number; items: number; fallbacks: number } {
    return { ...this.accepts.stats };
  }

  /** Wakes the dispatchers for this instance (also after a change of its delay settings). */
  notify(instanceId: string): void {
    try {
      this.bus.publish(Subjects.queue(instanceId), { instanceId } satisfies QueueNotice);
    } catch {
      // The slow poll picks it up.
    }
  }
}
