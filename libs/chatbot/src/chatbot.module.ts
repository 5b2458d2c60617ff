import { type DynamicModule, Inject, Injectable, Module, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Bus } from '@gw/bus';
import { ChatbotRepository, ChatbotTranscriptRepository, FileRepository, QuickReplyRepository } from '@gw/persistence';
import type { Logger } from '@gw/platform';
import { OutboxFollower } from '@gw/relay';
import { DataSource } from 'typeorm';
import { admitEvents } from './admission';
import { ChatbotRunner, CHATBOT_WAKE } from './chatbot-runner';
import type { ChatbotConfig } from './config';
import { guardedFetch } from './guarded-fetch';
import { KnowledgeIndexer } from './knowledge';
import { Voice } from './voice';

const RUNNER = Symbol('CHATBOT_RUNNER');
const FOLLOWER = Symbol('CHATBOT_FOLLOWER');

/** The chatbot's two halves in one process: the outbox follower that admits received messages into rounds, and the runner that answers them. */
export interface ChatbotServices {
  follower: OutboxFollower;
  runner: ChatbotRunner;
}

/**
 * Builds the follower (consumer `chatbot`, following the instances with `chatbot_enabled`, `messages`
 * events only) and the runner. The follower's handler writes rounds in its cursor's transaction, then
 * wakes the runners over the bus.
 */
export function createChatbotServices(dataSource: DataSource, bus: Bus, config: ChatbotConfig, logger: Logger): ChatbotServices {
  const rounds = new ChatbotRepository(dataSource);
  const runner = new ChatbotRunner(
    rounds,
    new QuickReplyRepository(dataSource),
    new KnowledgeIndexer(rounds, config, logger.child({ component: 'chatbot-knowledge' })),
    bus,
    config,
    logger.child({ component: 'chatbot-runner' }),
    new Voice(
      new FileRepository(dataSource),
      new ChatbotTranscriptRepository(dataSource),
      bus,
      config,
      guardedFetch(config.ssrf),
      logger.child({ component: 'chatbot-voice' }),
    ),
  );
  /** Instances whose step admitted rounds, until that step's transaction committed. */
  const admitted = new Set<string>();
  const follower = new OutboxFollower(
    dataSource,
    bus,
    {
      consumer: 'chatbot',
      eventTypes: ['messages'],
      instances: () => rounds.enabledInstances(),
      pollIntervalMs: config.pollIntervalMs,
      handle: async (manager, instanceId, events) => {
        const results = await admitEvents(manager, instanceId, events, { defaultPauseMinutes: config.defaultPauseMinutes });
        if (results.some((result) => result.action === 'admitted')) admitted.add(instanceId);
      },
      // The rounds are visible once the cursor's transaction committed: wake the runners then, once.
      committed: (instanceId) => {
        if (admitted.delete(instanceId)) bus.publish(CHATBOT_WAKE, { instanceId });
      },
    },
    logger.child({ component: 'chatbot-follower' }),
  );
  return { follower, runner };
}

@Injectable()
class ChatbotLifecycle implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(
    @Inject(RUNNER) private readonly runner: ChatbotRunner,
    @Inject(FOLLOWER) private readonly follower: OutboxFollower,
  ) {}

  onApplicationBootstrap(): void {
    this.follower.start();
    this.runner.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.follower.stop();
    await this.runner.stop();
  }
}

/** The chatbot as a Nest module (hosted by the dispatcher app, and so embedded in the gateway by default). */
@Module({})
export class ChatbotModule {
  static register(options: { bus: Bus; config: ChatbotConfig; logger: Logger }): DynamicModule {
    const SERVICES = Symbol('CHATBOT_SERVICES');
    return {
      module: ChatbotModule,
      providers: [
        {
          provide: SERVICES,
          useFactory: (dataSource: DataSource) => createChatbotServices(dataSource, options.bus, options.config, options.logger),
          inject: [DataSource],
        },
        { provide: RUNNER, useFactory: (services: ChatbotServices) => services.runner, inject: [SERVICES] },
        { provide: FOLLOWER, useFactory: (services: ChatbotServices) => services.follower, inject: [SERVICES] },
        ChatbotLifecycle,
      ],
    };
  }
}
