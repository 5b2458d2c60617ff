/**
 * bench/chaos (issue 34, "Measured"): nothing lost, never twice, never stuck, every inbound message
 * stored, while the simulator plays WhatsApp's failure modes. N instances carry traffic both ways —
 * sync and async `POST /send/text`, a campaign (`/sender/advanced`) each, and messages their peers'
 * phones send them (`POST /sim/accounts/{phone}/send`) — while each mode of the table (CHAOS_MODES in
 * libs/testing/src/chaos.ts: how it is injected, cleared, and what recovery means) is injected in turn,
 * then all at once; then the reconnect storm: `--storm-instances` more instances on the same worker,
 * the server restarted under all of them, and again during the recovery.
 *
 *   npm run bench -- chaos [--instances 20] [--storm-instances 1000] [--modes a,b,…] [--interval 1000]
 *                          [--campaign 3] [--settle 90000] [--log error] [--sequential 0] [--all-at-once 0]
 *   npm run bench -- chaos --merge part1.json,part2.json,…   (a run in parts: one overall `met`)
 *
 * Processes: the simulator, the gateway (HTTP), one session worker, the dispatcher (async queue and
 * campaign scheduler), each its own, over real NATS (a subject prefix per run) and Postgres (a schema
 * per run); the orchestrator drives the traffic and reads the ledger. Every send carries a unique
 * text; at the end the phones' inboxes and the `messages` table are read: accepted (200 or queued)
 * and never at the phone nor Failed with a reason is lost; a text at a phone twice is duplicated;
 * Pending/Queued after the settle time is stuck. Recovery: from the fault's end to each affected
 * instance's first successful sync send. Goals: 0 lost, 0 duplicated, 0 stuck, 100 % of inbound
 * stored (content or placeholder), recovery p99 ≤ 30 s per mode and ≤ 60 s for the storm.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import type { ApiAnswer, ChaosInstance, ChaosModeRun, ChaosSend, ChaosTraffic } from '@gw/testing';
import { PrefixedBus, stopChild } from '../support/processes';
import { provisionDevices, simControl } from '../support/sim-clients';

type Role = 'orchestrate' | 'sim' | 'gateway' | 'worker' | 'dispatcher';

interface SimInfo {
  websocketUrl: string;
  controlUrl: string;
  rootPublicKey: string;
}

interface Setup {
  databaseUrl: string;
  schema: string;
  prefix: string;
  sim: SimInfo;
}

const roleGiven = process.argv[2] !== undefined && !process.argv[2].startsWith('--');
const role = (roleGiven ? process.argv[2] : 'orchestrate') as Role;
const args = new Map<string, string>();
for (let i = roleGiven ? 3 : 2; i < process.argv.length; i += 2) args.set(process.argv[i].replace(/^--/, ''), process.argv[i + 1]);
const INSTANCES = Number(args.get('instances') ?? 20);
const STORM = Number(args.get('storm-instances') ?? 1000);
const INTERVAL_MS = Number(args.get('interval') ?? 1_000);
const CAMPAIGN = Number(args.get('campaign') ?? 3);
const SETTLE_MS = Number(args.get('settle') ?? 90_000);
const MODE_GOAL_S = 30;
const STORM_GOAL_S = 60;
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (line: string) => process.stderr.write(`[chaos:${role}] ${line}\n`);

/** The children's logs: silent unless `--log <level>` (then on stderr). */
function childLogger() {
  const level = args.get('log');
  return level ? pino({ level }, pino.destination(2)) : pino({ level: 'silent' });
}

async function openBus(name: string, prefix: string) {
  const { NatsBus } = await import('@gw/bus');
  return new PrefixedBus(await NatsBus.connect(NATS_URL, name), prefix);
}

// --- the simulator, the gateway, the worker and the dispatcher, each a process ---------------------

