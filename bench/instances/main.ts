/**
 * bench/instances: memory per connected instance. N instances connected to the simulator through one
 * session worker (our stack: Postgres auth state, leases, the worker's bookkeeping), next to N bare
 * Baileys sockets with in-memory auth connected to the same simulator in a plain process. Each side
 * runs in a process of its own so that its RSS is its own; the simulator runs in a third.
 *
 *   npm run bench -- instances [--n 200] [--only bare|ours|hibernated] [--hibernated <h>] [--snapshot <path>] [--bare-buffer-pool <bytes>]
 *   npm run bench -- instances --activity [--history 1000] [--contacts 200] [--groups 50] [--per-minute 1] [--warm-up-minutes 2] [--soak-minutes 30]
 *
 * Connecting: each side's time to have all N connected (`connectSeconds`) and its CPU per instance meanwhile
 * (`connectCpuMs`), compared in `connect` (goal: ours ≤ 1.1 × bare's time); `--cpu-profile <path>` writes a
 * CPU profile of each side's connect window.
 *
 * Prints one JSON object. Goal: ours ≤ 1.2 × bare per instance. Each side's growth is split into
 * JS heap, ArrayBuffers and native memory (`perInstance`, see docs/adr/0016 for what is in each).
 *
 * `--hibernated <h>` (uazapi 2.1.1's hibernation): a third process, a session worker warmed by
 * connecting and hibernating 3 instances (so code compiled and modules loaded on the first connect
 * are not counted), measured without more (`withoutMb`), then with h more paired instances connected,
 * then once they are hibernated through the worker's `hibernate` op (what POST /instance/hibernate
 * asks). Goal then also: a hibernated instance keeps ≤ 5% of the JS heap a connected one holds.
 *
 * `--activity` (issue #38): the instances at work, each with a history, contacts, groups and a steady
 * message a minute both ways, bare doing the same (./activity.ts). Goal: the same ratio, measured after
 * the warm-up; with `--soak-minutes`, also each side's RSS growth over the soak ≤ 5 %.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { writeHeapSnapshot } from 'node:v8';
import pino from 'pino';
import { answerQuestions, ask, loadBetween, loadMark, windowProfiler } from '../support/processes';
import { openBareSockets, provisionDevices } from '../support/sim-clients';
import { type ActivityDevices, activityOptions, type Soak, soak, startTraffic, type TrafficStats, setupActivityDevices } from './activity';

type Role = 'orchestrate' | 'sim' | 'bare' | 'ours' | 'hibernated';

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
  /** CPU of the side's process while connecting, ms per connected instance (load-insensitive, unlike connectSeconds). */
  connectCpuMs: number;
  /** Buffer.poolSize when measured (the session worker lowers Node 24's 64 KiB; see docs/adr/0016). */
  bufferPoolSize: number;
  /** Where the growth went, KB per connected instance (after − baseline, divided by `connected`). */
  perInstance: Breakdown;
  /** `--activity`: the history's arrival, the traffic during warm-up and soak, and the soak's RSS samples. */
  activity?: { historySeconds: number; historyMessages: number; traffic: TrafficStats; soak?: Soak };
}

/** KB per instance: the JS heap (used, and reserved but unused), ArrayBuffers (Buffers), and the rest of the anonymous RSS (malloc: native objects, TLS/zlib/crypto state, freed-but-kept arenas). */
interface Breakdown {
  heapUsedKb: number;
  heapFreeKb: number;
  arrayBuffersKb: number;
  /** RssAnon − V8 heap − ArrayBuffers: native memory (malloc) and what the allocator keeps. */
  nativeKb: number;
  /** File-backed RSS (code pages of node and its libraries touched since the baseline). */
  fileKb: number;
}

