/** The simulator's process, and the two sides measured against each other: bare Baileys and our session worker. */
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { answerQuestions } from '../support/processes';
import { openBareSockets, provisionDevices } from '../support/sim-clients';
import { type ActivityDevices, type Soak, soak, startTraffic, type TrafficStats, setupActivityDevices } from './activity';
import { type Breakdown, breakdown, connectWindow, mb, type Memory, settledMemory, snapshot } from './memory';
import { ACTIVITY, args, N, send, type SimInfo, sleep } from './options';

export interface SideResult {
  connected: number;
  /** Instances still connected when the memory was measured (a side whose sessions dropped meanwhile holds less). */
  connectedWhenMeasured: number;
  baselineRssMb: number;
  rssMb: number;
  /** The side's process at its highest since it started (VmHWM), connect and history included. */
  peakRssMb: number;
  heapUsedMb: number;
  perInstanceKb: number;
  connectSeconds: number;
  /** CPU of the side's process while connecting, ms per connected instance (load-insensitive, unlike connectSeconds). */
  connectCpuMs: number;
  /**
   * Ours: when the worker held its first lease, seconds after its start (the first lease's claim time, once the poll
   * sees one: its expiry less the TTL; until session 44 the poll's own time, 0.2–0.3 s late). Before it, the worker
   * starts and its first reconcile waits one interval (RECONCILE_INTERVAL_MS) so that workers starting together
   * all count in the fair share: not connecting work.
   */
  firstClaimSeconds?: number;
  /** Ours: when the poll (every 100 ms) saw every instance connected; `connectSeconds` is when the last one's row said so. */
  connectSecondsPolled?: number;
  /** Buffer.poolSize when measured (the session worker lowers Node 24's 64 KiB; see docs/adr/0016). */
  bufferPoolSize: number;
  /** Where the growth went, KB per connected instance (after − baseline, divided by `connected`). */
  perInstance: Breakdown;
  /** `--activity`: the history's arrival, the traffic during warm-up and soak, and the soak's RSS samples. */
  activity?: { historySeconds: number; historyMessages: number; traffic: TrafficStats; soak?: Soak };
  /**
   * Ours: the worker's inbound backpressure sampled every 100 ms from its start to the measurement (ADR 0013):
   * the most items it held not yet stored, the most sockets paused at once, pauses in all; and the RSS when
   * the held items peaked. What the bound held during a history storm, beside the process's peak.
   */
  inbound?: { maxDepth: number; maxPausedSockets: number; pauses: number; rssMbAtMaxDepth: number };
}

/** Samples what the worker's inbound holds (its `inbound.backlog()`) until stopped. */
function sampleInbound(backlog: () => { depth: number; pausedSockets: number; pauses: number }): { stop(): NonNullable<SideResult['inbound']> } {
  const seen = { maxDepth: 0, maxPausedSockets: 0, pauses: 0, rssMbAtMaxDepth: 0 };
  const timer = setInterval(() => {
    const now = backlog();
    if (now.depth > seen.maxDepth) {
      seen.maxDepth = now.depth;
      seen.rssMbAtMaxDepth = Math.round(process.memoryUsage.rss() / 1024 / 1024);
    }
    seen.maxPausedSockets = Math.max(seen.maxPausedSockets, now.pausedSockets);
    seen.pauses = now.pauses;
  }, 100);
  return {
    stop: () => {
      clearInterval(timer);
      return seen;
    },
  };
}

export async function runSim(): Promise<void> {
  const { startSimulator } = await import('@gw/wa-sim');
  const sim = await startSimulator({ logLevel: 'silent', phoneDecrypt: false, initialPrekeyCount: 1000, media: false });
  if (ACTIVITY) {
    const options = ACTIVITY;
    answerQuestions({ 'activity-setup': (data) => setupActivityDevices(sim.sim, String(data.prefix), N, options) });
  }
  send({ websocketUrl: sim.websocketUrl, controlUrl: sim.controlUrl, rootPublicKey: sim.rootPublicKey } satisfies SimInfo);
  process.on('disconnect', () => void sim.stop().finally(() => process.exit(0)));
}