async function runSim(): Promise<void> {
  const { startSimulator } = await import('@gw/wa-sim');
  const sim = await startSimulator({ logLevel: 'silent', initialPrekeyCount: 1000, media: false });
  process.send?.({ websocketUrl: sim.websocketUrl, controlUrl: sim.controlUrl, rootPublicKey: sim.rootPublicKey } satisfies SimInfo);
  process.on('disconnect', () => void sim.stop().finally(() => process.exit(0)));
}

async function runGateway(setup: Setup): Promise<void> {
  const { openDatabase } = await import('@gw/persistence');
  const { EnvReader } = await import('@gw/platform');
  const { loadGatewayConfig } = await import('../../apps/gateway/src/runtime/gateway-config');
  const { createHttpApp } = await import('../../apps/gateway/src/http-app');
  const dataSource = await openDatabase({ url: setup.databaseUrl, schema: setup.schema, poolSize: 10 });
  const bus = await openBus('bench-chaos-gateway', setup.prefix);
  const config = loadGatewayConfig(
    new EnvReader({ DATABASE_URL: setup.databaseUrl, NATS_URL, PORT: '0', LOG_LEVEL: 'silent', RPC_TIMEOUT_MS: '30000', RATE_LIMIT_INSTANCE: '1000000/s' }),
    [],
  );
  const app = await createHttpApp({ config, dataSource, bus, logger: childLogger() as never });
  await app.listen({ port: 0, host: '127.0.0.1' });
  process.send?.({ baseUrl: `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}` });
  process.on('disconnect', () => process.exit(0));
}

async function runWorker(setup: Setup): Promise<void> {
  const { openDatabase } = await import('@gw/persistence');
  const { SessionWorker, sessionWorkerConfig } = await import('@gw/sessions');
  const dataSource = await openDatabase({ url: setup.databaseUrl, schema: setup.schema, poolSize: 10 });
  const bus = await openBus('bench-chaos-worker', setup.prefix);
  const worker = new SessionWorker({
    dataSource,
    bus,
    logger: childLogger() as never,
    config: sessionWorkerConfig({
      workerId: `chaos-${setup.prefix}`,
      capacity: INSTANCES + STORM + 10,
      simulator: { websocketUrl: setup.sim.websocketUrl, rootPublicKey: Buffer.from(setup.sim.rootPublicKey, 'base64') },
      // Where a session learns the current WhatsApp Web version after a 405 (the client-outdated mode).
      waVersionUrl: `${setup.sim.controlUrl}/sim/wa-version`,
    }),
  });
  await worker.start();
  process.send?.({ started: true });
  process.on('disconnect', () => {
    setTimeout(() => process.exit(1), 25_000).unref();
    void worker.stop().finally(() => process.exit(0));
  });
}

async function runDispatcher(setup: Setup): Promise<void> {
  const { openDatabase, CampaignRepository, ChatRepository, InstanceRepository, LeaseRepository, SendLimitRepository, SendQueueRepository } =
    await import('@gw/persistence');
  const { AsyncDispatcher, ASYNC_DISPATCHER_DEFAULTS, CampaignScheduler, CAMPAIGN_SCHEDULER_DEFAULTS } = await import('@gw/dispatch');
  const dataSource = await openDatabase({ url: setup.databaseUrl, schema: setup.schema, poolSize: 10 });
  const bus = await openBus('bench-chaos-dispatcher', setup.prefix);
  const logger = childLogger() as never;
  // As DispatchModule builds them (apps/dispatcher), with the production defaults.
  const dispatcher = new AsyncDispatcher(
    new SendQueueRepository(dataSource),
    new InstanceRepository(dataSource),
    new ChatRepository(dataSource),
    bus,
    { ...ASYNC_DISPATCHER_DEFAULTS, dispatcherId: `chaos-${setup.prefix}` },
    logger,
    new LeaseRepository(dataSource),
    new SendLimitRepository(dataSource),
  );
  const campaigns = new CampaignScheduler(new CampaignRepository(dataSource), bus, CAMPAIGN_SCHEDULER_DEFAULTS, logger);
  dispatcher.start();
  campaigns.start();
  process.send?.({ started: true });
  process.on('disconnect', () => process.exit(0));
}

