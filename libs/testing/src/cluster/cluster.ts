/**
 * `npm run cluster` (issue #39) and bench/cluster: starts the processes `clusterPlan` describes on
 * loopback, each detached with its log under `<runDir>/logs`, waits until each answers its health
 * check, and keeps every PID in `<runDir>/state.json` so that `--stop` (or the bench) stops exactly
 * those processes. The bench also kills, restarts and asks who is primary through this class.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { execFileSync } from 'node:child_process';
import {
  clusterPlan,
  clusterPorts,
  type ClusterCounts,
  type ClusterPorts,
  type ClusterSecrets,
  type ComponentSpec,
  databaseUrl,
  DEFAULT_COUNTS,
  maskSecrets,
  natsUrl,
} from './config';

export interface ClusterStartOptions {
  runDir: string;
  repoRoot: string;
  basePort: number;
  counts?: ClusterCounts;
  distDir?: string;
  serviceEnv?: Record<string, string>;
  /** Progress lines (stderr by default). */
  log?: (line: string) => void;
}

/** What `state.json` holds for one process. */
export interface ProcessState {
  name: string;
  kind: ComponentSpec['kind'];
  pid: number;
  /** What /proc/<pid>/cmdline must contain for `--stop` to signal it (a PID reused by another program is left alone). */
  cmdlineMark: string;
  listens: string;
  log: string;
  startedAt: string;
}

export interface ClusterState {
  runDir: string;
  basePort: number;
  startedAt: string;
  /** Start order; `--stop` goes in reverse. */
  order: string[];
  processes: Record<string, ProcessState>;
  /** Passwords masked; the real ones are in `secrets.json` (mode 0600). */
  natsUrl: string;
  databaseUrl: string;
  gateways: string[];
  simControlUrl?: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether `pid` is alive and is still the program we started (its command line carries `mark`). */
export function isOurs(pid: number, mark: string): boolean {
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // A zombie has exited: nothing to stop.
    if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) return false;
    return cmdline.includes(mark);
  } catch {
    return false;
  }
}

function loadSecrets(runDir: string): ClusterSecrets {
  const file = join(runDir, 'secrets.json');
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as ClusterSecrets;
  const secret = () => randomBytes(18).toString('base64url');
  const secrets: ClusterSecrets = {
    natsPassword: secret(),
    natsRoutePassword: secret(),
    postgresPassword: secret(),
    replicationPassword: secret(),
    appPassword: secret(),
    adminToken: randomBytes(32).toString('hex'),
  };
  writeFileSync(file, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600 });
  return secrets;
}

/** uid/gid of the `postgres` system user when we are root (Postgres will not run as root). */
function postgresUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
  return { uid, gid };
}

function chownTree(path: string, owner: { uid: number; gid: number }): void {
  execFileSync('chown', ['-R', `${owner.uid}:${owner.gid}`, path]);
}

async function httpOk(url: string, timeoutMs = 1_000): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    await response.arrayBuffer();
    return response.status >= 200 && response.status < 300;
  } catch {
    return false;
  }
}

export class Cluster {
  readonly ports: ClusterPorts;
  readonly secrets: ClusterSecrets;
  readonly counts: ClusterCounts;
  private specs = new Map<string, ComponentSpec>();
  private state: ClusterState;
  private sim?: { websocketUrl: string; controlUrl: string; rootPublicKey: string };
  private readonly log: (line: string) => void;
  private readonly pgOwner = postgresUser();

  private constructor(private readonly options: ClusterStartOptions) {
    this.counts = options.counts ?? DEFAULT_COUNTS;
    this.ports = clusterPorts(options.basePort, this.counts);
    mkdirSync(join(options.runDir, 'logs'), { recursive: true });
    this.secrets = loadSecrets(options.runDir);
    this.log = options.log ?? ((line) => process.stderr.write(`[cluster] ${line}\n`));
    this.state = {
      runDir: options.runDir,
      basePort: options.basePort,
      startedAt: new Date().toISOString(),
      order: [],
      processes: {},
      natsUrl: this.mask(natsUrl(this.ports, this.secrets)),
      databaseUrl: this.mask(databaseUrl(this.ports, this.secrets)),
      gateways: this.ports.gateways.map((port) => `http://127.0.0.1:${port}`),
    };
    this.plan();
  }

