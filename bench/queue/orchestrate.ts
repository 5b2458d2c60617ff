/** The orchestrator: the five phases of main.ts's header in order, then the goals; prints the JSON. */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { simControl } from '../support/sim-clients';
import { ask, child, firstMessage } from './children';
import { drive, textSend } from './load';
import {
  BARE,
  CANCEL,
  CONCURRENCY,
  DRAIN,
  DRAIN_INSTANCES,
  INSTANCES,
  type LoadResult,
  log,
  N,
  ONLY,
  PACE_GAP_S,
  PACE_INSTANCES,
  PACE_SENDS,
  quantile,
  round,
  type SimInfo,
  sleep,
} from './options';

export async function orchestrate(): Promise<void> {
  const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const pg = await import('pg');
  const Client = pg.default?.Client ?? pg.Client;
  const db = new Client({ connectionString: databaseUrl, options: `-c search_path=${schema}` });
  await db.connect();
  const count = async (sql: string, params: unknown[] = []) => Number((await db.query(sql, params)).rows[0].n);
  const children: ChildProcess[] = [];
  const result: Record<string, unknown> = { bench: 'queue', node: process.version, n: N, instances: INSTANCES, concurrency: CONCURRENCY };
  try {
    await db.query(`CREATE SCHEMA "${schema}"`);

    // 1. Bare HTTP loop.
    if (BARE) {
      const bare = child('bare', ['--db', databaseUrl, '--schema', schema]);
      children.push(bare);
      const { baseUrl } = await firstMessage<{ baseUrl: string }>(bare);
      log(`bare: ${N} requests`);
      const load = await drive(baseUrl, N, (index) => ({ method: 'POST', path: '/send/text', token: `tok-${index % INSTANCES}`, body: textSend(index) }));
      result.bareHttpInsert = load;
      log(`bare: ${JSON.stringify(load)}`);
      bare.disconnect();
    }

    // 2. Enqueue through the gateway.
    const simProcess = child('sim', []);
    children.push(simProcess);
    const sim = await firstMessage<SimInfo>(simProcess);
    const ours = child('ours', ['--db', databaseUrl, '--schema', schema, '--sim', JSON.stringify(sim)]);
    children.push(ours);
    const { baseUrl } = await firstMessage<{ baseUrl: string }>(ours);
    // The migrations ran in ours: the tables exist now.
    await db.query(
      `INSERT INTO instances (id, token, name, owner) SELECT 'qbench' || n, 'qtok-' || n, 'bench-' || n, '55119888' || lpad(n::text, 5, '0') FROM generate_series(0, $1::int) AS n`,
      [INSTANCES],
    );
    log(`enqueue: ${N} async sends over ${INSTANCES} instances`);
    const enqueue = await drive(baseUrl, N, (index) => ({ method: 'POST', path: '/send/text', token: `qtok-${index % INSTANCES}`, body: textSend(index) }));
    const queued = await count(
      `SELECT count(*) AS n FROM send_queue q JOIN messages m ON m.instance_id = q.instance_id AND m.message_id = q.message_id AND m.status = 'Queued'`,
    );
    const { stats, sql } = await ask<{ stats: { statements: number; items: number }; sql: Array<[string, number]> }>(ours, 'accept-stats');
    log(`enqueue: SQL statements by text: ${JSON.stringify(sql)}`);
    result.enqueue = { ...enqueue, queuedRowsFound: queued, sendsPerStatement: round(stats.items / Math.max(1, stats.statements), 1) };
    log(`enqueue: ${JSON.stringify(result.enqueue)}`);
    if (ONLY === 'enqueue') {
      await ask(ours, 'stop').catch(() => undefined);
      await new Promise((resolve) => ours.once('exit', resolve));
      process.stdout.write(`${JSON.stringify(result)}\n`);
      return;
    }

    // 3. Cancel: instance INSTANCES (the spare one) holding CANCEL queued sends.
    log(`cancel: queue ${CANCEL} on one instance`);
    const fill = await drive(baseUrl, CANCEL, (index) => ({ method: 'POST', path: '/send/text', token: `qtok-${INSTANCES}`, body: textSend(index) }));
    const holding = await count(`SELECT count(*) AS n FROM send_queue WHERE instance_id = $1`, [`qbench${INSTANCES}`]);
    const { request } = await import('undici');
    const t0 = process.hrtime.bigint();
    const response = await request(`${baseUrl}/message/async`, { method: 'DELETE', headers: { token: `qtok-${INSTANCES}` } });
    const answer = (await response.body.json()) as { stats?: Record<string, number> };
    const cancelMs = Number(process.hrtime.bigint() - t0) / 1e6;
    const canceledRows = await count(`SELECT count(*) AS n FROM messages WHERE instance_id = $1 AND status = 'Canceled'`, [`qbench${INSTANCES}`]);
    result.cancel = { queued: holding, fillFailed: fill.failed, status: response.statusCode, ms: round(cancelMs), stats: answer.stats, canceledRows };
    log(`cancel: ${JSON.stringify(result.cancel)}`);

    // 4. Drain: a clean queue, DRAIN_INSTANCES paired instances, a worker, then a dispatcher.
    await db.query(`TRUNCATE send_queue`);
    log(`drain: pairing ${DRAIN_INSTANCES} instances with the simulator`);
    for (let index = 0; index < DRAIN_INSTANCES; index++) {
      const phone = `5533${String(index).padStart(8, '0')}`;
      await simControl(sim, 'POST', '/sim/accounts', { phone });
      const { creds } = await simControl<{ creds: unknown }>(sim, 'POST', `/sim/accounts/${phone}/provision`, {});
      const id = `dbench${index}`;
      await db.query(`INSERT INTO instances (id, token, name, desired_state, paired, owner) VALUES ($1, $2, $1, 'connected', true, $3)`, [
        id,
        `dtok-${index}`,
        phone,
      ]);
      await db.query(`INSERT INTO auth_creds (instance_id, value) VALUES ($1, $2)`, [id, JSON.stringify(creds)]);
    }
    await ask(ours, 'start-worker');
    const deadline = Date.now() + 300_000;
    while ((await count(`SELECT count(*) AS n FROM instances WHERE id LIKE 'dbench%' AND status = 'connected'`)) < DRAIN_INSTANCES && Date.now() < deadline)
      await sleep(250);
    const connected = await count(`SELECT count(*) AS n FROM instances WHERE id LIKE 'dbench%' AND status = 'connected'`);
    log(`drain: ${connected}/${DRAIN_INSTANCES} connected; warm-up send per instance`);
    // Warm-up (not counted): the first send of each instance sets up its Signal session with the peer.
    await ask(ours, 'start-dispatcher');
    const warm = await drive(baseUrl, DRAIN_INSTANCES, (index) => ({ method: 'POST', path: '/send/text', token: `dtok-${index}`, body: textSend(index) }));
    const out = `SELECT count(*) AS n FROM messages WHERE instance_id LIKE 'dbench%' AND (relayed_at IS NOT NULL OR status = 'Failed')`;
    while ((await count(out)) < warm.ok && Date.now() < deadline) await sleep(100);
    // Timed from the first accept to the last send out (accepting is far faster than sending).
    const before = await count(out);
    log(`drain: ${DRAIN} sends over ${connected} instances, msg_delay 0`);
    const drainStarted = Date.now();
    const drainLoad = await drive(baseUrl, DRAIN, (index) => ({
      method: 'POST',
      path: '/send/text',
      token: `dtok-${index % DRAIN_INSTANCES}`,
      body: textSend(index),
    }));
    while ((await count(out)) < before + drainLoad.ok && Date.now() < deadline + 300_000) await sleep(100);
    const drainSeconds = (Date.now() - drainStarted) / 1000;
    const failedSends = await count(`SELECT count(*) AS n FROM messages WHERE instance_id LIKE 'dbench%' AND status = 'Failed'`);
    result.drain = {
      instances: connected,
      sends: drainLoad.ok,
      acceptSeconds: drainLoad.seconds,
      seconds: round(drainSeconds, 2),
      perSecond: Math.round(drainLoad.ok / drainSeconds),
      failed: failedSends,
    };
    log(`drain: ${JSON.stringify(result.drain)}`);

    // 5. Pacing: PACE_INSTANCES instances, a fixed gap, PACE_SENDS sends each.
    const paced = Array.from({ length: Math.min(PACE_INSTANCES, connected) }, (_, index) => index);
    await db.query(`UPDATE instances SET msg_delay_min = $2, msg_delay_max = $2 WHERE id = ANY($1::text[])`, [
      paced.map((index) => `dbench${index}`),
      PACE_GAP_S,
    ]);
    log(`pacing: ${paced.length} instances × ${PACE_SENDS} sends, gap ${PACE_GAP_S} s`);
    const pacedSince = new Date();
    const pacing = await drive(baseUrl, paced.length * PACE_SENDS, (index) => ({
      method: 'POST',
      path: '/send/text',
      token: `dtok-${paced[index % paced.length]}`,
      body: textSend(index),
    }));
    const pacedOut = `SELECT count(*) AS n FROM messages WHERE instance_id = ANY($1::text[]) AND created_at >= $2 AND (relayed_at IS NOT NULL OR status = 'Failed')`;
    const paceDeadline = Date.now() + (PACE_SENDS * PACE_GAP_S + 120) * 1000;
    while ((await count(pacedOut, [paced.map((index) => `dbench${index}`), pacedSince])) < pacing.ok && Date.now() < paceDeadline) await sleep(200);
    const rows = (
      await db.query(
        `SELECT instance_id, extract(epoch FROM relayed_at) * 1000 AS at FROM messages WHERE instance_id = ANY($1::text[]) AND created_at >= $2 AND relayed_at IS NOT NULL ORDER BY instance_id, relayed_at`,
        [paced.map((index) => `dbench${index}`), pacedSince],
      )
    ).rows as Array<{ instance_id: string; at: string }>;
    // (a) The dispatcher's gap: end of the worker's answer for send k → hand-over of send k+1 (what
    // msg_delay configures: the wait between sends). (b) Start to start as the network sees it
    // (relayed_at, stamped by the worker): the gap plus the whole send of k (encrypt, server ack, SQL).
    const { handOvers } = await ask<{ handOvers: Array<{ instanceId: string; start: number; end: number }> }>(ours, 'hand-overs', {
      since: pacedSince.getTime(),
    });
    const gapMs = PACE_GAP_S * 1000;
    const gapStats = (values: number[]) => {
      const sorted = values.map((value) => Math.abs(value - gapMs)).sort((a, b) => a - b);
      return {
        gaps: sorted.length,
        shorterThanConfigured: values.filter((value) => value < gapMs).length,
        p50ErrorMs: round(quantile(sorted, 0.5)),
        p99ErrorMs: round(quantile(sorted, 0.99)),
        maxErrorMs: round(sorted[sorted.length - 1] ?? 0),
      };
    };
    const waits: number[] = [];
    for (const index of paced) {
      const mine = handOvers.filter((entry) => entry.instanceId === `dbench${index}`).sort((a, b) => a.start - b.start);
      for (let i = 1; i < mine.length; i++) waits.push(mine[i].start - mine[i - 1].end);
    }
    const startToStart: number[] = [];
    for (let i = 1; i < rows.length; i++) if (rows[i].instance_id === rows[i - 1].instance_id) startToStart.push(Number(rows[i].at) - Number(rows[i - 1].at));
    result.pacing = { instances: paced.length, gapMs, dispatcherGap: gapStats(waits), relayedStartToStart: gapStats(startToStart) };
    log(`pacing: ${JSON.stringify(result.pacing)}`);

    await ask(ours, 'stop').catch(() => undefined);
    const enqueueResult = result.enqueue as LoadResult;
    const cancelResult = result.cancel as { ms: number; status: number; canceledRows: number };
    const pacingResult = (result.pacing as { dispatcherGap: { p99ErrorMs: number; gaps: number } }).dispatcherGap;
    result.goals = {
      enqueuePerSecond: { goal: 3_000, measured: enqueueResult.perSecond, met: enqueueResult.perSecond >= 3_000 && enqueueResult.failed === 0 },
      cancelMs: {
        goal: 1_000,
        measured: cancelResult.ms,
        met: cancelResult.ms <= 1_000 && cancelResult.status === 200 && cancelResult.canceledRows === CANCEL,
      },
      pacingP99ErrorMs: { goal: 100, measured: pacingResult.p99ErrorMs, met: pacingResult.gaps > 0 && pacingResult.p99ErrorMs <= 100 },
    };
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    for (const proc of children) if (proc.connected) proc.disconnect();
    await sleep(500);
    for (const proc of children) proc.kill();
    await db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await db.end();
  }
}