// --- orchestration --------------------------------------------------------------------------------

function child(roleName: Role, setup?: Setup): ChildProcess {
  const passed = [...args.entries()].flatMap(([key, value]) => [`--${key}`, value]);
  // Their stdout is not ours: libsignal prints there, and ours carries the one JSON object.
  return fork(process.argv[1], [roleName, ...passed, ...(setup ? ['--setup', JSON.stringify(setup)] : [])], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
}

function firstMessage<T>(proc: ChildProcess): Promise<T> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`child exited with ${code} before answering`));
    proc.once('exit', onExit);
    proc.once('message', (message) => {
      proc.off('exit', onExit);
      resolve(message as T);
    });
  });
}

async function orchestrate(): Promise<void> {
  const chaos = await import('@gw/testing');
  const { openDatabase } = await import('@gw/persistence');
  const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const tag = randomBytes(3).toString('hex');
  const schema = `bench_chaos_${tag}`;
  const dataSource = await openDatabase({ url: databaseUrl, schema, poolSize: 4 });
  const query = <T>(sql: string, parameters?: unknown[]): Promise<T[]> => dataSource.query(sql, parameters);
  const processes: ChildProcess[] = [];
  const started = Date.now();
  try {
    const simProcess = child('sim');
    processes.push(simProcess);
    const sim = await firstMessage<SimInfo>(simProcess);
    const setup: Setup = { databaseUrl, schema, prefix: `chaos${tag}.`, sim };
    const control = <T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown) => simControl<T>(sim, method, path, body);

    // Instances linked without a QR (as after a failover): paired, wanting a session.
    const addInstances = async (count: number, prefix: string, label: string) => {
      const devices = await provisionDevices(sim, count, prefix);
      const rows: Array<{ id: string; token: string; phone: string }> = [];
      for (const [index, device] of devices.entries()) {
        const id = `r${label}${tag}${String(index).padStart(5, '0')}`;
        await query(`INSERT INTO instances (id, token, name, desired_state, paired, owner) VALUES ($1, $2, $3, 'connected', true, $4)`, [
          id,
          `tok-${id}`,
          `${label}-${index}`,
          device.phone,
        ]);
        await query(`INSERT INTO auth_creds (instance_id, value) VALUES ($1, $2)`, [id, JSON.stringify(device.creds)]);
        rows.push({ id, token: `tok-${id}`, phone: device.phone });
      }
      return rows;
    };
    const base = await addInstances(INSTANCES, '5535', 'chaos');

    const gatewayProcess = child('gateway', setup);
    const workerProcess = child('worker', setup);
    const dispatcherProcess = child('dispatcher', setup);
    processes.push(gatewayProcess, workerProcess, dispatcherProcess);
    const { baseUrl } = await firstMessage<{ baseUrl: string }>(gatewayProcess);
    await Promise.all([firstMessage(workerProcess), firstMessage(dispatcherProcess)]);

    const gateway = async (method: 'GET' | 'POST', path: string, token: string, body?: unknown) => {
      const response = await fetch(`${baseUrl}${path}`, {
        method,
        headers: { 'content-type': 'application/json', token },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(60_000),
      });
      const text = await response.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // kept as text
      }
      return { status: response.status, body: parsed as ApiAnswer['body'] };
    };
    const allConnected = async (ids: string[], timeoutMs: number) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const [{ n }] = await query<{ n: number }>(`SELECT count(*)::int AS n FROM instances WHERE id = ANY($1::text[]) AND status = 'connected'`, [ids]);
        if (n >= ids.length) return true;
        if (Date.now() > deadline) return false;
        await sleep(500);
      }
    };
    if (
      !(await allConnected(
        base.map((i) => i.id),
        180_000,
      ))
    )
      throw new Error('not every instance connected');

    // Each instance's peer: a phone it has a chat with (the warm-up sends one each way).
    let contacts = 0;
    const newContact = async () => {
      const phone = `5536${tag.slice(0, 2).replace(/\D/g, '1').padEnd(2, '0')}${String(++contacts).padStart(6, '0')}`;
      await control('POST', '/sim/accounts', { phone });
      return phone;
    };
    const instances: Array<ChaosInstance> = [];
    for (const row of base) {
      const [{ jid }] = await control<Array<{ jid: string }>>('GET', `/sim/devices?phone=${row.phone}`);
      instances.push({ ...row, device: jid, peer: await newContact() });
    }
    await Promise.all(
      instances.map(async (instance) => {
        await gateway('POST', '/send/text', instance.token, { number: instance.peer, text: `warm-up ${instance.id}` });
        await control('POST', `/sim/accounts/${instance.peer}/send`, { to: instance.phone, text: `warm-up ${instance.id}` });
      }),
    );
    log(`${INSTANCES} instances connected and warmed up in ${Math.round((Date.now() - started) / 1000)} s`);

    const traffic: ChaosTraffic = {
      control,
      controlUrl: sim.controlUrl,
      gateway,
      newContact,
      reconnect: async (instance) => {
        await gateway('POST', '/instance/connect', instance.token, {});
      },
      intervalMs: INTERVAL_MS,
      campaignSize: CAMPAIGN,
      recoveryTimeoutMs: 120_000,
      sends: [],
      inbound: [],
      log,
    };
    const wanted = args.get('modes')?.split(',');
    const modes = chaos.CHAOS_MODES.filter((mode) => !wanted || wanted.includes(mode.name));
    const plan = chaos.chaosPlan(modes, instances);
    const phases: Array<{ name: string; runs: ChaosModeRun[]; settled: boolean; seconds: number }> = [];
    const between = async () => {
      await control('DELETE', '/sim/faults');
      if (
        !(await allConnected(
          base.map((i) => i.id),
          90_000,
        ))
      ) {
        log('not every instance connected again after the phase: connecting them');
        for (const instance of instances) await traffic.reconnect(instance);
        await allConnected(
          base.map((i) => i.id),
          60_000,
        );
      }
    };
    // `--sequential 0` / `--all-at-once 0` leave those phases out: a run in parts (docs/bench/chaos.md),
    // whose outputs `--merge` puts together.
    const entries = [
      ...(args.get('sequential') === '0' ? [] : plan.sequential.map((step) => ({ name: step.mode.name, steps: [step] }))),
      ...(args.get('all-at-once') === '0' || plan.allAtOnce.length === 0 ? [] : [{ name: 'all-at-once', steps: plan.allAtOnce }]),
    ];
    const atSettle = new Map<string, Record<string, unknown>>();
    for (const entry of entries) {
      const phaseStarted = Date.now();
      const runs = await chaos.runChaosPhase(traffic, instances, entry.steps, entry.name);
      const trafficEnded = Date.now();
      // Only the phase's own sends and inbound messages: one an earlier phase left unsettled is counted
      // there (it used to hold every later phase for its whole settle time and be blamed on them).
      const mine = { sends: traffic.sends.filter((s) => s.mode === entry.name), inbound: traffic.inbound.filter((m) => m.mode === entry.name) };
      const settled = await chaos.settleChaos(query, mine, SETTLE_MS);
      const settleS = Math.round((Date.now() - trafficEnded) / 1000);
      phases.push({ name: entry.name, runs, settled, seconds: Math.round((Date.now() - phaseStarted) / 1000) });
      log(`${entry.name}: ${settled ? 'settled' : 'NOT settled'} in ${Math.round((Date.now() - phaseStarted) / 1000)} s (${settleS} s after its traffic)`);
      // The phase's figures on stderr as soon as it is over (a run cut short still leaves them).
      const recoveryMs = new Map(runs.flatMap((run) => [...run.recoveryMs].map(([instance, ms]) => [`${run.mode} ${instance}`, ms] as const)));
      const phaseTally = await chaos.tallyChaos(
        query,
        await chaos.arrivals(
          control,
          mine.sends.map((send) => send.to),
        ),
        mine,
        { recoveryMs },
      );
      // What was still missing or stuck when the settle time ran out; the final figures say whether it came later (late) or never (lost).
      atSettle.set(entry.name, {
        settled,
        settleS,
        lost: phaseTally.lost,
        stuck: phaseTally.stuck,
        inboundMissing: phaseTally.inbound.missing,
        inboundNotAccounted: phaseTally.inbound.sent - phaseTally.inbound.withContent - phaseTally.inbound.placeholder,
      });
      log(`${entry.name}: ${JSON.stringify({ ...phaseTally, met: chaos.chaosMet(phaseTally, MODE_GOAL_S) })}`);
      await between();
    }

    // The reconnect storm: every instance on the one worker, the server restarted twice.
    const storm = STORM > 0 ? await stormPhase(addInstances, allConnected, control, gateway, query, base) : null;

    const counts = await chaos.arrivals(control, [...traffic.sends.map((send) => send.to), ...(storm?.peers ?? [])]);
    const results: Record<string, unknown> = {};
    let allMet = true;
    for (const phase of phases) {
      const mine = { sends: traffic.sends.filter((s) => s.mode === phase.name), inbound: traffic.inbound.filter((m) => m.mode === phase.name) };
      const skipped = phase.runs.filter((run) => run.skipped);
      if (phase.runs.length === skipped.length) {
        results[phase.name] = { skipped: skipped[0]?.skipped };
        continue;
      }
      const recoveryMs = new Map<string, number>();
      for (const run of phase.runs) for (const [instance, ms] of run.recoveryMs) recoveryMs.set(`${run.mode} ${instance}`, ms);
      const tally = await chaos.tallyChaos(query, counts, mine, { recoveryMs });
      // Met: the goals at the end of the run, and settled within the settle time (a message that came
      // only during a later phase was late, not on time).
      const met = chaos.chaosMet(tally, MODE_GOAL_S) && phase.settled;
      allMet &&= met;
      results[phase.name] = {
        ...tally,
        seconds: phase.seconds,
        atSettle: atSettle.get(phase.name),
        ...(skipped.length ? { skipped: skipped.map((run) => run.mode) } : {}),
        met,
      };
    }
    let stormResult: Record<string, unknown> | null = null;
    if (storm) {
      const tally = await chaos.tallyChaos(query, counts, { sends: storm.sends, inbound: [] }, { recoveryMs: storm.recoveryMs });
      const met = chaos.chaosMet(tally, STORM_GOAL_S) && storm.connectedAfter === storm.instances;
      allMet &&= met;
      stormResult = { ...tally, instances: storm.instances, connectedAfter: storm.connectedAfter, handshakePeak: storm.handshakePeak, met };
    }
    process.stdout.write(
      `${JSON.stringify({
        bench: 'chaos',
        instances: INSTANCES,
        stormInstances: STORM,
        node: process.version,
        intervalMs: INTERVAL_MS,
        campaignPerInstance: CAMPAIGN,
        settleMs: SETTLE_MS,
        seconds: Math.round((Date.now() - started) / 1000),
        modes: Object.fromEntries(modes.map((mode) => [mode.name, { inject: mode.inject, clear: mode.clear, recovery: mode.recovery }])),
        results,
        storm: stormResult,
        goal: `per mode: lost == 0, duplicated == 0, stuck == 0, inbound accounted 100 %, recovery p99 <= ${MODE_GOAL_S} s; storm recovery p99 <= ${STORM_GOAL_S} s`,
        met: allMet,
      })}\n`,
    );
  } finally {
    for (const proc of processes.reverse()) await Promise.race([stopChild(proc), sleep(5_000)]);
    for (const proc of processes) if (proc.exitCode === null) proc.kill('SIGKILL');
    // `--keep 1`: the run's schema stays, to look into.
    if (args.get('keep')) log(`schema ${schema} kept`);
    else await dataSource.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await dataSource.destroy();
  }
}