const roleGiven = process.argv[2] !== undefined && !process.argv[2].startsWith('--');
const role = (roleGiven ? process.argv[2] : 'orchestrate') as Role;
const args = new Map<string, string>();
for (let i = roleGiven ? 3 : 2; i < process.argv.length; i += 2) {
  // A flag (`--activity`) takes no value.
  if (process.argv[i + 1] === undefined || process.argv[i + 1].startsWith('--')) {
    args.set(process.argv[i].replace(/^--/, ''), 'true');
    i--;
  } else args.set(process.argv[i].replace(/^--/, ''), process.argv[i + 1]);
}
const N = Number(args.get('n') ?? 200);
const HIBERNATED = Number(args.get('hibernated') ?? 0);
const ACTIVITY = args.get('activity') === 'true' ? activityOptions(args) : undefined;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
type Gc = (options?: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;
const gc = () => (global as unknown as { gc?: Gc }).gc?.();
const gcCompacting = () => (global as unknown as { gc?: Gc }).gc?.({ type: 'major', execution: 'sync', flavor: 'last-resort' });
const mb = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;

interface Memory {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  arrayBuffers: number;
  rssAnon: number;
  rssFile: number;
}

/** RssAnon and RssFile of this process (Linux; zeros elsewhere). */
function procStatus(): { rssAnon: number; rssFile: number } {
  try {
    const text = readFileSync('/proc/self/status', 'utf8');
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0) * 1024;
    return { rssAnon: kb('RssAnon'), rssFile: kb('RssFile') + kb('RssShmem') };
  } catch {
    return { rssAnon: 0, rssFile: 0 };
  }
}

/** Memory at a settled point: full GCs with pauses between them, the same on both sides. */
async function settledMemory(): Promise<Memory> {
  for (let i = 0; i < 3; i++) {
    gc();
    await sleep(300);
  }
  // A last-resort collection compacts the heap and gives its free pages back (V8's pooled pages too):
  // what V8 keeps committed after ordinary collections depends on when they ran (13–140 KB per
  // instance from run to run, and up to 130 MB of pooled pages), noise in a comparison of what each
  // side holds. Both sides are measured this way, before connecting and once settled.
  gcCompacting();
  await sleep(300);
  const usage = process.memoryUsage();
  return { rss: usage.rss, heapUsed: usage.heapUsed, heapTotal: usage.heapTotal, arrayBuffers: usage.arrayBuffers, ...procStatus() };
}

function breakdown(before: Memory, after: Memory, count: number): Breakdown {
  const kb = (bytes: number) => Math.round(bytes / 1024 / Math.max(1, count));
  const native = (m: Memory) => m.rssAnon - m.heapTotal - m.arrayBuffers;
  return {
    heapUsedKb: kb(after.heapUsed - before.heapUsed),
    heapFreeKb: kb(after.heapTotal - after.heapUsed - (before.heapTotal - before.heapUsed)),
    arrayBuffersKb: kb(after.arrayBuffers - before.arrayBuffers),
    nativeKb: kb(native(after) - native(before)),
    fileKb: kb(after.rssFile - before.rssFile),
  };
}

/**
 * With `--snapshot <path>`, heap snapshots of each side before connecting and once settled
 * (`<path>.<side>[.base].heapsnapshot`). Writing one costs native memory: RSS figures of such a run are off.
 */
function snapshot(side: string): void {
  const path = args.get('snapshot');
  if (path) writeHeapSnapshot(`${path}.${side}.heapsnapshot`);
}

/** With `--cpu-profile <path>`, a CPU profile of each side's connect window (`<path>.<side>.cpuprofile`, open in Chrome DevTools). */
async function connectWindow(): Promise<{ stop(side: string, connected: number): Promise<number> }> {
  const profiler = args.get('cpu-profile') ? windowProfiler() : undefined;
  await profiler?.start();
  const from = loadMark();
  return {
    async stop(side, connected) {
      const { cpuMs } = loadBetween(from, loadMark());
      await profiler?.stop(`${args.get('cpu-profile')}.${side}.cpuprofile`);
      return Math.round((cpuMs / Math.max(1, connected)) * 10) / 10;
    },
  };
}

function send(message: unknown): void {
  process.send?.(message);
}

// --- the simulator process ------------------------------------------------------------------------

async function runSim(): Promise<void> {
  const { startSimulator } = await import('@gw/wa-sim');
  const sim = await startSimulator({ logLevel: 'silent', phoneDecrypt: false, initialPrekeyCount: 1000, media: false });
  if (ACTIVITY) {
    const options = ACTIVITY;
    answerQuestions({ 'activity-setup': (data) => setupActivityDevices(sim.sim, String(data.prefix), N, options) });
  }
  send({ websocketUrl: sim.websocketUrl, controlUrl: sim.controlUrl, rootPublicKey: sim.rootPublicKey } satisfies SimInfo);
  process.on('disconnect', () => void sim.stop().finally(() => process.exit(0)));
}