export async function runBare(sim: SimInfo, given?: ActivityDevices): Promise<SideResult> {
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
  const openCount = () => sockets.filter((sock) => (sock.ws as unknown as { isOpen?: boolean }).isOpen).length;
  let openWhenMeasured = 0;
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
    openWhenMeasured = openCount();
    snapshot('bare');
    const soaked = await soak(options.soakMinutes, after.rss, async () => (await settledMemory()).rss);
    activity = { historySeconds, historyMessages, traffic: await traffic.stop(), soak: soaked };
  } else {
    await sleep(3000);
    after = await settledMemory();
    openWhenMeasured = openCount();
    snapshot('bare');
  }
  return {
    connected: open,
    connectedWhenMeasured: openWhenMeasured,
    baselineRssMb: mb(baseline.rss),
    rssMb: mb(after.rss),
    peakRssMb: mb(after.peakRss),
    heapUsedMb: mb(after.heapUsed),
    perInstanceKb: Math.round((after.rss - baseline.rss) / 1024 / Math.max(1, open)),
    connectSeconds,
    connectCpuMs,
    bufferPoolSize: Buffer.poolSize,
    perInstance: breakdown(baseline, after, open),
    ...(activity ? { activity } : {}),
  };
}

export async function runOurs(sim: SimInfo, databaseUrl: string, given?: ActivityDevices): Promise<SideResult> {
  const { openDatabase } = await import('@gw/persistence');
  const { InProcessBus } = await import('@gw/bus');
  const { SessionWorker, sessionWorkerConfig } = await import('@gw/sessions');
  const { Subjects } = await import('@gw/contracts');
  tellWhoWaitedOnThePool(await import('pg'));
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const dataSource = await openDatabase({ url: databaseUrl, schema, poolSize: 10 });
  // The bench's own polls on a connection of their own: on the worker's pool they waited behind 1,000
  // sessions' history writes past the pool's 5 s wait and failed the run ("timeout exceeded when trying
  // to connect", --activity --n 1000 at load 8). A failed poll is tried again at the next tick.
  const probe = await openDatabase({ url: databaseUrl, schema, poolSize: 1 });
  const CONNECTED = `SELECT count(*)::int AS n FROM instances WHERE status = 'connected'`;
  const count = async (sql: string, otherwise: number): Promise<number> => {
    try {
      const [{ n }]: Array<{ n: number }> = await probe.query(sql);
      return n;
    } catch {
      return otherwise;
    }
  };
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
    const config = sessionWorkerConfig({
      workerId: 'bench-worker',
      capacity: N,
      // `--first-reconcile-ms` (WORKER_FIRST_RECONCILE_MS): 0 is a deployment of one worker, as the embedded default.
      ...(args.has('first-reconcile-ms') ? { firstReconcileDelayMs: Number(args.get('first-reconcile-ms')) } : {}),
      simulator: { websocketUrl: sim.websocketUrl, rootPublicKey: Buffer.from(sim.rootPublicKey, 'base64') },
    });
    const worker = new SessionWorker({ dataSource, bus, logger, config });
    await worker.start();
    const inbound = sampleInbound(() => worker.inbound.backlog());
    let connected = 0;
    let firstClaimSeconds: number | undefined;
    const deadline = Date.now() + 600_000;
    while (Date.now() < deadline) {
      connected = await count(CONNECTED, connected);
      if (connected >= N) break;
      if (firstClaimSeconds === undefined && (await count(`SELECT count(*)::int AS n FROM session_leases`, 0)) > 0) {
        // Seen by the poll; the leases say when: a claim sets expires_at to its time plus the TTL (no lease has
        // been renewed yet this early, a third of the TTL after the first claim).
        const polledAt = Date.now();
        const [{ at }]: Array<{ at: number | null }> = await probe
          .query(`SELECT (extract(epoch FROM min(expires_at)) * 1000)::float8 - $1 AS at FROM session_leases`, [config.leaseTtlMs])
          .catch(() => [{ at: null }]);
        firstClaimSeconds = Math.round(Math.max(0, Math.min(polledAt, at === null ? polledAt : Number(at)) - started)) / 1000;
      }
      await sleep(100);
    }
    const connectSecondsPolled = (Date.now() - started) / 1000;
    const connectCpuMs = await connecting.stop('ours', connected);
    // The poll sees the last connect up to one interval and one count late (on a loaded machine the count
    // itself takes tens of ms), where bare's time ends at its last 'open' event. The rows say when: the
    // `connected` change sets `updated` in the statement that writes it (the same machine's clock).
    const [{ at: lastConnectedAt }]: Array<{ at: number | null }> = await probe
      .query(`SELECT (extract(epoch FROM max(updated)) * 1000)::float8 AS at FROM instances WHERE status = 'connected'`)
      .catch(() => [{ at: null }]);
    const connectSeconds =
      connected >= N && lastConnectedAt !== null
        ? Math.min(connectSecondsPolled, Math.round(Math.max(0, Number(lastConnectedAt) - started)) / 1000)
        : connectSecondsPolled;
    firstClaimSeconds ??= connectSeconds;
    let activity: SideResult['activity'];
    let after: Memory;
    let connectedWhenMeasured = 0;
    if (given && ACTIVITY) {
      const options = ACTIVITY;
      // The history is in once every instance's messages are rows (no traffic yet: nothing else writes messages).
      const deadline = Date.now() + options.historyTimeoutSeconds * 1000;
      let historyMessages = 0;
      while (Date.now() < deadline) {
        historyMessages = await count(`SELECT count(*)::int AS n FROM messages`, historyMessages);
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
      connectedWhenMeasured = await count(CONNECTED, -1);
      snapshot('ours');
      const soaked = await soak(options.soakMinutes, after.rss, async () => (await settledMemory()).rss);
      activity = { historySeconds, historyMessages, traffic: await traffic.stop(), soak: soaked };
    } else {
      await sleep(3000);
      after = await settledMemory();
      connectedWhenMeasured = await count(CONNECTED, -1);
      snapshot('ours');
    }
    const held = inbound.stop();
    // Measured: a stop that fails (a statement timing out at this size) must not lose the figures.
    await worker.stop().catch((error: unknown) => process.stderr.write(`[instances] ours: stopping the worker failed: ${String(error)}\n`));
    await bus.close();
    return {
      connected,
      connectedWhenMeasured,
      baselineRssMb: mb(baseline.rss),
      rssMb: mb(after.rss),
      peakRssMb: mb(after.peakRss),
      heapUsedMb: mb(after.heapUsed),
      perInstanceKb: Math.round((after.rss - baseline.rss) / 1024 / Math.max(1, connected)),
      connectSeconds,
      connectSecondsPolled,
      connectCpuMs,
      firstClaimSeconds,
      bufferPoolSize: Buffer.poolSize,
      perInstance: breakdown(baseline, after, connected),
      ...(activity ? { activity } : {}),
      inbound: held,
    };
  } finally {
    await probe.destroy().catch(() => undefined);
    await dataSource.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await dataSource.destroy();
  }
}