/**
 * The reconnect storm (issue 34, mode 7): `--storm-instances` more instances on the same worker, all
 * connected; the server restarted (every socket closed at once, 3 s away), and again 5 s after it came
 * back, while the sessions are still reconnecting. Recovery: from the second restart's end to each
 * instance's first sync send answered 200 (each instance sends once it is `connected`, and again every
 * 2 s until one is answered 200).
 */
async function stormPhase(
  addInstances: (count: number, prefix: string, label: string) => Promise<Array<{ id: string; token: string; phone: string }>>,
  allConnected: (ids: string[], timeoutMs: number) => Promise<boolean>,
  control: <T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown) => Promise<T>,
  gateway: (method: 'GET' | 'POST', path: string, token: string, body?: unknown) => Promise<ApiAnswer>,
  query: <T>(sql: string, parameters?: unknown[]) => Promise<T[]>,
  base: Array<{ id: string; token: string; phone: string }>,
) {
  const stormStarted = Date.now();
  const added = await addInstances(STORM, '5537', 'storm');
  const all = [...base, ...added];
  if (
    !(await allConnected(
      all.map((i) => i.id),
      900_000,
    ))
  )
    log('storm: not every instance connected before the storm');
  log(`storm: ${all.length} instances connected in ${Math.round((Date.now() - stormStarted) / 1000)} s`);
  const peers = Array.from({ length: 10 }, (_, i) => `5538${String(i).padStart(8, '0')}`);
  for (const phone of peers) await control('POST', '/sim/accounts', { phone });
  await control('DELETE', '/sim/handshakes');
  await control('POST', '/sim/faults', { kind: 'restart', downMs: 3_000 });
  await sleep(5_000);
  await control('POST', '/sim/faults', { kind: 'restart', downMs: 3_000 });
  const endedAt = Date.now();
  const sends: ChaosSend[] = [];
  const recoveryMs = new Map<string, number>();
  const deadline = endedAt + 300_000;
  let seq = 0;
  await Promise.all(
    all.map(async (instance, index) => {
      const peer = peers[index % peers.length];
      while (Date.now() < deadline) {
        const [row] = await query<{ status: string }>(`SELECT status FROM instances WHERE id = $1`, [instance.id]);
        if (row?.status === 'connected') {
          const text = `chaos storm ${instance.id} sync ${++seq}`;
          const startedAt = Date.now();
          const answer = await gateway('POST', '/send/text', instance.token, { number: peer, text }).catch((error: unknown) => ({
            status: 0,
            body: { error: String(error) },
          }));
          sends.push({
            mode: 'storm',
            instance: instance.id,
            kind: 'sync',
            to: peer,
            newChat: false,
            text,
            status: answer.status,
            startedAt,
            endedAt: Date.now(),
            ...(answer.status === 200 ? {} : { error: String(answer.body?.error ?? '').slice(0, 120) }),
          });
          if (answer.status === 200) {
            recoveryMs.set(instance.id, Date.now() - endedAt);
            return;
          }
        }
        await sleep(2_000);
      }
      recoveryMs.set(instance.id, NaN);
    }),
  );
  const { peak } = await control<{ peak?: number }>('GET', '/sim/handshakes');
  const [{ n }] = await query<{ n: number }>(`SELECT count(*)::int AS n FROM instances WHERE id = ANY($1::text[]) AND status = 'connected'`, [
    all.map((i) => i.id),
  ]);
  const { settleChaos } = await import('@gw/testing');
  await settleChaos(query, { sends, inbound: [] }, SETTLE_MS);
  return { instances: all.length, connectedAfter: n, handshakePeak: peak ?? null, sends, recoveryMs, peers };
}

