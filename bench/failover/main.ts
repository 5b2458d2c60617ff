/**
 * bench/failover: how long after `kill -9` of the session worker holding an instance sends work again.
 * Real NATS and Postgres; the simulator, the gateway and two session workers each in a process of its
 * own, so the holder can be SIGKILLed. A steady load of sync `POST /send/text` (one loop per instance,
 * each send awaited, then a pause) runs on every instance the victim holds; the victim is killed; the
 * bench follows the takeover in the database and the sends over HTTP until every instance has answered
 * a send started after the kill with 200. A fresh worker then replaces the victim for the next run.
 *
 *   npm run bench -- failover [--runs 5] [--instances 10] [--ttl 10000] [--interval 200]
 *
 * Prints one JSON object. The baseline, measured side by side in the same runs, is the lease: its TTL
 * and when the victim's leases actually moved and reconnected; the result is when sends succeed again
 * (p50 and max over the runs), and where the seconds go (lease expiry → takeover → reconnect → first
 * successful send). Every send carries a unique text; the simulated phone's inbox is read at the end:
 * a send answered 200 that never arrived is lost, a text that arrived twice was sent twice (both must
 * be 0). Goal: max recovery ≤ 15 s.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { provisionDevices, simControl } from '../support/sim-clients';

type Role = 'orchestrate' | 'sim' | 'gateway' | 'worker';

interface SimInfo {
  websocketUrl: string;
  controlUrl: string;
  rootPublicKey: string;
}

interface SendOutcome {
  instanceId: string;
  text: string;
  startedAt: number;
  endedAt: number;
  status: number;
  /** The answered record's status: Sent (the server acked), or Pending (relayed, no ack known). */
  recordStatus?: string;
  error?: string;
}

interface RunResult {
  run: number;
  instances: number;
  /** When the victim's leases lapsed (the last of them), after the kill. */
  leaseExpiryMs: number;
  /** When every one of them was held by another worker. */
  leasesMovedMs: number;
  /** When every one of them was connected again under its heir. */
  reconnectedMs: number;
  /** When the first send started after the kill answered 200 (any instance). */
  firstSuccessMs: number;
  /** When every instance had answered a send started after the kill with 200: sends work again. */
  recoveredMs: number;
  /** Sends in flight when the victim died: how long they took, and how they ended. */
  inFlightAtKill: { count: number; maxMs: number; statuses: Record<string, number> };
  /** Sends that failed after the kill, by answer. */
  failedAfterKill: Record<string, number>;
}

const roleGiven = process.argv[2] !== undefined && !process.argv[2].startsWith('--');
const role = (roleGiven ? process.argv[2] : 'orchestrate') as Role;
const args = new Map<string, string>();
for (let i = roleGiven ? 3 : 2; i < process.argv.length; i += 2) args.set(process.argv[i].replace(/^--/, ''), process.argv[i + 1]);
const RUNS = Number(args.get('runs') ?? 5);
const INSTANCES = Number(args.get('instances') ?? 10);
const TTL_MS = Number(args.get('ttl') ?? 10_000);
const INTERVAL_MS = Number(args.get('interval') ?? 200);
const GOAL_MS = 15_000;
const PEER = '553900000000';
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (line: string) => process.stderr.write(`[failover:${role}] ${line}\n`);
const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;
const seconds = (ms: number) => round(ms / 1000, 2);

function send(message: unknown): void {
  process.send?.(message);
}

// --- the simulator, the gateway and a worker, each a process --------------------------------------

async function runSim(): Promise<void> {
  const { startSimulator } = await import('@gw/wa-sim');
  const sim = await startSimulator({ logLevel: 'silent', initialPrekeyCount: 1000, media: false });
  const info: SimInfo = { websocketUrl: sim.websocketUrl, controlUrl: sim.controlUrl, rootPublicKey: sim.rootPublicKey };
  await simControl(info, 'POST', '/sim/accounts', { phone: PEER });
  send(info);
  process.on('disconnect', () => void sim.stop().finally(() => process.exit(0)));
}

