import { readChatbotConfig } from '@gw/chatbot';
import { ASYNC_DISPATCHER_DEFAULTS } from '@gw/dispatch';
import { createLogger, EnvReader } from '@gw/platform';
import { itRunsAsABackgroundService } from '@gw/testing';
import { startDispatcher } from '../src/runtime';

describe(startDispatcher.name, () => {
  itRunsAsABackgroundService((host) =>
    startDispatcher(
      {
        ...host,
        dispatch: { ...ASYNC_DISPATCHER_DEFAULTS, dispatcherId: 'runtime-test' },
        retention: { retentionDays: 7, intervalMs: 3_600_000 },
        chatbot: { ...readChatbotConfig(new EnvReader({})), runnerId: 'runtime-test' },
      },
      createLogger('dispatcher', 'silent'),
    ),
  );
});
