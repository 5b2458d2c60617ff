import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../src/embedded-postgres';

async function selectOne(url: string): Promise<number> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ one: number }>('SELECT 1 AS one')).rows[0].one;
  } finally {
    await client.end();
  }
}

/** A pid that surely belongs to no process any more: a child that has exited. */
function deadPid(): number {
  return Number(spawnSync('sh', ['-c', 'echo $$'], { encoding: 'utf8' }).stdout.trim());
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((done) => {
    const probe = createServer();
    probe.once('error', () => done(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => done(true)));
  });
}

describe('startEmbeddedPostgres', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-embedded-pg-'));
  // Run as root, the server runs as the `postgres` user, which must reach the data directory.
  chmodSync(dataDir, 0o755);
  const port = 56000 + (process.pid % 1000);
  const started: EmbeddedDatabase[] = [];

  afterAll(async () => {
    for (const database of started) await database.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('should start after a first start failed on a busy port, and make a missing database again', async () => {
    const squatter: Server = createServer();
    await new Promise<void>((done) => squatter.listen(port, '127.0.0.1', done));
    try {
      await expect(startEmbeddedPostgres(dataDir, port)).rejects.toThrow(/EMBEDDED_POSTGRES_PORT/);
    } finally {
      await new Promise((done) => squatter.close(done));
    }
    // The next start recovers by itself (it used to fail with `database "gateway" does not exist`).
    const database = await startEmbeddedPostgres(dataDir, port);
    started.push(database);
    expect(await selectOne(database.url)).toBe(1);
    // A cluster whose database is gone (what such a start left before): made again on the next start.
    const admin = new Client({ connectionString: database.url.replace(/\/gateway$/, '/postgres') });
    await admin.connect();
    await admin.query('DROP DATABASE gateway');
    await admin.end();
    await database.stop();
    const again = await startEmbeddedPostgres(dataDir, port);
    started.push(again);
    expect(await selectOne(again.url)).toBe(1);
    await again.stop();
  }, 120_000);

  it('should create a cluster, serve it, and stop it', async () => {
    const database = await startEmbeddedPostgres(dataDir, port);
    started.push(database);
    expect(await selectOne(database.url)).toBe(1);
    await database.stop();
    await expect(selectOne(database.url)).rejects.toThrow();
  }, 120_000);

  it('should stop a server left behind by a killed gateway and start again', async () => {
    const orphan = await startEmbeddedPostgres(dataDir, port);
    // What kill -9 of the gateway leaves: the server runs on, and its owner is gone.
    writeFileSync(join(dataDir, 'embedded-postgres.owner'), `${deadPid()}\n`);
    const database = await startEmbeddedPostgres(dataDir, port);
    started.push(database);
    expect(await selectOne(database.url)).toBe(1);
    await orphan.stop(); // its process is already gone: a no-op
    expect(await selectOne(database.url)).toBe(1);
    await database.stop();
  }, 120_000);

  it('should refuse a data directory whose gateway still runs, naming it, unless asked to share it', async () => {
    const database = await startEmbeddedPostgres(dataDir, port);
    started.push(database);
    writeFileSync(join(dataDir, 'embedded-postgres.owner'), `${process.ppid}\n`);
    await expect(startEmbeddedPostgres(dataDir, port)).rejects.toThrow(`belongs to a gateway that is still running (pid ${process.ppid})`);
    // A one-off command (npm run admin-token) shares the running server and leaves it running.
    const shared = await startEmbeddedPostgres(dataDir, port, { shareRunning: true });
    expect(shared.url).toBe(database.url);
    await shared.stop();
    expect(await selectOne(database.url)).toBe(1);
    writeFileSync(join(dataDir, 'embedded-postgres.owner'), `${process.pid}\n`);
    await database.stop();
  }, 120_000);

  it('should not outlive a process that exits without stopping it', async () => {
    // ts-child.js compiles the child's TypeScript on require, as the gateway's crash tests do.
    const child = spawnSync(
      process.execPath,
      [join(__dirname, '../../../apps/gateway/test/support/ts-child.js'), join(__dirname, 'support/exit-without-stop.child.ts'), dataDir, String(port)],
      { encoding: 'utf8', timeout: 60_000 },
    );
    expect({ status: child.status, stderr: child.stderr }).toEqual({ status: 3, stderr: '' });
    const url = child.stdout.trim();
    expect(url).toContain(`:${port}/gateway`);
    // Postgres shuts down on the SIGINT the exit sent: soon nothing holds its port or its pid file.
    const deadline = Date.now() + 15_000;
    let stopped = false;
    while (!stopped && Date.now() < deadline) {
      stopped = !existsSync(join(dataDir, 'postgres', 'postmaster.pid')) && (await portIsFree(port));
      if (!stopped) await new Promise((done) => setTimeout(done, 100));
    }
    expect(stopped).toBe(true);
  }, 60_000);

  it('should name EMBEDDED_POSTGRES_PORT when the port is taken', async () => {
    const squatter: Server = createServer();
    await new Promise<void>((done) => squatter.listen(port, '127.0.0.1', done));
    try {
      await expect(startEmbeddedPostgres(dataDir, port)).rejects.toThrow(/port \d+ of the embedded PostgreSQL is in use.*EMBEDDED_POSTGRES_PORT/);
    } finally {
      await new Promise((done) => squatter.close(done));
    }
  }, 60_000);
});