async function runGateway(databaseUrl: string, schema: string): Promise<void> {
  const { openDatabase } = await import('@gw/persistence');
  const { NatsBus } = await import('@gw/bus');
  const { EnvReader } = await import('@gw/platform');
  const { loadGatewayConfig } = await import('../../apps/gateway/src/runtime/gateway-config');
  const { createHttpApp } = await import('../../apps/gateway/src/http-app');
  const dataSource = await openDatabase({ url: databaseUrl, schema, poolSize: 10 });
  const bus = await NatsBus.connect(NATS_URL, 'bench-failover-gateway');
  const config = loadGatewayConfig(
    new EnvReader({ DATABASE_URL: databaseUrl, NATS_URL, PORT: '0', LOG_LEVEL: 'silent', RPC_TIMEOUT_MS: '30000', RATE_LIMIT_INSTANCE: '1000000/s' }),
    [],
  );
  const app = await createHttpApp({ config, dataSource, bus, logger: pino({ level: 'silent' }) });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.getHttpServer().address() as { port: number };
  send({ baseUrl: `http://127.0.0.1:${address.port}` });
  process.on('disconnect', () => process.exit(0));
}

async function runWorker(sim: SimInfo, databaseUrl: string, schema: string, workerId: string): Promise<void> {
  const { openDatabase } = await import('@gw/persistence');
  const { NatsBus } = await import('@gw/bus');
  const { SessionWorker, sessionWorkerConfig } = await import('@gw/sessions');
  const dataSource = await openDatabase({ url: databaseUrl, schema, poolSize: 10 });
  const bus = await NatsBus.connect(NATS_URL, `bench-failover-${workerId}`);
  const worker = new SessionWorker({
    dataSource,
    bus,
    logger: pino({ level: 'silent' }),
    config: sessionWorkerConfig({
      workerId,
      capacity: INSTANCES,
      leaseTtlMs: TTL_MS,
      simulator: { websocketUrl: sim.websocketUrl, rootPublicKey: Buffer.from(sim.rootPublicKey, 'base64') },
    }),
  });
  await worker.start();
  send({ workerId });
  process.on('disconnect', () => process.exit(0));
}

// --- orchestration --------------------------------------------------------------------------------