  /** Starts everything and waits until every process is healthy. Refuses when a cluster of this run dir still runs. */
  static async start(options: ClusterStartOptions): Promise<Cluster> {
    const running = readState(options.runDir);
    if (running && Object.values(running.processes).some((p) => isOurs(p.pid, p.cmdlineMark)))
      throw new Error(`a cluster of ${options.runDir} is running; stop it first (npm run cluster -- --stop)`);
    const cluster = new Cluster(options);
    try {
      await cluster.startAll();
    } catch (error) {
      cluster.log(`start failed: ${(error as Error).message}; stopping what was started (logs in ${join(options.runDir, 'logs')})`);
      await cluster.stop();
      throw error;
    }
    return cluster;
  }

  /** The URLs with their passwords (for the bench in this process); the state file has them masked. */
  get natsUrl(): string {
    return natsUrl(this.ports, this.secrets);
  }

  databaseUrl(user: 'gateway' | 'postgres' = 'gateway', database = 'gateway'): string {
    return databaseUrl(this.ports, this.secrets, user, database);
  }

  get gatewayUrls(): string[] {
    return this.state.gateways;
  }

  get simulator(): { websocketUrl: string; controlUrl: string; rootPublicKey: string } {
    if (!this.sim) throw new Error('the simulator has not started');
    return this.sim;
  }

  names(kind?: ComponentSpec['kind']): string[] {
    return [...this.specs.values()].filter((spec) => !kind || spec.kind === kind).map((spec) => spec.name);
  }

  pid(name: string): number | undefined {
    return this.state.processes[name]?.pid;
  }

  /** Whether the process `name` runs (it may not be healthy yet). */
  alive(name: string): boolean {
    const process = this.state.processes[name];
    return process !== undefined && isOurs(process.pid, process.cmdlineMark);
  }

  private mask(text: string): string {
    return maskSecrets(text, this.secrets);
  }

  private plan(): void {
    for (const spec of clusterPlan({ ...this.options, counts: this.counts, secrets: this.secrets, sim: this.sim })) this.specs.set(spec.name, spec);
  }

  private async startAll(): Promise<void> {
    const started = Date.now();
    const group = async (names: string[], timeoutMs: number) => {
      await Promise.all(names.map((name) => this.startProcess(name)));
      await Promise.all(names.map((name) => this.waitHealthy(name, timeoutMs)));
    };
    this.log('NATS ×3 and etcd');
    await group([...this.names('nats'), 'etcd'], 30_000);
    this.log('Patroni: the first node bootstraps the primary');
    await this.startProcess('pg-1');
    await this.waitFor('pg-1 primary', () => httpOk(`http://127.0.0.1:${this.ports.postgres[0].rest}/primary`), 90_000);
    this.log('Patroni: the second node clones it as a synchronous standby');
    await this.startProcess('pg-2');
    await this.waitFor('pg-2 synchronous standby', () => httpOk(`http://127.0.0.1:${this.ports.postgres[1].rest}/sync`), 120_000);
    await group(['haproxy'], 15_000);
    await this.waitFor('Postgres through HAProxy', () => this.ensureDatabase(), 30_000);
    await group(['sim'], 30_000);
    this.sim = await this.readSimInfo();
    this.state.simControlUrl = this.sim.controlUrl;
    this.plan();
    // The first gateway migrates the schema; the others start after it on a migrated database.
    this.log('services: gateway-1 first (migrations), then the rest');
    await group(['gateway-1'], 120_000);
    await group(
      this.names().filter((name) => ['gateway', 'worker', 'dispatcher', 'relay'].includes(this.specs.get(name)!.kind) && name !== 'gateway-1'),
      180_000,
    );
    this.log(`all ${this.state.order.length} processes healthy in ${Math.round((Date.now() - started) / 1000)} s`);
  }

