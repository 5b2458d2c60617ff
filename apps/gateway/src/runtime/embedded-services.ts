import type { Database } from '@gw/persistence';
import type { DynamicModule } from '@nestjs/common';
import type { Bus } from '@gw/bus';
import { type EnvReader, type Logger, serviceLogger } from '@gw/platform';
import { ChatbotModule, readChatbotConfig } from '@gw/chatbot';
import { DispatchModule, readAsyncDispatcherConfig, readRetentionConfig, RetentionModule } from '@gw/dispatch';
import { readWebhookRelayConfig, WebhookRelayModule } from '@gw/relay';
import { ChatwootSyncModule, readChatwootSyncConfig } from '@gw/chatwoot';
import type { SimulatorSeam } from '@gw/sessions';
import { hostname } from 'node:os';

export interface EmbeddedServicesOptions {
  dataSource: Database;
  bus: Bus;
  logger: Logger;
  env: EnvReader;
  /** Sandbox: the workers talk to the embedded simulator. */
  simulator?: SimulatorSeam;
}

/**
 * The embedded default: the other services as modules of the gateway's process, configured from the
 * same environment variables their own processes read.
 *
 * The session worker's library is loaded here, when the gateway embeds it, not with the gateway's modules: with it
 * come Baileys, libsignal and WhatsApp's protobuf definitions, ~0.3 s of a gateway's start on a quiet machine
 * (a CPU profile of the start), which a gateway of a deployment with session workers of their own never uses.
 */
export async function embeddedServices(options: EmbeddedServicesOptions): Promise<DynamicModule[]> {
  const { readSessionWorkerConfig, SessionWorkerModule } = await import('@gw/sessions');
  const workerConfig = readSessionWorkerConfig(options.env);
  return [
    SessionWorkerModule.register({
      dataSource: options.dataSource,
      bus: options.bus,
      config: {
        ...workerConfig,
        workerId: options.env.optionalString('WORKER_ID') ?? `embedded-${hostname()}`,
        // The only worker (one per process and in-process bus): nobody starting beside it to share with.
        firstReconcileDelayMs: options.env.optionalString('WORKER_FIRST_RECONCILE_MS') === undefined ? 0 : workerConfig.firstReconcileDelayMs,
        simulator: options.simulator ?? workerConfig.simulator,
      },
      logger: serviceLogger(options.logger, 'session-worker'),
    }),
    WebhookRelayModule.register({
      bus: options.bus,
      config: readWebhookRelayConfig(options.env),
      logger: serviceLogger(options.logger, 'webhook-relay'),
    }),
    // The Chatwoot bridge's worker runs with the webhook relay (CHATWOOT_SYNC=false turns it off here).
    ChatwootSyncModule.register({
      bus: options.bus,
      config: readChatwootSyncConfig(options.env),
      logger: serviceLogger(options.logger, 'webhook-relay'),
    }),
    DispatchModule.register({
      bus: options.bus,
      config: readAsyncDispatcherConfig(options.env),
      logger: serviceLogger(options.logger, 'dispatcher'),
    }),
    RetentionModule.register({
      config: readRetentionConfig(options.env),
      logger: serviceLogger(options.logger, 'dispatcher'),
    }),
    // The chatbot runs with the dispatcher (its outbox follower and its runner).
    ChatbotModule.register({
      bus: options.bus,
      config: readChatbotConfig(options.env),
      logger: serviceLogger(options.logger, 'dispatcher'),
    }),
  ];
}
