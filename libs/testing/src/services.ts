import { randomBytes } from 'node:crypto';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { openDatabase } from '@gw/persistence';
import { startEmbeddedPostgres } from '@gw/platform';
import type { DataSource } from 'typeorm';

/**
 * Where tests find their services (DESIGN.md "Testing"): DATABASE_URL / NATS_URL if set; else the
 * machine's own (Postgres on 127.0.0.1:5432 with trust auth, NATS on 127.0.0.1:4222); else
 * testcontainers where a Docker engine answers; else embedded Postgres, and NATS suites are skipped —
 * except in CI (`CI=true`) or with `REQUIRE_NATS=1`, where a missing NATS fails them (a suite that
 * skipped itself there would pass having tested nothing).
 */
let databaseUrlPromise: Promise<string> | undefined;
let natsUrlPromise: Promise<string | null> | undefined;

export function testDatabaseUrl(): Promise<string> {
  databaseUrlPromise ??= findDatabase();
  return databaseUrlPromise;
}

export function testNatsUrl(): Promise<string | null> {
  natsUrlPromise ??= findNats();
  return natsUrlPromise;
}

async function findDatabase(): Promise<string> {
  if (process.env.DATABASE_URL) return process.env.DATABASE_URL;
  for (const url of ['postgres://postgres@127.0.0.1:5432/test', 'postgres://postgres@127.0.0.1:5432/postgres']) {
    if (await canQuery(url)) return url;
  }
  const fromContainer = await startPostgresContainer();
  if (fromContainer) return fromContainer;
  const embedded = await startEmbeddedPostgres(join(tmpdir(), `gw-test-pg-${process.pid}`), 55432 + (process.pid % 1000));
  return embedded.url;
}

async function findNats(): Promise<string | null> {
  if (process.env.NATS_URL) return process.env.NATS_URL;
  if (await portOpen('127.0.0.1', 4222)) return 'nats://127.0.0.1:4222';
  const fromContainer = await startNatsContainer();
  if (fromContainer) return fromContainer;
  return noNats(process.env);
}

/** No NATS anywhere: null (its suites skip themselves, said once) — or, where skipping would hide it, an error. */
export function noNats(env: Record<string, string | undefined>): null {
  if (env.CI === 'true' || env.REQUIRE_NATS === '1')
    throw new Error(
      `NATS is required here (${env.CI === 'true' ? 'CI=true' : 'REQUIRE_NATS=1'}) and none answered: set NATS_URL or start one on 127.0.0.1:4222`,
    );
  process.stdout.write('NATS not available: suites that need NATS are skipped.\n');
  return null;
}

async function canQuery(url: string): Promise<boolean> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 1500 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

function portOpen(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port, timeout: 1000 });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => (socket.destroy(), resolve(false)));
  });
}

async function dockerAvailable(): Promise<boolean> {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { getContainerRuntimeClient } = require('testcontainers');
    await getContainerRuntimeClient();
    return true;
  } catch {
    return false;
  }
}

async function startPostgresContainer(): Promise<string | null> {
  if (!(await dockerAvailable())) return null;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { GenericContainer, Wait } = require('testcontainers');
  const container = await new GenericContainer('postgres:17-alpine')
    .withEnvironment({ POSTGRES_HOST_AUTH_METHOD: 'trust', POSTGRES_DB: 'test' })
    .withExposedPorts(5432)
    .withWaitStrategy(Wait.forLogMessage(/ready to accept connections/, 2))
    .start();
  return `postgres://postgres@${container.getHost()}:${container.getMappedPort(5432)}/test`;
}

async function startNatsContainer(): Promise<string | null> {
  if (!(await dockerAvailable())) return null;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { GenericContainer } = require('testcontainers');
  const container = await new GenericContainer('nats:2').withCommand(['-js']).withExposedPorts(4222).start();
  return `nats://${container.getHost()}:${container.getMappedPort(4222)}`;
}

export interface TestDatabase {
  url: string;
  schema: string;
  dataSource: DataSource;
  close(): Promise<void>;
}

/** A fresh, migrated schema of its own for one suite, dropped on close. */
export async function openTestDatabase(): Promise<TestDatabase> {
  const url = await testDatabaseUrl();
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const dataSource = await openDatabase({ url, schema, poolSize: 5 });
  return {
    url,
    schema,
    dataSource,
    close: async () => {
      await dataSource.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
      await dataSource.destroy();
    },
  };
}
