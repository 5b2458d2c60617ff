import { Inject, Injectable } from '@nestjs/common';
import type { Bus } from '@gw/bus';
import type { SendRequest } from '@gw/contracts';
import { AsyncQueue, ASYNC_QUEUE_DEFAULTS } from '@gw/dispatch';
import { SendQueueRepository, toMessageRecord } from '@gw/persistence';
import { ApiError } from '../../common/api-error';
import { BUS } from '../../runtime/tokens';
import { asyncAcceptTokens } from '../../common/accept-token-cache';
import type { AsyncQueueClearedResponse, AsyncQueueStatusResponse } from './dto/async-queue.response';
import type { RequestInstance } from '../../common/request-instance';

/** The gateway's side of the `async=true` queue: accept durably, report, clear. The dispatcher sends. */
@Injectable()
export class AsyncQueueService {
  private readonly queue: AsyncQueue;

  constructor(queue: SendQueueRepository, @Inject(BUS) bus: Bus) {
    this.queue = new AsyncQueue(queue, bus, ASYNC_QUEUE_DEFAULTS);
  }

  /**
   * In Postgres (messages row `Queued` + queue row) before it returns: the Message record to answer with,
   * from the row as stored (a record id already taken in the instance was replaced by the table, ADR 0040).
   */
  async enqueue(instance: RequestInstance, request: SendRequest) {
    try {
      return toMessageRecord(await this.queue.enqueue(request, instance.owner), instance.owner);
    } catch (error) {
      // The instance is gone (deleted since its token was looked up): as for an unknown token.
      if ((error as { code?: string }).code === '23503') {
        asyncAcceptTokens.forget(instance.token);
        throw ApiError.invalidToken();
      }
      throw error;
    }
  }

  async status(instance: RequestInstance): Promise<AsyncQueueStatusResponse> {
    const queue = await this.queue.status(instance.id, instance.status === 'connected');
    return { response: 'Async queue status', instanceId: instance.id, queue };
  }

  async clear(instance: RequestInstance): Promise<AsyncQueueClearedResponse> {
    const outcome = await this.queue.clear(instance.id);
    if (outcome.ok) return { response: 'Async queue cleared', instanceId: instance.id, stats: outcome.stats };
    const message = outcome.reason === 'resetting' ? 'async queue is resetting, try again later' : 'async queue did not drain before reset';
    throw ApiError.conflict(message, { instanceId: instance.id, stats: outcome.stats });
  }

  /** Accept statements written and the sends they carried (group commit; see EnqueueBatcher). */
  acceptStats(): { statements: number; items: number; fallbacks: number } {
    return this.queue.acceptStats;
  }

  /** Delay settings changed: the dispatchers re-evaluate the waiting sends at once. */
  settingsChanged(instanceId: string): void {
    this.queue.notify(instanceId);
  }
}
