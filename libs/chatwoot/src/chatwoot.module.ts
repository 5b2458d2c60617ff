import { type DynamicModule, Inject, Injectable, Module, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Bus } from '@gw/bus';
import { ChatwootRepository, FileRepository, LidMappingRepository, OutboxCursorRepository } from '@gw/persistence';
import type { Logger } from '@gw/platform';
import { ChatwootSync, type ChatwootSyncConfig } from './chatwoot-sync';

const SYNC = Symbol('CHATWOOT_SYNC');

@Injectable()
class ChatwootSyncLifecycle implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(@Inject(SYNC) private readonly sync: ChatwootSync | null) {}

  onApplicationBootstrap(): void {
    this.sync?.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.sync?.stop();
  }
}

/**
 * The Chatwoot bridge's worker as a Nest module (hosted by the webhook relay; embedded in the gateway by
 * default), started and stopped with the application. `enabled: false` (CHATWOOT_SYNC=false) hosts none.
 */
@Module({})
export class ChatwootSyncModule {
  static register(options: { bus: Bus; config: ChatwootSyncConfig & { enabled: boolean }; logger: Logger }): DynamicModule {
    return {
      module: ChatwootSyncModule,
      providers: [
        {
          provide: SYNC,
          useFactory: (cursors: OutboxCursorRepository, repository: ChatwootRepository, lids: LidMappingRepository, files: FileRepository) =>
            options.config.enabled
              ? new ChatwootSync(cursors, repository, lids, files, options.bus, options.config, options.logger.child({ component: 'chatwoot-sync' }))
              : null,
          inject: [OutboxCursorRepository, ChatwootRepository, LidMappingRepository, FileRepository],
        },
        ChatwootSyncLifecycle,
      ],
    };
  }
}
