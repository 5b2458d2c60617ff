/**
 * bench/instances: memory per connected instance. N instances connected to the simulator through one
 * session worker (our stack: Postgres auth state, leases, the worker's bookkeeping), next to N bare
 * Baileys sockets with in-memory auth connected to the same simulator in a plain process. Each side
 * runs in a process of its own so that its RSS is its own; the simulator runs in a third.
 *
 *   npm run bench -- instances [--n 200]
 *
 * Prints one JSON object. Goal: ours ≤ 1.2 × bare per instance.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { openBareSockets, provisionDevices } from '../support/sim-clients';

type Role = 'orchestrate' | 'sim' | 'bare' | 'ours';

interface SimInfo {
  websocketUrl: string;
  controlUrl: string;
  rootPublicKey: string;
}

interface SideResult {
  connected: number;
  baselineRssMb: number;
  rssMb: number;
  heapUsedMb: number;
  perInstanceKb: number;
  connectSeconds: number;
}

const roleGiven = process.argv[2] !== undefined && !process.argv[2].startsWith('--');
const role = (roleGiven ? process.argv[2] : 'orchestrate') as Role;
const args = new Map<string, string>();
for (let i = roleGiven ? 3 : 2; i < process.argv.length; i += 2) args.set(process.argv[i].replace(/^--/, ''), process.argv[i + 1]);
const N = Number(args.get('n') ?? 200);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const gc = () => (global as unknown as { gc?: () => void }).gc?.();
const mb = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;

async function settledRss(): Promise<{ rss: number; heapUsed: number }> {
  for (let i = 0; i < 3; i++) {
    gc();
    await sleep(300);
  }
  const usage = process.memoryUsage();
  return { rss: usage.rss, heapUsed: usage.heapUsed };
}

function send(message: unknown): void {
  process.send?.(message);
}

// --- the simulator process ------------------------------------------------------------------------

async function runSim(): Promise<void> {
  const { startSimulator } = await import('@gw/wa-sim');
  const sim = await startSimulator({ logLevel: 'silent', phoneDecrypt: false, initialPrekeyCount: 1000, media: false });
  send({ websocketUrl: sim.websocketUrl, controlUrl: sim.controlUrl, rootPublicKey: sim.rootPublicKey } satisfies SimInfo);
  process.on('disconnect', () => void sim.stop().finally(() => process.exit(0)));
}

// --- bare Baileys ---------------------------------------------------------------------------------

async function runBare(sim: SimInfo): Promise<SideResult> {
  const baileys = await import('@whiskeysockets/baileys');
  baileys.WA_CERT_DETAILS.PUBLIC_KEY = Buffer.from(sim.rootPublicKey, 'base64');
  const devices = await provisionDevices(sim, N, '5531');
  const logger = pino({ level: 'silent' });
  const baseline = await settledRss();
  const started = Date.now();
  const { open } = await openBareSockets(baileys, devices, sim.websocketUrl, logger);
  const connectSeconds = (Date.now() - started) / 1000;
  await sleep(3000);
  const after = await settledRss();
  return {
    connected: open,
    baselineRssMb: mb(baseline.rss),
    rssMb: mb(after.rss),
    heapUsedMb: mb(after.heapUsed),
    perInstanceKb: Math.round((after.rss - baseline.rss) / 1024 / Math.max(1, open)),
    connectSeconds,
  };
}

// --- our session worker ---------------------------------------------------------------------------

async function runOurs(sim: SimInfo, databaseUrl: string): Promise<SideResult> {
  const { openDatabase } = await import('@gw/persistence');
  const { InProcessBus } = await import('@gw/bus');
  const { SessionWorker, sessionWorkerConfig } = await import('@gw/sessions');
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const dataSource = await openDatabase({ url: databaseUrl, schema, poolSize: 10 });
  try {
    const devices = await provisionDevices(sim, N, '5532');
    // Instances that are paired and want a session: exactly what a worker adopts after a failover.
    for (const [index, device] of devices.entries()) {
      const id = `rbench${String(index).padStart(8, '0')}`;
      await dataSource.query(`INSERT INTO instances (id, token, name, desired_state, paired, owner) VALUES ($1, $2, $3, 'connected', true, $4)`, [
        id,
        `tok-${id}`,
        `bench-${index}`,
        device.phone,
      ]);
      await dataSource.query(`INSERT INTO auth_creds (instance_id, value) VALUES ($1, $2)`, [id, JSON.stringify(device.creds)]);
    }
    const bus = new InProcessBus();
    const logger = pino({ level: 'silent' });
    const baseline = await settledRss();
    const started = Date.now();
    const worker = new SessionWorker({
      dataSource,
      bus,
      logger,
      config: sessionWorkerConfig({
        workerId: 'bench-worker',
        capacity: N,
        simulator: { websocketUrl: sim.websocketUrl, rootPublicKey: Buffer.from(sim.rootPublicKey, 'base64') },
      }),
    });
    await worker.start();
    let connected = 0;
    const deadline = Date.now() + 600_000;
    while (Date.now() < deadline) {
      const [{ n }]: Array<{ n: number }> = await dataSource.query(`SELECT count(*)::int AS n FROM instances WHERE status = 'connected'`);
      connected = n;
      if (connected >= N) break;
      await sleep(500);
    }
    const connectSeconds = (Date.now() - started) / 1000;
    await sleep(3000);
    const after = await settledRss();
    await worker.stop();
    await bus.close();
    return {
      connected,
      baselineRssMb: mb(baseline.rss),
      rssMb: mb(after.rss),
      heapUsedMb: mb(after.heapUsed),
      perInstanceKb: Math.round((after.rss - baseline.rss) / 1024 / Math.max(1, connected)),
      connectSeconds,
    };
  } finally {
    await dataSource.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await dataSource.destroy();
  }
}

// --- orchestration --------------------------------------------------------------------------------

function child(roleName: Role, extra: string[] = []): ChildProcess {
  return fork(process.argv[1], [roleName, '--n', String(N), ...extra], { execArgv: ['--expose-gc'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
}

function firstMessage<T>(proc: ChildProcess): Promise<T> {
  return new Promise((resolve, reject) => {
    proc.once('message', (message) => resolve(message as T));
    proc.once('exit', (code) => reject(new Error(`child exited with ${code} before answering`)));
  });
}

async function orchestrate(): Promise<void> {
  const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const simProcess = child('sim');
  const sim = await firstMessage<SimInfo>(simProcess);
  try {
    // One after the other: the two sides must not compete for the two cores while connecting.
    const bareProcess = child('bare', ['--sim', JSON.stringify(sim)]);
    const bare = await firstMessage<SideResult>(bareProcess);
    bareProcess.kill();
    const oursProcess = child('ours', ['--sim', JSON.stringify(sim), '--db', databaseUrl]);
    const ours = await firstMessage<SideResult>(oursProcess);
    oursProcess.kill();
    process.stdout.write(
      `${JSON.stringify({
        bench: 'instances',
        instances: N,
        node: process.version,
        bare,
        ours,
        ratio: Math.round((ours.perInstanceKb / Math.max(1, bare.perInstanceKb)) * 100) / 100,
        goal: 'ours.perInstanceKb <= 1.2 * bare.perInstanceKb',
        met: ours.perInstanceKb <= 1.2 * bare.perInstanceKb && ours.connected === N && bare.connected === N,
      })}\n`,
    );
  } finally {
    simProcess.disconnect();
  }
}

async function main(): Promise<void> {
  if (role === 'sim') return runSim();
  if (role === 'bare') {
    send(await runBare(JSON.parse(args.get('sim') as string) as SimInfo));
    return;
  }
  if (role === 'ours') {
    send(await runOurs(JSON.parse(args.get('sim') as string) as SimInfo, args.get('db') as string));
    return;
  }
  await orchestrate();
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});
