/**
 * The orchestrator: the children forked, the instances linked and warmed up, each phase of the chaos plan
 * run and settled, then the storm (storm.ts), the tallies against the goals; prints the JSON.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { ApiAnswer, ChaosInstance, ChaosModeRun, ChaosTraffic } from '@gw/testing';
import { stopChild } from '../support/processes';
import { provisionDevices, simControl } from '../support/sim-clients';
import {
  args,
  CAMPAIGN,
  INSTANCES,
  INTERVAL_MS,
  log,
  MODE_GOAL_S,
  type Role,
  SETTLE_MS,
  type Setup,
  type SimInfo,
  sleep,
  STORM,
  STORM_GOAL_S,
} from './options';
import { stormPhase } from './storm';

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

export async function orchestrate(): Promise<void> {
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
