import type { Bus } from '@gw/bus';
import type { Database } from '@gw/persistence';
import { createLogger, EnvReader } from '@gw/platform';
import { SessionWorkerModule } from '@gw/sessions';
import { embeddedServices } from './embedded-services';

describe('embeddedServices', () => {
  it('loads the session worker with the other services and configures them from the environment', async () => {
    const modules = await embeddedServices({
      dataSource: {} as Database,
      bus: {} as Bus,
      logger: createLogger('embedded-services-spec', 'silent'),
      env: new EnvReader({ WORKER_ID: 'spec-worker' }),
    });

    expect(modules.map((module) => module.module.name)).toEqual([
      'SessionWorkerModule',
      'WebhookRelayModule',
      'ChatwootSyncModule',
      'DispatchModule',
      'RetentionModule',
      'ChatbotModule',
    ]);
    // The class the lazy import resolved is the session worker library's own.
    expect(modules[0].module).toBe(SessionWorkerModule);
  });
});
