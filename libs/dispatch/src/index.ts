export { ASYNC_DISPATCHER_DEFAULTS, AsyncDispatcher } from './async-dispatcher';
export type { AsyncDispatcherConfig } from './async-dispatcher';
export { ASYNC_QUEUE_DEFAULTS, AsyncQueue } from './async-queue';
export type { AsyncQueueClearOutcome, AsyncQueueClearStats, AsyncQueueOptions, AsyncQueueStatus, QueueStatusName } from './async-queue';
export { resolveChatPlaceholders, resolveRequestPlaceholders } from './chat-placeholders';
export type { PlaceholderInstance } from './chat-placeholders';
export { readAsyncDispatcherConfig } from './dispatch-config';
export { DispatchModule } from './dispatch.module';
export { queuedMessageRow } from './queued-message';