// --- bare Baileys ---------------------------------------------------------------------------------

async function runBare(sim: SimInfo, given?: ActivityDevices): Promise<SideResult> {
  const baileys = await import('@whiskeysockets/baileys');
  // `--bare-buffer-pool <bytes>`: bare under the buffer pool our worker sets (what it would gain).
  if (args.get('bare-buffer-pool')) Buffer.poolSize = Number(args.get('bare-buffer-pool'));
  baileys.WA_CERT_DETAILS.PUBLIC_KEY = Buffer.from(sim.rootPublicKey, 'base64');
  const devices = given?.devices ?? (await provisionDevices(sim, N, '5531'));
  const logger = pino({ level: 'silent' });
  const baseline = await settledMemory();
  snapshot('bare.base');
  const connecting = await connectWindow();
  const started = Date.now();
  let historyMessages = 0;
  let historyAt = Date.now();
  const { sockets, open } = await openBareSockets(baileys, devices, sim.websocketUrl, logger, (sock) => {
    if (!given) return;
    sock.ev.on('messaging-history.set', ({ messages }) => {
      historyMessages += messages.length;
      historyAt = Date.now();
    });
  });
  const connectSeconds = (Date.now() - started) / 1000;
  const connectCpuMs = await connecting.stop('bare', open);
  let activity: SideResult['activity'];
  let after: Memory;
  if (given && ACTIVITY) {
    const options = ACTIVITY;
    const deadline = Date.now() + options.historyTimeoutSeconds * 1000;
    while (historyMessages < open * options.history && Date.now() < deadline) await sleep(500);
    const historySeconds = (historyAt - started) / 1000 - connectSeconds;
    const traffic = startTraffic(sim, devices, given.peers, options.perMinute, async (index, peer, text) => {
      await sockets[index].sendMessage(peer.jid, { text });
    });
    await sleep(options.warmUpMinutes * 60_000);
    after = await settledMemory();
    snapshot('bare');
    const soaked = await soak(options.soakMinutes, after.rss, async () => (await settledMemory()).rss);
    activity = { historySeconds, historyMessages, traffic: await traffic.stop(), soak: soaked };
  } else {
    await sleep(3000);
    after = await settledMemory();
    snapshot('bare');
  }
  return {
    connected: open,
    baselineRssMb: mb(baseline.rss),
    rssMb: mb(after.rss),
    heapUsedMb: mb(after.heapUsed),
    perInstanceKb: Math.round((after.rss - baseline.rss) / 1024 / Math.max(1, open)),
    connectSeconds,
    connectCpuMs,
    bufferPoolSize: Buffer.poolSize,
    perInstance: breakdown(baseline, after, open),
    ...(activity ? { activity } : {}),
  };
}

// --- our session worker ---------------------------------------------------------------------------

