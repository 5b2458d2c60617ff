import { Inject, Injectable, Module, type BeforeApplicationShutdown, type DynamicModule, type OnApplicationBootstrap } from '@nestjs/common';
import {
  AuthStateRepository,
  BlocklistRepository,
  ChatRepository,
  ContactRepository,
  FileRepository,
  InboundGroupRepository,
  InstanceRepository,
  LabelRepository,
  LeaseRepository,
  LidMappingRepository,
  MessageRepository,
  OutboundLedgerRepository,
  QuickReplyRepository,
} from '@gw/persistence';
import { SessionWorker, type SessionWorkerOptions } from './session-worker';

/** Injection token of the SessionWorker instance. */
export const SESSION_WORKER = Symbol('SESSION_WORKER');

/** Starts the worker with the application and stops it gracefully before the app shuts down. */
@Injectable()
class SessionWorkerLifecycle implements OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(@Inject(SESSION_WORKER) private readonly worker: SessionWorker) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.worker.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    // Before the embedder closes the bus and the database: sessions still write their last state.
    await this.worker.stop();
  }
}

/**
 * The session worker as a Nest module. The embedder passes what it owns (DataSource, bus, logger)
 * and a config, and registers `PersistenceModule.forDataSource(dataSource)` once (it is global): the
 * worker's repositories are injected from it. `app.enableShutdownHooks()` makes SIGTERM close sessions
 * gracefully.
 *
 *   imports: [PersistenceModule.forDataSource(dataSource), SessionWorkerModule.register({ dataSource, bus, config, logger })]
 */
@Module({})
export class SessionWorkerModule {
  static register(options: Omit<SessionWorkerOptions, 'repositories'>): DynamicModule {
    return {
      module: SessionWorkerModule,
      providers: [
        {
          provide: SESSION_WORKER,
          useFactory: (
            instances: InstanceRepository,
            leases: LeaseRepository,
            authStates: AuthStateRepository,
            messages: MessageRepository,
            chats: ChatRepository,
            contacts: ContactRepository,
            files: FileRepository,
            lidMappings: LidMappingRepository,
            blocklist: BlocklistRepository,
            labels: LabelRepository,
            quickReplies: QuickReplyRepository,
            inboundGroups: InboundGroupRepository,
            ledger: OutboundLedgerRepository,
          ) =>
            new SessionWorker({
              ...options,
              repositories: {
                instances,
                leases,
                authStates,
                messages,
                chats,
                contacts,
                files,
                lidMappings,
                blocklist,
                labels,
                quickReplies,
                inboundGroups,
                ledger,
              },
            }),
          inject: [
            InstanceRepository,
            LeaseRepository,
            AuthStateRepository,
            MessageRepository,
            ChatRepository,
            ContactRepository,
            FileRepository,
            LidMappingRepository,
            BlocklistRepository,
            LabelRepository,
            QuickReplyRepository,
            InboundGroupRepository,
            OutboundLedgerRepository,
          ],
        },
        SessionWorkerLifecycle,
      ],
      exports: [SESSION_WORKER],
    };
  }
}
