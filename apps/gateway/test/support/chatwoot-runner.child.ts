import 'reflect-metadata';
import { InProcessBus } from '@gw/bus';
import { ChatwootSync, type ChatwootSyncConfig } from '@gw/chatwoot';
import { ChatwootRepository, FileRepository, LidMappingRepository, openDatabase, OutboxCursorRepository } from '@gw/persistence';
import { createLogger, SsrfGuard } from '@gw/platform';

/**
 * The bridge's runner alone in a process of its own (the webhook relay's part of it), so a test can
 * kill -9 it mid-sync. argv: database URL, schema, sync config as JSON. Says `ready` on stdout.
 */
async function main(): Promise<void> {
  const [url, schema, configJson] = process.argv.slice(3);
  const dataSource = await openDatabase({ url, schema, poolSize: 3 });
  const config = JSON.parse(configJson) as Omit<ChatwootSyncConfig, 'ssrf'>;
  const sync = new ChatwootSync(
    new OutboxCursorRepository(dataSource),
    new ChatwootRepository(dataSource),
    new LidMappingRepository(dataSource),
    new FileRepository(dataSource),
    new InProcessBus(),
    { ...config, ssrf: new SsrfGuard(['127.0.0.0/8']) },
    createLogger('chatwoot-child', process.env.TEST_LOG_LEVEL ?? 'silent'),
  );
  sync.start();
  process.stdout.write('ready\n');
}

void main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