  /** The role and database the services use, as the superuser through HAProxy (idempotent). */
  private async ensureDatabase(): Promise<boolean> {
    const { Client } = await import('pg');
    const client = new Client({ connectionString: this.databaseUrl('postgres', 'postgres'), connectionTimeoutMillis: 2_000 });
    try {
      await client.connect();
      const password = this.secrets.appPassword.replace(/'/g, "''");
      const role = await client.query(`SELECT 1 FROM pg_roles WHERE rolname = 'gateway'`);
      await client.query(role.rowCount ? `ALTER ROLE gateway LOGIN PASSWORD '${password}'` : `CREATE ROLE gateway LOGIN PASSWORD '${password}'`);
      const database = await client.query(`SELECT 1 FROM pg_database WHERE datname = 'gateway'`);
      if (!database.rowCount) await client.query('CREATE DATABASE gateway OWNER gateway');
      await this.ensureStatementStatistics();
      return true;
    } catch {
      return false;
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  /**
   * pg_stat_statements in the services' database (the primary loads it, as a production server would): what
   * the statements cost, for an operator (`SELECT … FROM pg_stat_statements`) and for bench/cluster's figures
   * per round. Best effort: a server without the library (an older node) has none.
   */
  private async ensureStatementStatistics(): Promise<void> {
    const { Client } = await import('pg');
    const client = new Client({ connectionString: this.databaseUrl('postgres', 'gateway'), connectionTimeoutMillis: 2_000 });
    try {
      await client.connect();
      await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    } catch {
      // Not loaded (shared_preload_libraries) on this server: no statement figures.
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  private async readSimInfo(): Promise<{ websocketUrl: string; controlUrl: string; rootPublicKey: string }> {
    const file = this.state.processes.sim.log;
    for (let i = 0; i < 100; i++) {
      const line = readFileSync(file, 'utf8')
        .split('\n')
        .reverse()
        .find((text) => text.startsWith('{"ok":true'));
      if (line) return JSON.parse(line) as { websocketUrl: string; controlUrl: string; rootPublicKey: string };
      await sleep(200);
    }
    throw new Error('the simulator did not print its URLs');
  }

  /** Starts (or starts again) one process of the plan, detached, and records its PID. */
  async startProcess(name: string): Promise<number> {
    const spec = this.specs.get(name);
    if (!spec) throw new Error(`no process named ${name}`);
    if (this.alive(name)) throw new Error(`${name} already runs (pid ${this.pid(name)})`);
    const owner = spec.asPostgresUser ? this.pgOwner : undefined;
    for (const [file, content] of Object.entries(spec.files)) {
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, content, { mode: 0o600 });
      if (owner) chownSync(file, owner.uid, owner.gid);
    }
    if (spec.kind === 'patroni') {
      const dir = join(this.options.runDir, 'pg', name);
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      if (owner) chownTree(dir, owner);
    }
    if (spec.kind === 'nats') mkdirSync(join(this.options.runDir, 'nats', name), { recursive: true });
    const logFile = join(this.options.runDir, 'logs', `${name}.log`);
    const fd = openSync(logFile, 'a');
    const child = spawn(spec.command, spec.args, {
      detached: true,
      stdio: ['ignore', fd, fd],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: owner ? join(this.options.runDir, 'pg') : (process.env.HOME ?? '/tmp'), ...spec.env },
      cwd: this.options.repoRoot,
      ...(owner ?? {}),
    });
    closeSync(fd);
    child.unref();
    const pid = await new Promise<number>((resolve, reject) => {
      child.once('error', reject);
      child.once('spawn', () => resolve(child.pid as number));
    });
    if (!this.state.order.includes(name)) this.state.order.push(name);
    // The config file (or the built script) in the command line tells our process from a PID reused later.
    this.state.processes[name] = {
      name,
      kind: spec.kind,
      pid,
      cmdlineMark: spec.args.find((arg) => arg.startsWith(this.options.runDir) || arg.endsWith('.js')) ?? spec.command,
      listens: spec.listens,
      log: logFile,
      startedAt: new Date().toISOString(),
    };
    this.writeState();
    return pid;
  }

  async waitHealthy(name: string, timeoutMs: number): Promise<void> {
    const spec = this.specs.get(name)!;
    await this.waitFor(
      `${name} healthy`,
      async () => {
        if (!this.alive(name)) throw new Error(`${name} exited (log: ${this.state.processes[name]?.log})`);
        return httpOk(spec.healthUrl);
      },
      timeoutMs,
    );
  }

  async healthy(name: string): Promise<boolean> {
    return this.alive(name) && httpOk(this.specs.get(name)!.healthUrl);
  }

  private async waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`${what}: not within ${Math.round(timeoutMs / 1000)} s`);
      await sleep(250);
    }
  }

  /** The Patroni node whose REST API answers `/primary` with 200 (undefined during a failover). */
  async primary(): Promise<string | undefined> {
    for (const [index, p] of this.ports.postgres.entries()) if (await httpOk(`http://127.0.0.1:${p.rest}/primary`, 500)) return `pg-${index + 1}`;
    return undefined;
  }

  /** Whether node `name` is the synchronous standby. */
  async synchronousStandby(name: string): Promise<boolean> {
    const index = Number(name.split('-')[1]) - 1;
    return httpOk(`http://127.0.0.1:${this.ports.postgres[index].rest}/sync`, 500);
  }

