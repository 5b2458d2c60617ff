import { NatsBus } from '@gw/bus';
import { createChatbotServices, readChatbotConfig } from '@gw/chatbot';
import { openDatabase } from '@gw/persistence';
import { createLogger, EnvReader } from '@gw/platform';
import { chatbotRepositories } from './chatbot-repositories';

/**
 * A chatbot runner in a process of its own, for the crash test (killed with SIGKILL mid-round).
 * Env: DATABASE_URL, DB_SCHEMA, NATS_URL, CHATBOT_RUNNER_ID and the chatbot's own variables.
 * Tells its parent `ready` once it runs, then `planned:<roundId>` / `finished:<roundId>`.
 */
async function main(): Promise<void> {
  const env = new EnvReader(process.env);
  const dataSource = await openDatabase({ url: env.string('DATABASE_URL'), schema: env.string('DB_SCHEMA'), poolSize: 3 });
  const bus = await NatsBus.connect(env.string('NATS_URL'), env.string('CHATBOT_RUNNER_ID'));
  const { runner } = createChatbotServices(
    chatbotRepositories(dataSource),
    bus,
    readChatbotConfig(env),
    createLogger('chatbot-child', process.env.TEST_LOG_LEVEL ?? 'silent'),
  );
  runner.onRoundFinished = (timing) => process.send?.(`finished:${timing.roundId}`);
  runner.start();
  process.send?.('ready');
}

main().catch((error) => {
  process.stderr.write(`chatbot runner child failed: ${(error as Error).stack}\n`);
  process.exit(1);
});