/**
 * A statement that waited for a pool connection past the pool's timeout fails with pg-pool's error, whose
 * stack is only its timer: the N = 1,000 run failed that way with no word of which statement. Each checkout
 * that finds no idle connection keeps the stack of its caller (async frames included) and a timeout's
 * error carries it.
 */
function tellWhoWaitedOnThePool(pg: typeof import('pg')): void {
  type Connect = (callback?: (error: Error | undefined, ...rest: unknown[]) => void) => unknown;
  const pool = pg.Pool.prototype as unknown as { connect: Connect };
  const connect = pool.connect;
  pool.connect = function (this: { idleCount?: number }, callback) {
    // Only a checkout that has to wait can time out: one that finds an idle connection is not traced
    // (an Error's stack with its async frames at every checkout cost ours ~1 % of its connect window).
    if ((this.idleCount ?? 0) > 0) return callback ? connect.call(this, callback) : connect.call(this);
    const caller = new Error('the pool was asked by');
    const note = (error: Error | undefined) => {
      if (error && /timeout exceeded/.test(error.message)) error.stack = `${error.stack}\n${caller.stack}`;
      return error;
    };
    if (callback) return connect.call(this, (error, ...rest) => callback(note(error), ...rest));
    return (connect.call(this) as Promise<unknown>).catch((error: Error) => {
      throw note(error);
    });
  };
}