async function runOurs(sim: SimInfo, databaseUrl: string, given?: ActivityDevices): Promise<SideResult> {
  const { openDatabase } = await import('@gw/persistence');
  const { InProcessBus } = await import('@gw/bus');
  const { SessionWorker, sessionWorkerConfig } = await import('@gw/sessions');
  const { Subjects } = await import('@gw/contracts');
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const dataSource = await openDatabase({ url: databaseUrl, schema, poolSize: 10 });
  try {
    const devices = given?.devices ?? (await provisionDevices(sim, N, '5532'));
    const ids: string[] = [];
    // Instances that are paired and want a session: exactly what a worker adopts after a failover.
    for (const [index, device] of devices.entries()) {
      const id = `rbench${String(index).padStart(8, '0')}`;
      ids.push(id);
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
    const baseline = await settledMemory();
    snapshot('ours.base');
    const connecting = await connectWindow();
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
      await sleep(100);
    }
    const connectSeconds = (Date.now() - started) / 1000;
    const connectCpuMs = await connecting.stop('ours', connected);
    let activity: SideResult['activity'];
    let after: Memory;
    if (given && ACTIVITY) {
      const options = ACTIVITY;
      // The history is in once every instance's messages are rows (no traffic yet: nothing else writes messages).
      const deadline = Date.now() + options.historyTimeoutSeconds * 1000;
      let historyMessages = 0;
      while (Date.now() < deadline) {
        const [{ n }]: Array<{ n: number }> = await dataSource.query(`SELECT count(*)::int AS n FROM messages`);
        historyMessages = n;
        if (historyMessages >= connected * options.history) break;
        await sleep(1000);
      }
      const historySeconds = (Date.now() - started) / 1000 - connectSeconds;
      let sent = 0;
      const traffic = startTraffic(sim, devices, given.peers, options.perMinute, async (index, peer, text) => {
        sent++;
        const messageId = `3EB0${randomBytes(9).toString('hex').toUpperCase()}`;
        await bus.request(
          Subjects.instance(ids[index], 'send'),
          {
            instanceId: ids[index],
            recordId: `r${randomBytes(4).toString('hex').slice(0, 7)}`,
            messageId,
            chatJid: peer.jid,
            content: { kind: 'text', text, linkPreview: null },
            record: { sendFunction: '/send/text', sendPayload: { number: peer.phone, text }, trackSource: '', trackId: `bench-${sent}`, sendFolderId: '' },
          },
          { timeoutMs: 30_000 },
        );
      });
      await sleep(options.warmUpMinutes * 60_000);
      after = await settledMemory();
      snapshot('ours');
      const soaked = await soak(options.soakMinutes, after.rss, async () => (await settledMemory()).rss);
      activity = { historySeconds, historyMessages, traffic: await traffic.stop(), soak: soaked };
    } else {
      await sleep(3000);
      after = await settledMemory();
      snapshot('ours');
    }
    await worker.stop();
    await bus.close();
    return {
      connected,
      baselineRssMb: mb(baseline.rss),
      rssMb: mb(after.rss),
      heapUsedMb: mb(after.heapUsed),
      perInstanceKb: Math.round((after.rss - baseline.rss) / 1024 / Math.max(1, connected)),
      connectSeconds,
      connectCpuMs,
      bufferPoolSize: Buffer.poolSize,
      perInstance: breakdown(baseline, after, connected),
      ...(activity ? { activity } : {}),
    };
  } finally {
    await dataSource.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await dataSource.destroy();
  }
}

// --- hibernated instances on our session worker ----------------------------------------------------

/** The worker without the h instances, with them connected, and with them hibernated (KB per instance against `without`). */
interface HibernatedResult {
  count: number;
  hibernated: number;
  withoutRssMb: number;
  connectedRssMb: number;
  hibernatedRssMb: number;
  /** KB per instance while connected, and once hibernated (RSS; the allocator may keep freed pages). */
  perConnectedKb: number;
  perHibernatedKb: number;
  /** The same for the JS heap (used): what the worker still holds for a hibernated instance. */
  heapPerConnectedKb: number;
  heapPerHibernatedKb: number;
  hibernateSeconds: number;
}

const WARM_UP = 3;