  /** The PID of the Postgres server Patroni node `name` runs (its postmaster.pid), if any. */
  postmasterPid(name: string): number | undefined {
    try {
      const pid = Number(readFileSync(join(this.options.runDir, 'pg', name, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
      return Number.isInteger(pid) && pid > 0 ? pid : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * Sends `signal` to the process. For a Patroni node and SIGKILL, its Postgres goes too: the node
   * is lost as a machine is (Patroni alone killed would leave a primary running without its agent).
   */
  signal(name: string, signal: NodeJS.Signals): void {
    const state = this.state.processes[name];
    if (!state || !isOurs(state.pid, state.cmdlineMark)) throw new Error(`${name} does not run`);
    const postmaster = state.kind === 'patroni' && signal === 'SIGKILL' ? this.postmasterPid(name) : undefined;
    process.kill(state.pid, signal);
    if (postmaster && isOurs(postmaster, join(this.options.runDir, 'pg', name))) process.kill(postmaster, 'SIGKILL');
  }

  /** Waits until the process has exited (it may be our child or not). */
  async exited(name: string, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.alive(name)) {
      if (Date.now() > deadline) return false;
      await sleep(100);
    }
    return true;
  }

  /** SIGTERM, then SIGKILL if it has not exited within `graceMs`. */
  async stopProcess(name: string, graceMs = 30_000): Promise<void> {
    if (!this.alive(name)) return;
    this.signal(name, 'SIGTERM');
    if (!(await this.exited(name, graceMs))) {
      this.log(`${name} did not exit within ${graceMs / 1000} s of SIGTERM: SIGKILL`);
      this.signal(name, 'SIGKILL');
      await this.exited(name, 5_000);
    }
  }

  /** Stops every process this cluster started, last started first. */
  async stop(): Promise<void> {
    await stopFromState(this.state, this.log);
  }

  /** One line per process: name, PID, where it listens, its log. */
  table(): string {
    return formatTable(this.state);
  }

  private writeState(): void {
    writeFileSync(join(this.options.runDir, 'state.json'), `${JSON.stringify(this.state, null, 2)}\n`);
  }
}

export function readState(runDir: string): ClusterState | undefined {
  const file = join(runDir, 'state.json');
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as ClusterState) : undefined;
}

export function formatTable(state: ClusterState): string {
  const rows = state.order.map((name) => {
    const p = state.processes[name];
    return [name, String(p.pid), isOurs(p.pid, p.cmdlineMark) ? 'up' : 'down', p.listens];
  });
  const header = ['process', 'pid', 'state', 'listens'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => cell.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  return [
    line(header),
    ...rows.map(line),
    '',
    `NATS_URL=${state.natsUrl}`,
    `DATABASE_URL=${state.databaseUrl}`,
    `gateways: ${state.gateways.join(' ')}`,
    ...(state.simControlUrl ? [`simulator control API: ${state.simControlUrl}`] : []),
    `state: ${join(state.runDir, 'state.json')}; passwords and the admin token: ${join(state.runDir, 'secrets.json')}; logs: ${join(state.runDir, 'logs')}`,
  ].join('\n');
}

/**
 * `npm run cluster -- --stop`: SIGTERM to every process of the state file that is still the program
 * started (its command line checked), last started first, each given 30 s before SIGKILL; a
 * Postgres left running by a Patroni that died is stopped too. Nothing else is signalled.
 */
export async function stopFromState(state: ClusterState, log: (line: string) => void): Promise<void> {
  const alive = (p: ProcessState) => isOurs(p.pid, p.cmdlineMark);
  for (const name of [...state.order].reverse()) {
    const p = state.processes[name];
    const postmaster = p.kind === 'patroni' ? postmasterOf(state.runDir, name) : undefined;
    if (alive(p)) {
      process.kill(p.pid, 'SIGTERM');
      const deadline = Date.now() + 30_000;
      while (alive(p) && Date.now() < deadline) await sleep(100);
      if (alive(p)) {
        log(`${name} (pid ${p.pid}) did not exit within 30 s: SIGKILL`);
        process.kill(p.pid, 'SIGKILL');
      } else log(`${name} (pid ${p.pid}) stopped`);
    }
    if (postmaster && isOurs(postmaster, join(state.runDir, 'pg', name))) {
      log(`${name}: its Postgres (pid ${postmaster}) outlived Patroni: SIGTERM`);
      process.kill(postmaster, 'SIGTERM');
      const deadline = Date.now() + 15_000;
      while (isOurs(postmaster, join(state.runDir, 'pg', name)) && Date.now() < deadline) await sleep(100);
      if (isOurs(postmaster, join(state.runDir, 'pg', name))) process.kill(postmaster, 'SIGKILL');
    }
  }
}

function postmasterOf(runDir: string, name: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(runDir, 'pg', name, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}
