import type { AsyncQueueClearedResponse, AsyncQueueStatusResponse } from './async-queue.response';

/** The bodies `GET|DELETE /message/async` answer, as the OpenAPI document shows them. */
export const ASYNC_QUEUE_STATUS_EXAMPLE: AsyncQueueStatusResponse = {
  response: 'Async queue status',
  instanceId: 'r183e2ef9597845',
  queue: { status: 'queued', pending: 1, processingNow: false, acceptingNewMessages: true, sessionReady: true, resetting: false },
};

export const ASYNC_QUEUE_CLEARED_EXAMPLE: AsyncQueueClearedResponse = {
  response: 'Async queue cleared',
  instanceId: 'r183e2ef9597845',
  stats: { trackedJobsCleared: 3, bufferedJobsMarkedCanceled: 0, drainedChannelJobs: 0, clearedOverflowJobs: 0, persistedQueuedCanceled: 3 },
};