async function runHibernated(sim: SimInfo, databaseUrl: string): Promise<HibernatedResult> {
  const { openDatabase } = await import('@gw/persistence');
  const { InProcessBus } = await import('@gw/bus');
  const { Subjects } = await import('@gw/contracts');
  const { SessionWorker, sessionWorkerConfig } = await import('@gw/sessions');
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const dataSource = await openDatabase({ url: databaseUrl, schema, poolSize: 10 });
  const count = async (status: string, ids: string[]) =>
    ((await dataSource.query(`SELECT count(*)::int AS n FROM instances WHERE status = $1 AND id = ANY($2)`, [status, ids])) as Array<{ n: number }>)[0].n;
  const until = async (status: string, ids: string[]) => {
    const deadline = Date.now() + 600_000;
    while (Date.now() < deadline && (await count(status, ids)) < ids.length) await sleep(250);
    return count(status, ids);
  };
  try {
    const devices = await provisionDevices(sim, HIBERNATED + WARM_UP, '5533');
    const ids = devices.map((_, index) => `hbench${String(index).padStart(8, '0')}`);
    for (const [index, device] of devices.entries()) {
      // Paired; only the warm-up ones want a session at first.
      await dataSource.query(`INSERT INTO instances (id, token, name, desired_state, paired, owner) VALUES ($1, $2, $3, $4, true, $5)`, [
        ids[index],
        `tok-${ids[index]}`,
        `hbench-${index}`,
        index < WARM_UP ? 'connected' : 'disconnected',
        device.phone,
      ]);
      await dataSource.query(`INSERT INTO auth_creds (instance_id, value) VALUES ($1, $2)`, [ids[index], JSON.stringify(device.creds)]);
    }
    const bus = new InProcessBus();
    const worker = new SessionWorker({
      dataSource,
      bus,
      logger: pino({ level: 'silent' }),
      config: sessionWorkerConfig({
        workerId: 'bench-hibernated',
        capacity: HIBERNATED + WARM_UP,
        reconcileIntervalMs: 500,
        simulator: { websocketUrl: sim.websocketUrl, rootPublicKey: Buffer.from(sim.rootPublicKey, 'base64') },
      }),
    });
    const hibernate = async (some: string[]) => {
      for (let i = 0; i < some.length; i += 20)
        await Promise.all(some.slice(i, i + 20).map((id) => bus.request(Subjects.instance(id, 'hibernate'), { instanceId: id }, { timeoutMs: 30_000 })));
      return until('hibernated', some);
    };
    await worker.start();
    const warm = ids.slice(0, WARM_UP);
    const measured = ids.slice(WARM_UP);
    await until('connected', warm);
    await hibernate(warm);
    await sleep(3000);
    const without = await settledMemory();
    snapshot('hibernated.without');
    await dataSource.query(`UPDATE instances SET desired_state = 'connected' WHERE id = ANY($1)`, [measured]);
    const connected = await until('connected', measured);
    await sleep(3000);
    const withConnected = await settledMemory();
    const started = Date.now();
    const hibernated = await hibernate(measured);
    const hibernateSeconds = (Date.now() - started) / 1000;
    await sleep(3000);
    const withHibernated = await settledMemory();
    snapshot('hibernated.with');
    await worker.stop();
    await bus.close();
    const kb = (bytes: number) => Math.round(bytes / 1024 / Math.max(1, measured.length));
    return {
      count: connected,
      hibernated,
      withoutRssMb: mb(without.rss),
      connectedRssMb: mb(withConnected.rss),
      hibernatedRssMb: mb(withHibernated.rss),
      perConnectedKb: kb(withConnected.rss - without.rss),
      perHibernatedKb: kb(withHibernated.rss - without.rss),
      heapPerConnectedKb: kb(withConnected.heapUsed - without.heapUsed),
      heapPerHibernatedKb: kb(withHibernated.heapUsed - without.heapUsed),
      hibernateSeconds,
    };
  } finally {
    await dataSource.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await dataSource.destroy();
  }
}

const HIBERNATED_GOAL = 'hibernated.heapPerHibernatedKb <= 0.05 * hibernated.heapPerConnectedKb';
function hibernatedMet(result: HibernatedResult): boolean {
  return result.count === HIBERNATED && result.hibernated === HIBERNATED && result.heapPerHibernatedKb <= 0.05 * result.heapPerConnectedKb;
}

// --- orchestration --------------------------------------------------------------------------------

