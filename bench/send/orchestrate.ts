/** The orchestrator: the simulator, the bare side, ours under its HTTP load, then the floor; the ratios and the goal; prints the JSON. */
import { medianRoundTripMs, startDbProxyChild } from '../support/db-latency';
import { child, firstMessage } from './children';
import { runFloor } from './floor';
import {
  CONCURRENCY,
  DB_RTT_MS,
  FLOOR,
  FLOOR_RATIO_GOAL,
  HISTORY,
  INSTANCES,
  log,
  N,
  OTLP,
  PEERS,
  round,
  SETTLE,
  type SideResult,
  type SimInfo,
  sleep,
  TOPOLOGY,
  WARMUP,
  WORKERS,
} from './options';
import { startOtlpCollector } from './otlp';
import type { OursMeasured, OursReady, ProcessMeasure } from './ours';
import { driveOurs, oursSample } from './ours-client';

export async function orchestrate(): Promise<void> {
  const directUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const dbProxy = DB_RTT_MS > 0 ? await startDbProxyChild(directUrl, DB_RTT_MS) : undefined;
  const databaseUrl = dbProxy?.url ?? directUrl;
  const dbRoundTripMs = dbProxy ? { direct: await medianRoundTripMs(directUrl), proxied: await medianRoundTripMs(dbProxy.url) } : undefined;
  const simProcess = child('sim');
  const sim = await firstMessage<SimInfo>(simProcess);
  try {
    log('bare side');
    const bareProcess = child('bare', ['--sim', JSON.stringify(sim)]);
    const bare = await firstMessage<SideResult>(bareProcess);
    const bareExited = new Promise((resolve) => bareProcess.once('exit', resolve));
    bareProcess.disconnect();
    await Promise.race([bareExited, sleep(5_000)]);
    bareProcess.kill();
    log(`bare: ${JSON.stringify(bare)}`);

    log('ours side');
    // --otlp 1: ours' processes (and the worker children they fork) inherit the endpoint and trace every send.
    const otlp = OTLP ? await startOtlpCollector() : undefined;
    if (otlp) process.env.OTEL_EXPORTER_OTLP_ENDPOINT = otlp.url;
    const oursProcess = child('ours', ['--sim', JSON.stringify(sim), '--db', databaseUrl]);
    if (otlp) delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    const ready = await firstMessage<OursReady>(oursProcess);
    const load = await driveOurs(ready, databaseUrl);
    const exited = new Promise((resolve) => oursProcess.once('exit', resolve));
    const sql = firstMessage<OursMeasured>(oursProcess).catch(() => undefined);
    // Every send ours' processes counted statements and CPU over: the warm-up's, the settle's and the measured.
    const sends = load.sent + load.failed + WARMUP * INSTANCES + SETTLE;
    oursProcess.send({ sends });
    const counted = await Promise.race([sql, sleep(15_000).then(() => undefined)]);
    await Promise.race([exited, sleep(15_000)]);
    oursProcess.kill();
    if (counted) log(`SQL statements during the sends (incl. warm-up and background work): ${counted.queries}, top: ${JSON.stringify(counted.top, null, 1)}`);
    const perSend = (of: (measure: ProcessMeasure) => number, digits = 2) =>
      Object.fromEntries(Object.entries(counted?.byProcess ?? {}).map(([name, measure]) => [name, round(of(measure) / sends, digits)]));
    const byProcess = (of: (measure: ProcessMeasure) => number) =>
      Object.fromEntries(Object.entries(counted?.byProcess ?? {}).map(([name, measure]) => [name, of(measure)]));
    const ours: SideResult & {
      /** Per process: `gateway` and `worker` (split), or `gateway+worker` (single). */
      cpuMsPerSendByProcess?: Record<string, number>;
      /** Per process: the main thread's GC pauses per send (part of its CPU). */
      gcMsPerSendByProcess?: Record<string, number>;
      /** Per process: KB allocated on its JS heap per send (steadier than its CPU). */
      allocatedKbPerSendByProcess?: Record<string, number>;
      sqlPerSend?: number;
      sqlPerSendByProcess?: Record<string, number>;
      eventLoopUtilizationByProcess?: Record<string, number>;
      poolWaitingAvg?: number;
      poolWaitingAvgByProcess?: Record<string, number>;
      failedStatements?: Record<string, number>;
      eventsWritten?: number;
      eventsDrainSeconds?: number;
    } = {
      connected: ready.connected,
      connectSeconds: ready.connectSeconds,
      ...load,
      ...(counted
        ? {
            cpuMsPerSend: round(counted.cpuMs / sends, 2),
            cpuMsPerSendByProcess: perSend((measure) => measure.cpuMs),
            gcMsPerSendByProcess: perSend((measure) => measure.gcMs, 3),
            allocatedKbPerSendByProcess: perSend((measure) => measure.allocatedMb * 1000, 1),
            sqlPerSend: round(counted.queries / sends, 2),
            sqlPerSendByProcess: perSend((measure) => measure.queries),
            eventLoopUtilizationByProcess: byProcess((measure) => measure.eventLoopUtilization),
            poolWaitingAvg: counted.poolWaitingAvg,
            poolWaitingAvgByProcess: byProcess((measure) => measure.poolWaitingAvg),
            failedStatements: counted.failedStatements,
            eventsWritten: counted.eventsWritten,
            eventsDrainSeconds: counted.eventsDrainSeconds,
          }
        : {}),
    };
    log(`ours: ${JSON.stringify(ours)}`);
    otlp?.close();
    const traced = otlp ? { ...otlp.counts, spansPerSend: round(otlp.counts.spans / sends, 2) } : undefined;

    const floor = FLOOR && ours.perSecond > 0 && oursSample.reply ? await runFloor(ours.perSecond, bare, databaseUrl) : undefined;
    const ratio = round(ours.perSecond / Math.max(0.001, bare.perSecond), 2);
    // Issue #38's goal: ours' machine CPU per send over the floor's (null without the floor, --floor 0).
    const floorMachine = floor?.machineCpuMsPerSend;
    const floorRatio =
      typeof floorMachine === 'number' && floorMachine > 0 && ours.machineCpuMsPerSend ? round(ours.machineCpuMsPerSend / floorMachine, 2) : null;
    const complete = ours.failed === 0 && bare.failed === 0 && ours.connected === INSTANCES && bare.connected === INSTANCES;
    process.stdout.write(
      `${JSON.stringify({
        bench: 'send',
        topology: TOPOLOGY,
        workers: WORKERS,
        instances: INSTANCES,
        peers: PEERS,
        n: N,
        concurrency: CONCURRENCY,
        settle: SETTLE,
        history: HISTORY,
        dbRttMs: DB_RTT_MS,
        ...(dbRoundTripMs ? { dbRoundTripMs } : {}),
        node: process.version,
        bare,
        ours,
        ...(floor ? { floor } : {}),
        ...(traced ? { otlp: traced } : {}),
        ratio,
        cpuRatio: bare.cpuMsPerSend && ours.cpuMsPerSend ? round(ours.cpuMsPerSend / bare.cpuMsPerSend, 2) : null,
        machineCpuRatio: bare.machineCpuMsPerSend && ours.machineCpuMsPerSend ? round(ours.machineCpuMsPerSend / bare.machineCpuMsPerSend, 2) : null,
        floorRatio,
        goal: `ours' machine CPU per send <= ${FLOOR_RATIO_GOAL} x the floor's (floorRatio; issue #38), every send answered on both sides`,
        // Without the floor (--floor 0) there is nothing to judge the goal by.
        met: floorRatio === null ? null : floorRatio <= FLOOR_RATIO_GOAL && complete,
      })}\n`,
    );
  } finally {
    simProcess.disconnect();
    dbProxy?.stop();
  }
}