function child(roleName: Role, extra: string[] = []): ChildProcess {
  const passed = ['--instances', String(INSTANCES), '--ttl', String(TTL_MS)];
  // Their stdout is not ours: libsignal prints there, and ours carries the one JSON object.
  return fork(process.argv[1], [roleName, ...passed, ...extra], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
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

type Query = <T>(sql: string, parameters?: unknown[]) => Promise<T[]>;

/** One sync send; any answer is recorded (a client-side limit of 60 s stands in for a hung request). */
async function sendOnce(baseUrl: string, token: string, instanceId: string, text: string): Promise<SendOutcome> {
  const startedAt = Date.now();
  try {
    const response = await fetch(`${baseUrl}/send/text`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', token },
      body: JSON.stringify({ number: PEER, text }),
      signal: AbortSignal.timeout(60_000),
    });
    const body = await response.text();
    return {
      instanceId,
      text,
      startedAt,
      endedAt: Date.now(),
      status: response.status,
      ...(response.status === 200 ? { recordStatus: String((JSON.parse(body) as { status?: unknown }).status) } : { error: body.slice(0, 120) }),
    };
  } catch (error) {
    return { instanceId, text, startedAt, endedAt: Date.now(), status: 0, error: String((error as Error).message) };
  }
}

async function oneRun(run: number, query: Query, baseUrl: string, workers: Map<string, ChildProcess>, outcomes: SendOutcome[]): Promise<RunResult> {
  const held = await query<{ worker_id: string; ids: string[] }>(
    `SELECT worker_id, array_agg(instance_id) AS ids FROM session_leases WHERE expires_at > now() GROUP BY worker_id ORDER BY count(*) DESC`,
  );
  const victimId = held[0].worker_id;
  const victimInstances = held[0].ids;
  const victim = workers.get(victimId)!;
  log(`run ${run}: killing ${victimId}, which holds ${victimInstances.length} of ${INSTANCES}`);

  // Steady load: one loop per instance of the victim.
  let loading = true;
  const loops = victimInstances.map(async (instanceId) => {
    for (let seq = 0; loading; seq++) {
      outcomes.push(await sendOnce(baseUrl, `tok-${instanceId}`, instanceId, `failover r${run} ${instanceId} s${seq}`));
      await sleep(INTERVAL_MS);
    }
  });
  await sleep(2_000);
  const before = await query<{ id: string; xmin: string }>(`SELECT id, xmin::text AS xmin FROM instances WHERE id = ANY($1)`, [victimInstances]);
  const xminAtKill = new Map(before.map((row) => [row.id, row.xmin]));
  const killAt = Date.now();
  victim.kill('SIGKILL');
  workers.delete(victimId);
  const [{ remaining }] = await query<{ remaining: number }>(
    `SELECT extract(epoch FROM max(expires_at) - now()) * 1000 AS remaining FROM session_leases WHERE instance_id = ANY($1)`,
    [victimInstances],
  );
  const leaseExpiryMs = Date.now() - killAt + Number(remaining);

  // Follow the takeover in the database, the sends over HTTP.
  let leasesMovedMs = NaN;
  let reconnectedMs = NaN;
  const deadline = killAt + 90_000;
  const recoveredAt = (): number | null => {
    let latest = 0;
    for (const instanceId of victimInstances) {
      const success = outcomes.find((o) => o.instanceId === instanceId && o.startedAt >= killAt && o.status === 200);
      if (!success) return null;
      latest = Math.max(latest, success.endedAt);
    }
    return latest;
  };
  while (Date.now() < deadline) {
    const rows = await query<{ id: string; worker_id: string | null; status: string; xmin: string }>(
      `SELECT i.id, l.worker_id, i.status, i.xmin::text AS xmin FROM instances i
       LEFT JOIN session_leases l ON l.instance_id = i.id AND l.expires_at > now() WHERE i.id = ANY($1)`,
      [victimInstances],
    );
    const moved = rows.filter((row) => row.worker_id && row.worker_id !== victimId);
    if (Number.isNaN(leasesMovedMs) && moved.length === victimInstances.length) leasesMovedMs = Date.now() - killAt;
    // The heir writes `connecting`, then `connected`: a new row version that says connected.
    if (
      Number.isNaN(reconnectedMs) &&
      moved.length === victimInstances.length &&
      moved.every((row) => row.status === 'connected' && row.xmin !== xminAtKill.get(row.id))
    )
      reconnectedMs = Date.now() - killAt;
    if (!Number.isNaN(reconnectedMs) && recoveredAt() !== null) break;
    await sleep(50);
  }
  await sleep(1_000);
  loading = false;
  await Promise.all(loops);

  const mine = outcomes.filter((o) => victimInstances.includes(o.instanceId));
  const inFlight = mine.filter((o) => o.startedAt < killAt && o.endedAt >= killAt);
  const after = mine.filter((o) => o.startedAt >= killAt);
  const firstSuccess = after.filter((o) => o.status === 200).sort((a, b) => a.endedAt - b.endedAt)[0];
  const tally = (list: SendOutcome[]) => {
    const counts: Record<string, number> = {};
    for (const o of list) {
      const key = o.status === 200 ? '200' : `${o.status} ${o.error ?? ''}`.trim();
      counts[key] = (counts[key] ?? 0) + 1;
    }
    return counts;
  };
  const recovered = recoveredAt();
  return {
    run,
    instances: victimInstances.length,
    leaseExpiryMs: Math.round(leaseExpiryMs),
    leasesMovedMs,
    reconnectedMs,
    firstSuccessMs: firstSuccess ? firstSuccess.endedAt - killAt : NaN,
    recoveredMs: recovered === null ? NaN : recovered - killAt,
    inFlightAtKill: { count: inFlight.length, maxMs: Math.max(0, ...inFlight.map((o) => o.endedAt - o.startedAt)), statuses: tally(inFlight) },
    failedAfterKill: tally(after.filter((o) => o.status !== 200)),
  };
}

async function orchestrate(): Promise<void> {
  const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const { openDatabase } = await import('@gw/persistence');
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const dataSource = await openDatabase({ url: databaseUrl, schema, poolSize: 4 });
  const query: Query = (sql, parameters) => dataSource.query(sql, parameters);
  const simProcess = child('sim');
  const processes: ChildProcess[] = [simProcess];
  const workers = new Map<string, ChildProcess>();
  let workerCount = 0;
  try {
    const sim = await firstMessage<SimInfo>(simProcess);
    // Instance ids unique per run of the bench: the NATS server may be shared.
    const tag = randomBytes(3).toString('hex');
    const devices = await provisionDevices(sim, INSTANCES, '5533');
    for (const [index, device] of devices.entries()) {
      const id = `rfo${tag}${String(index).padStart(4, '0')}`;
      await query(`INSERT INTO instances (id, token, name, desired_state, paired, owner) VALUES ($1, $2, $3, 'connected', true, $4)`, [
        id,
        `tok-${id}`,
        `failover-${index}`,
        device.phone,
      ]);
      await query(`INSERT INTO auth_creds (instance_id, value) VALUES ($1, $2)`, [id, JSON.stringify(device.creds)]);
    }
    const startWorker = async () => {
      const workerId = `fo-${tag}-w${++workerCount}`;
      const proc = child('worker', ['--sim', JSON.stringify(sim), '--db', databaseUrl, '--schema', schema, '--worker', workerId]);
      processes.push(proc);
      await firstMessage(proc);
      workers.set(workerId, proc);
    };
    const gatewayProcess = child('gateway', ['--db', databaseUrl, '--schema', schema]);
    processes.push(gatewayProcess);
    const { baseUrl } = await firstMessage<{ baseUrl: string }>(gatewayProcess);
    await Promise.all([startWorker(), startWorker()]);

    const allConnected = async (timeoutMs: number) => {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        const [{ n }] = await query<{ n: number }>(
          `SELECT count(*)::int AS n FROM instances i JOIN session_leases l ON l.instance_id = i.id AND l.expires_at > now() WHERE i.status = 'connected'`,
        );
        if (n >= INSTANCES) return true;
        await sleep(250);
      }
      return false;
    };
    if (!(await allConnected(120_000))) throw new Error('not every instance connected');
    const ids = (await query<{ id: string }>(`SELECT id FROM instances ORDER BY id`)).map((row) => row.id);
    // Warm-up: a send per instance sets up its Signal session with the peer (not counted).
    const outcomes: SendOutcome[] = [];
    const warm = await Promise.all(ids.map((id) => sendOnce(baseUrl, `tok-${id}`, id, `failover warm-up ${id}`)));
    log(`${INSTANCES} connected; warm-up ${warm.filter((o) => o.status === 200).length}/${INSTANCES} sent`);

    const runs: RunResult[] = [];
    for (let run = 1; run <= RUNS; run++) {
      const result = await oneRun(run, query, baseUrl, workers, outcomes);
      log(JSON.stringify(result));
      runs.push(result);
      await startWorker();
      if (!(await allConnected(60_000))) throw new Error('the instances did not all reconnect after the run');
    }

    // Every text the phone received, against every send answered 200.
    await sleep(3_000);
    const inbox = await simControl<Array<{ message: unknown }>>(sim, 'GET', `/sim/accounts/${PEER}/inbox`);
    const received = new Map<string, number>();
    for (const entry of inbox) {
      const marker = /failover r\d+ \w+ s\d+/.exec(JSON.stringify(entry.message))?.[0];
      if (marker) received.set(marker, (received.get(marker) ?? 0) + 1);
    }
    // Accepted: answered 200 with the server's ack (Sent). A 200 with Pending says "relayed, not
    // confirmed": a holder that died between marking the id relayed and writing it to the socket
    // leaves exactly that, and the heir answers it from the ledger without sending again.
    const answered = outcomes.filter((o) => o.status === 200 && o.text.startsWith('failover r'));
    const accepted = answered.filter((o) => o.recordStatus === 'Sent');
    const unconfirmed = answered.filter((o) => o.recordStatus !== 'Sent');
    const lost = accepted.filter((o) => !received.has(o.text)).length;
    const sentTwice = [...received.values()].filter((count) => count > 1).length;
    const failed = outcomes.filter((o) => o.status !== 200 && o.text.startsWith('failover r'));
    const deliveredDespiteError = failed.filter((o) => received.has(o.text)).length;

    const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
    const p50 = (values: number[]) => seconds(sorted(values)[Math.floor((values.length - 1) / 2)]);
    const max = (values: number[]) => seconds(Math.max(...values));
    const phase = (pick: (r: RunResult) => number) => p50(runs.map(pick));
    const recovered = runs.map((r) => r.recoveredMs);
    process.stdout.write(
      `${JSON.stringify({
        bench: 'failover',
        runs: RUNS,
        instances: INSTANCES,
        workers: 2,
        node: process.version,
        baseline: {
          leaseTtlS: seconds(TTL_MS),
          leaseExpiryS: { p50: phase((r) => r.leaseExpiryMs), max: max(runs.map((r) => r.leaseExpiryMs)) },
          leasesMovedS: { p50: phase((r) => r.leasesMovedMs), max: max(runs.map((r) => r.leasesMovedMs)) },
          reconnectedS: { p50: phase((r) => r.reconnectedMs), max: max(runs.map((r) => r.reconnectedMs)) },
        },
        sendsWorkAgainS: { p50: p50(recovered), max: max(recovered) },
        firstSuccessS: { p50: phase((r) => r.firstSuccessMs), max: max(runs.map((r) => r.firstSuccessMs)) },
        whereTheSecondsGo: {
          leaseExpiry: phase((r) => r.leaseExpiryMs),
          takeover: phase((r) => r.leasesMovedMs - r.leaseExpiryMs),
          reconnect: phase((r) => r.reconnectedMs - r.leasesMovedMs),
          firstSuccessfulSend: phase((r) => r.recoveredMs - r.reconnectedMs),
        },
        sends: {
          total: outcomes.length,
          accepted: accepted.length,
          answeredPending: unconfirmed.length,
          answeredPendingDelivered: unconfirmed.filter((o) => received.has(o.text)).length,
          failed: failed.length,
          lost,
          sentTwice,
          deliveredDespiteError,
        },
        perRun: runs,
        goal: `sendsWorkAgainS.max <= ${GOAL_MS / 1000}, lost == 0, sentTwice == 0`,
        met: recovered.every((ms) => ms <= GOAL_MS) && lost === 0 && sentTwice === 0,
      })}\n`,
    );
  } finally {
    for (const proc of processes) proc.kill('SIGKILL');
    await dataSource.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await dataSource.destroy();
  }
}

async function main(): Promise<void> {
  if (role === 'sim') return runSim();
  if (role === 'gateway') return runGateway(args.get('db') as string, args.get('schema') as string);
  if (role === 'worker') {
    return runWorker(JSON.parse(args.get('sim') as string) as SimInfo, args.get('db') as string, args.get('schema') as string, args.get('worker') as string);
  }
  await orchestrate();
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});