function child(roleName: Role, extra: string[] = []): ChildProcess {
  const passed = [
    'snapshot',
    'bare-buffer-pool',
    'hibernated',
    'activity',
    'history',
    'contacts',
    'groups',
    'per-minute',
    'warm-up-minutes',
    'soak-minutes',
    'peers',
    'history-timeout',
    'cpu-profile',
  ].flatMap((name) => (args.has(name) ? [`--${name}`, args.get(name) as string] : []));
  return fork(process.argv[1], [roleName, '--n', String(N), ...passed, ...extra], {
    execArgv: ['--expose-gc'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

function firstMessage<T>(proc: ChildProcess): Promise<T> {
  return new Promise((resolve, reject) => {
    proc.once('message', (message) => resolve(message as T));
    proc.once('exit', (code) => reject(new Error(`child exited with ${code} before answering`)));
  });
}

/** The environment that changes how native memory is kept (glibc tunables, a preloaded allocator). */
function allocatorEnv(): Record<string, string> {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => /^(MALLOC_|GLIBC_TUNABLES$|LD_PRELOAD$)/.test(name))) as Record<string, string>;
}

async function orchestrate(): Promise<void> {
  const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const simProcess = child('sim');
  const sim = await firstMessage<SimInfo>(simProcess);
  try {
    // One after the other: the two sides must not compete for the two cores while connecting.
    // (`--only bare|ours` runs one side, for looking into it; the ratio needs both.)
    const only = args.get('only');
    const runSide = async <T = SideResult>(side: 'bare' | 'ours' | 'hibernated', extra: string[]): Promise<T | null> => {
      if (only && only !== side) return null;
      // `--activity`: the simulator makes the side's accounts, peers, groups and histories, and the side gets their devices.
      const devices =
        ACTIVITY && side !== 'hibernated'
          ? await ask<ActivityDevices>(simProcess, 'activity-setup', { prefix: side === 'bare' ? '5531' : '5532' }, 1_800_000)
          : undefined;
      const proc = child(side, ['--sim', JSON.stringify(sim), ...extra]);
      const result = devices ? await ask<T>(proc, 'run', { devices: devices.devices, peers: devices.peers }, 24 * 3_600_000) : await firstMessage<T>(proc);
      proc.kill();
      return result;
    };
    const bare = await runSide('bare', []);
    const ours = await runSide('ours', ['--db', databaseUrl]);
    const hibernated = HIBERNATED > 0 ? await runSide<HibernatedResult>('hibernated', ['--db', databaseUrl]) : null;
    if (!bare || !ours) {
      // `--only hibernated`: its own goal (it needs no bare baseline).
      const hibernatedGoal = hibernated ? { hibernated, goal: HIBERNATED_GOAL, met: hibernatedMet(hibernated) } : {};
      process.stdout.write(`${JSON.stringify({ bench: 'instances', instances: N, node: process.version, bare, ours, ...hibernatedGoal })}\n`);
      return;
    }
    const soakMet = (side: SideResult) => !side.activity?.soak || side.activity.soak.growthPct <= 5;
    process.stdout.write(
      `${JSON.stringify({
        bench: 'instances',
        instances: N,
        node: process.version,
        ...(ACTIVITY ? { activity: ACTIVITY } : {}),
        // Both sides inherit the environment: an allocator setting applies to both or to neither.
        allocatorEnv: allocatorEnv(),
        bare,
        ours,
        ratio: Math.round((ours.perInstanceKb / Math.max(1, bare.perInstanceKb)) * 100) / 100,
        // Connecting (issue #38), a goal of its own: the time to have every instance connected, and the CPU it took each side.
        connect: {
          ratio: Math.round((ours.connectSeconds / bare.connectSeconds) * 100) / 100,
          cpuRatio: Math.round((ours.connectCpuMs / Math.max(0.1, bare.connectCpuMs)) * 100) / 100,
          goal: 'ours.connectSeconds <= 1.1 * bare.connectSeconds',
          met: ours.connectSeconds <= 1.1 * bare.connectSeconds && ours.connected === N,
        },
        ...(hibernated ? { hibernated } : {}),
        goal: `ours.perInstanceKb <= 1.2 * bare.perInstanceKb${hibernated ? ` && ${HIBERNATED_GOAL}` : ''}${ACTIVITY?.soakMinutes ? ' && each side.activity.soak.growthPct <= 5' : ''}`,
        met:
          ours.perInstanceKb <= 1.2 * bare.perInstanceKb &&
          ours.connected === N &&
          bare.connected === N &&
          (!hibernated || hibernatedMet(hibernated)) &&
          soakMet(ours) &&
          soakMet(bare),
      })}\n`,
    );
  } finally {
    simProcess.disconnect();
  }
}

async function main(): Promise<void> {
  if (role === 'sim') return runSim();
  if (ACTIVITY && (role === 'bare' || role === 'ours')) {
    // Traffic makes libsignal rotate sessions, which it prints in full: off the bench's stdout (its JSON).
    (await import('@gw/wa-sim')).quietLibsignalConsole();
    const sim = JSON.parse(args.get('sim') as string) as SimInfo;
    answerQuestions({
      run: (data) =>
        role === 'bare' ? runBare(sim, data as unknown as ActivityDevices) : runOurs(sim, args.get('db') as string, data as unknown as ActivityDevices),
    });
    return;
  }
  if (role === 'bare') {
    send(await runBare(JSON.parse(args.get('sim') as string) as SimInfo));
    return;
  }
  if (role === 'hibernated') {
    send(await runHibernated(JSON.parse(args.get('sim') as string) as SimInfo, args.get('db') as string));
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
