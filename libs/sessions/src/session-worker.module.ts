import { Inject, Injectable, Module, type BeforeApplicationShutdown, type DynamicModule, type OnApplicationBootstrap } from '@nestjs/common';
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
 * and a config; `app.enableShutdownHooks()` makes SIGTERM close sessions gracefully.
 *
 *   SessionWorkerModule.register({ dataSource, bus, config: sessionWorkerConfig({...}), logger })
 */
@Module({})
export class SessionWorkerModule {
  static register(options: SessionWorkerOptions): DynamicModule {
    return {
      module: SessionWorkerModule,
      providers: [{ provide: SESSION_WORKER, useFactory: () => new SessionWorker(options) }, SessionWorkerLifecycle],
      exports: [SESSION_WORKER],
    };
  }
}
