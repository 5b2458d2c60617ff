import { type DynamicModule, Inject, Injectable, Module, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Bus } from '@gw/bus';
import {
  ChatbotAdmissionRepository,
  ChatbotRepository,
  ChatbotTranscriptRepository,
  FileRepository,
  OutboxCursorRepository,
  QuickReplyRepository,
} from '@gw/persistence';
import type { Logger } from '@gw/platform';
import { OutboxFollower } from '@gw/relay';
import { admitEvents, IGNORED_BEFORE_ADMISSION, type ClaimedRound } from './admission';
import { ChatbotRunner, CHATBOT_ORIGIN, CHATBOT_WAKE } from './chatbot-runner';
import type { ChatbotConfig } from './config';
import { guardedFetch } from './guarded-fetch';
import { KnowledgeIndexer } from './knowledge';
import { Voice } from './voice';

/** The chatbot follower's consumer name: its cursors in outbox_cursors (the gateway starts one when the bot is turned on). */
export const CHATBOT_CONSUMER = 'chatbot';

const RUNNER = Symbol('CHATBOT_RUNNER');
const FOLLOWER = Symbol('CHATBOT_FOLLOWER');

/** The chatbot's follower: its handler tells `committed` which rounds it claimed for this process's runner, and whether it admitted others. */
type ChatbotFollower = OutboxFollower<{ claimed: ClaimedRound[]; others: boolean }>;

/** The chatbot's two halves in one process: the outbox follower that admits received messages into rounds, and the runner that answers them. */
export interface ChatbotServices {
  follower: ChatbotFollower;
  runner: ChatbotRunner;
}

/** The repositories the chatbot's follower and runner use (the process's own: PersistenceModule). */
export interface ChatbotRepositories {
  rounds: ChatbotRepository;
  admissions: ChatbotAdmissionRepository;
  quickReplies: QuickReplyRepository;
  files: FileRepository;
  transcripts: ChatbotTranscriptRepository;
  cursors: OutboxCursorRepository;
}

/**
 * Builds the follower (consumer `chatbot`, following the instances with `chatbot_enabled`, `messages`
 * events only) and the runner. The follower's handler writes rounds in its cursor's transaction and
 * claims those due at once for this process's runner, which starts them after the commit; the runners
 * are woken over the bus for the others.
 */
export function createChatbotServices(repositories: ChatbotRepositories, bus: Bus, config: ChatbotConfig, logger: Logger): ChatbotServices {
  const rounds = repositories.rounds;
  const runner = new ChatbotRunner(
    rounds,
    repositories.quickReplies,
    new KnowledgeIndexer(rounds, config, logger.child({ component: 'chatbot-knowledge' })),
    bus,
    config,
    logger.child({ component: 'chatbot-runner' }),
    new Voice(repositories.files, repositories.transcripts, bus, config, guardedFetch(config.ssrf), logger.child({ component: 'chatbot-voice' })),
  );
  const follower: ChatbotFollower = new OutboxFollower(
    repositories.cursors,
    bus,
    {
      consumer: CHATBOT_CONSUMER,
      eventTypes: ['messages'],
      // A commit of only these (the bot's answer, its ai_metadata update) costs a read, not a step.
      ignore: [...IGNORED_BEFORE_ADMISSION],
      // A commit of only those, told by its notice (our copies of the answers; a round's end): not even a peek.
      skipNotice: (notice) => notice.sentByApi === true || notice.origin === CHATBOT_ORIGIN,
      instances: () => rounds.enabledInstances(),
      pollIntervalMs: config.pollIntervalMs,
      handle: async (tx, instanceId, events) => {
        // A round due at once is claimed in this transaction for this process's runner while it has room.
        const claim = () => (runner.hasRoom() ? { runner: config.runnerId, claimMs: config.claimMs } : null);
        const results = await admitEvents(repositories.admissions.within(tx), instanceId, events, { defaultPauseMinutes: config.defaultPauseMinutes, claim });
        const claimed: ClaimedRound[] = [];
        let others = false;
        for (const result of results) {
          if (result.action !== 'admitted') continue;
          if (result.claimed) claimed.push(result.claimed);
          else others = true;
        }
        return { claimed, others };
      },
      // The rounds are visible once the cursor's transaction committed: this runner starts the ones it
      // claimed, and the runners are woken once for the others (joined, delayed, or queued in their chat).
      committed: (instanceId, handled) => {
        for (const { round, context } of handled?.claimed ?? []) runner.runClaimed(round, context);
        if (handled?.others) bus.publish(CHATBOT_WAKE, { instanceId });
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
    @Inject(FOLLOWER) private readonly follower: ChatbotFollower,
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
          useFactory: (
            rounds: ChatbotRepository,
            admissions: ChatbotAdmissionRepository,
            quickReplies: QuickReplyRepository,
            files: FileRepository,
            transcripts: ChatbotTranscriptRepository,
            cursors: OutboxCursorRepository,
          ) => createChatbotServices({ rounds, admissions, quickReplies, files, transcripts, cursors }, options.bus, options.config, options.logger),
          inject: [ChatbotRepository, ChatbotAdmissionRepository, QuickReplyRepository, FileRepository, ChatbotTranscriptRepository, OutboxCursorRepository],
        },
        { provide: RUNNER, useFactory: (services: ChatbotServices) => services.runner, inject: [SERVICES] },
        { provide: FOLLOWER, useFactory: (services: ChatbotServices) => services.follower, inject: [SERVICES] },
        ChatbotLifecycle,
      ],
    };
  }
}