/**
 * `--merge a.json,b.json,…`: the JSON objects of runs in parts (each `--modes` a share of the table,
 * `--sequential 0` / `--all-at-once 0` / `--storm-instances 0` leaving phases out) put together: every
 * mode of CHAOS_MODES measured on its own, an all-at-once phase of every mode, and the storm, each
 * `met`. Files are given oldest first: a phase measured again in a later part (after a fix) counts
 * with its latest measure, the earlier ones listed as `superseded`. Prints one JSON object with `met`
 * and what is `missing` for a complete run.
 */
async function mergeParts(files: string[]): Promise<void> {
  const { readFileSync } = await import('node:fs');
  const { CHAOS_MODES } = await import('@gw/testing');
  type Part = {
    results: Record<string, { met?: boolean; skipped?: unknown }>;
    storm: { met: boolean } | null;
    modes: Record<string, unknown>;
    instances: number;
    stormInstances: number;
  };
  const parts = files.map((file) => {
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    return { file, part: JSON.parse(lines[lines.length - 1]) as Part };
  });
  const phases: Record<string, Array<{ file: string; met: boolean; skipped?: unknown }>> = {};
  const storms: Array<{ file: string; instances: number; met: boolean }> = [];
  for (const { file, part } of parts) {
    for (const [name, result] of Object.entries(part.results)) {
      // An all-at-once phase of a share of the modes is not the table's all-at-once.
      const key = name === 'all-at-once' && Object.keys(part.modes).length < CHAOS_MODES.length ? `all-at-once(${Object.keys(part.modes).join(',')})` : name;
      (phases[key] ??= []).push({
        file,
        met: result.met === true,
        ...(result.skipped !== undefined && result.met === undefined ? { skipped: result.skipped } : {}),
      });
    }
    if (part.storm) storms.push({ file, instances: part.stormInstances, met: part.storm.met });
  }
  const wanted = [...CHAOS_MODES.map((mode) => mode.name), 'all-at-once'];
  const missing = [
    ...wanted.filter((name) => !phases[name] || phases[name].every((entry) => entry.skipped !== undefined)),
    ...(storms.length ? [] : ['storm']),
  ];
  const latest = (entries: Array<{ file: string; met: boolean }>) => entries[entries.length - 1];
  const superseded = Object.fromEntries(
    Object.entries(phases)
      .filter(([, entries]) => entries.length > 1)
      .map(([name, entries]) => [name, entries.slice(0, -1).map((entry) => ({ file: entry.file, met: entry.met }))]),
  );
  const met = missing.length === 0 && Object.values(phases).every((entries) => latest(entries).met) && (storms.length === 0 || latest(storms).met);
  process.stdout.write(
    `${JSON.stringify({
      bench: 'chaos',
      merged: parts.map(({ file, part }) => ({ file, instances: part.instances, stormInstances: part.stormInstances, modes: Object.keys(part.modes) })),
      phases: Object.fromEntries(Object.entries(phases).map(([name, entries]) => [name, { met: latest(entries).met, file: latest(entries).file }])),
      superseded,
      storm: storms,
      missing,
      goal: `every mode of the table on its own, all of them at once, and the storm, each met (lost == 0, duplicated == 0, stuck == 0, inbound accounted 100 %, settled within the settle time, recovery p99 <= ${MODE_GOAL_S} s, storm <= ${STORM_GOAL_S} s)`,
      met,
    })}\n`,
  );
}

async function main(): Promise<void> {
  if (args.has('merge')) return mergeParts((args.get('merge') as string).split(','));
  const setup = args.has('setup') ? (JSON.parse(args.get('setup') as string) as Setup) : undefined;
  if (role === 'sim') return runSim();
  if (role === 'gateway') return runGateway(setup as Setup);
  if (role === 'worker') return runWorker(setup as Setup);
  if (role === 'dispatcher') return runDispatcher(setup as Setup);
  await orchestrate();
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});
