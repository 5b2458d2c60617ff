import { type ChatbotConfig, readChatbotConfig } from '@gw/chatbot';
import { readAsyncDispatcherConfig, readRetentionConfig, type AsyncDispatcherConfig, type RetentionConfig } from '@gw/dispatch';
import type { EnvReader } from '@gw/platform';
import { readServiceHostConfig, type ServiceHostConfig } from '@gw/service-host';

export interface DispatcherConfig extends ServiceHostConfig {
  /** The async-send queue (see readAsyncDispatcherConfig for its variables). */
  dispatch: AsyncDispatcherConfig;
  /** The scheduled purge (MESSAGE_RETENTION_DAYS, RETENTION_INTERVAL_MS). */
  retention: RetentionConfig;
  /** The chatbot's runner and outbox follower (see readChatbotConfig for its variables). */
  chatbot: ChatbotConfig;
}

/** Every variable the dispatcher reads, parsed once at boot. */
export function loadDispatcherConfig(env: EnvReader): DispatcherConfig {
  return {
    ...readServiceHostConfig(env, 8083),
    dispatch: readAsyncDispatcherConfig(env),
    retention: readRetentionConfig(env),
    chatbot: readChatbotConfig(env),
  };
}
