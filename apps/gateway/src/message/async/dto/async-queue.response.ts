import { ApiProperty, ApiSchema } from '@nestjs/swagger';

/** `GET /message/async`'s `queue`. */
@ApiSchema({ name: 'AsyncQueueState', description: "The instance's async send queue now" })
export class AsyncQueueState {
  @ApiProperty({
    enum: ['idle', 'queued', 'processing', 'waiting_connection', 'resetting'],
    description: 'In short: empty, sends waiting, one being sent, waiting for the connection, or a reset running',
  })
  status!: 'idle' | 'queued' | 'processing' | 'waiting_connection' | 'resetting';
  @ApiProperty({ type: 'integer', description: 'Sends accepted and not finished (the one in flight included)' })
  pending!: number;
  @ApiProperty({ description: 'A send of this instance is with the worker right now' })
  processingNow!: boolean;
  @ApiProperty({ description: 'The queue takes new async sends (false only while a reset runs)' })
  acceptingNewMessages!: boolean;
  @ApiProperty({ description: 'The WhatsApp session is ready to send' })
  sessionReady!: boolean;
  @ApiProperty({ description: 'The queue is paused by a reset or a clear' })
  resetting!: boolean;
}

/** `GET /message/async`: the instance's async send queue. */
@ApiSchema({ name: 'AsyncQueueStatus', description: "The instance's async send queue" })
export class AsyncQueueStatusResponse {
  @ApiProperty({ enum: ['Async queue status'], description: 'What this is' })
  response!: 'Async queue status';
  @ApiProperty({ description: "The instance's id" })
  instanceId!: string;
  @ApiProperty({ type: () => AsyncQueueState, description: 'The queue now' })
  queue!: AsyncQueueState;
}

/** `DELETE /message/async`'s `stats` (uazapi's names; everything queued here is in Postgres). */
@ApiSchema({ name: 'AsyncQueueClearStats', description: 'What a clear of the async queue removed' })
export class AsyncQueueClearStats {
  @ApiProperty({ type: 'integer', description: 'Queued sends removed (every pending send but the one in flight)' })
  trackedJobsCleared!: number;
  @ApiProperty({ type: 'integer', description: 'Of those, sends already handed over once and waiting for a retry, marked `Canceled`' })
  bufferedJobsMarkedCanceled!: number;
  @ApiProperty({ type: 'integer', description: 'Sends in flight when the clear began that were let finish (0 or 1)' })
  drainedChannelJobs!: number;
  @ApiProperty({ type: 'integer', description: 'Always 0: the queue has no overflow backlog' })
  clearedOverflowJobs!: number;
  @ApiProperty({ type: 'integer', description: 'Stored messages moved from `Queued` to `Canceled`' })
  persistedQueuedCanceled!: number;
}

/** `DELETE /message/async`: what the clear removed. */
@ApiSchema({ name: 'AsyncQueueCleared', description: 'The async queue cleared, and what was removed' })
export class AsyncQueueClearedResponse {
  @ApiProperty({ enum: ['Async queue cleared'], description: 'What was done' })
  response!: 'Async queue cleared';
  @ApiProperty({ description: "The instance's id" })
  instanceId!: string;
  @ApiProperty({ type: () => AsyncQueueClearStats, description: 'What was removed' })
  stats!: AsyncQueueClearStats;
}
