/** The orchestrator and outbox feeder: the relay's steady rate and burst, then the bare client's; the goals; prints the JSON. */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { eventFor } from './events';
import { ask, nextMessage, spawnRole } from './ipc';
import { type InFlightStats, paced, postgresCpuMs } from './load';
import { BURST, CHATS, databaseUrl, INSTANCES, log, num, PAYLOAD, type Phase, PRE_SECONDS, RATE, round, SECONDS, SEED_ROWS, SINK, sleep } from './options';
import { machineCpuBetween, machineCpuMark, type MachineCpuMark } from '../support/processes';
import type { PhaseStats } from './receiver';
import type { ColdStats } from './relay';

async function waitForDelivery(receiver: ChildProcess, phase: Phase, expected: number, stallMs = num('stall', 20) * 1000): Promise<PhaseStats> {
  let last = -1;
  let lastChange = Date.now();
  let lastLog = Date.now();
  const giveUpAt = Date.now() + num('wait', 300) * 1000;
  // Polled for the count only: sorting every latency each 50 ms took the receiver's CPU from the relay's run.
  const final = async () => (await ask<{ stats: PhaseStats }>(receiver, { cmd: 'stats', phase })).stats;
  for (;;) {
    const { stats } = await ask<{ stats: PhaseStats }>(receiver, { cmd: 'stats', phase, countOnly: true });
    if (stats.count >= expected) return final();
    if (Date.now() - lastLog > 5_000) {
      lastLog = Date.now();
      log(`${phase}: ${stats.count}/${expected} delivered`);
    }
    if (stats.count !== last) {
      last = stats.count;
      lastChange = Date.now();
    } else if (Date.now() - lastChange > stallMs) {
      log(`${phase}: stalled at ${stats.count}/${expected}`);
      return final();
    }
    if (Date.now() > giveUpAt) {
      log(`${phase}: gave up at ${stats.count}/${expected} after --wait`);
      return final();
    }
    await sleep(50);
  }
}

/**
 * Shared buffers (hit or read) the run touched in the relay's two tables and their indexes, per
 * delivery: Postgres' work, which a loaded machine does not inflate as it does time. The relay's
 * connections are closed by now (their backends flushed their statistics); the feeder's inserts count.
 */
async function buffersPerDelivery(
  dataSource: import('typeorm').DataSource,
  schema: string,
  delivered: number,
  before?: Record<string, { heap: number; index: number }>,
): Promise<Record<string, { heap: number; index: number }>> {
  const rows: Array<{ relname: string; heap: string; idx: string }> = await dataSource.query(
    `SELECT relname, heap_blks_hit + heap_blks_read AS heap, coalesce(idx_blks_hit + idx_blks_read, 0) AS idx
     FROM pg_statio_user_tables WHERE schemaname = $1 AND relname IN ('outbox_events', 'webhook_deliveries')`,
    [schema],
  );
  const per = (value: string) => round(Number(value) / Math.max(delivered, 1), 1);
  return Object.fromEntries(
    rows.map((row) => [
      row.relname,
      { heap: per(String(Number(row.heap) - (before?.[row.relname]?.heap ?? 0))), index: per(String(Number(row.idx) - (before?.[row.relname]?.index ?? 0))) },
    ]),
  );
}

/**
 * `rows` events already dispatched and delivered, spread over the bench's instances and chats, then VACUUM ANALYZE
 * of the relay's two tables: what a running gateway's tables hold, with their statistics. Without it each run's
 * relay starts on empty tables of a fresh schema, which no deployed relay meets after its first day. Returns the
 * milliseconds it took.
 */
async function seedHistory(dataSource: import('typeorm').DataSource, instanceIds: string[], webhookIds: string[], rows: number): Promise<number | null> {
  if (rows <= 0) return null;
  const started = Date.now();
  await dataSource.query(
    `WITH events AS (
       INSERT INTO outbox_events (instance_id, event_type, chat_id, payload, created_at, dispatched_at)
       SELECT ($1::text[])[1 + n % cardinality($1::text[])], 'messages', '55119' || lpad(((n / cardinality($1::text[])) % $3)::text, 8, '0') || '@s.whatsapp.net',
         jsonb_build_object('EventType', 'messages', 'phase', 'seed', 'seq', n), now() - interval '1 hour', now() - interval '1 hour'
       FROM generate_series(0, $4 - 1) AS n
       RETURNING id, instance_id, chat_id)
     INSERT INTO webhook_deliveries (webhook_id, event_id, instance_id, chat_id, event_type, status, attempts, last_status_code, created_at, finished_at)
     SELECT ($2::text[])[array_position($1::text[], e.instance_id)], e.id, e.instance_id, e.chat_id, 'messages', 'delivered', 1, 200,
       now() - interval '1 hour', now() - interval '1 hour'
     FROM events e`,
    [instanceIds, webhookIds, CHATS, rows],
  );
  await dataSource.query(`VACUUM ANALYZE outbox_events`);
  await dataSource.query(`VACUUM ANALYZE webhook_deliveries`);
  return Date.now() - started;
}

/**
 * Where a steady phase's time went, hop by hop, from the rows' own clocks (the feeder's and Postgres'; the same
 * machine): the feeder's insert (event made → its outbox row's transaction), fan-out (→ its delivery row's
 * transaction), and the claim, the request and the flush that recorded it (→ the row's `finished_at`). p50 and
 * p99 of each over the phase and over its first second (a relay just started).
 */
async function hops(dataSource: import('typeorm').DataSource, phase: Phase): Promise<Record<string, Record<string, number | null>>> {
  const rows: Array<Record<string, number | null>> = await dataSource.query(
    `WITH h AS (
       SELECT (o.payload->>'createdAt')::float8 AS made,
         extract(epoch FROM o.created_at) * 1000 - (o.payload->>'createdAt')::float8 AS insert_ms,
         extract(epoch FROM d.created_at - o.created_at) * 1000 AS fan_out_ms,
         extract(epoch FROM d.finished_at - d.created_at) * 1000 AS claim_send_record_ms
       FROM outbox_events o JOIN webhook_deliveries d ON d.event_id = o.id
       WHERE o.payload->>'phase' = $1),
     first AS (SELECT min(made) AS at FROM h)
     SELECT CASE WHEN made < (SELECT at FROM first) + 1000 THEN 'firstSecond' ELSE 'rest' END AS part,
       percentile_disc(0.5) WITHIN GROUP (ORDER BY insert_ms) AS "insertP50", percentile_disc(0.99) WITHIN GROUP (ORDER BY insert_ms) AS "insertP99",
       percentile_disc(0.5) WITHIN GROUP (ORDER BY fan_out_ms) AS "fanOutP50", percentile_disc(0.99) WITHIN GROUP (ORDER BY fan_out_ms) AS "fanOutP99",
       percentile_disc(0.5) WITHIN GROUP (ORDER BY claim_send_record_ms) AS "claimSendRecordP50",
       percentile_disc(0.99) WITHIN GROUP (ORDER BY claim_send_record_ms) AS "claimSendRecordP99"
     FROM h GROUP BY 1`,
    [phase],
  );
  return Object.fromEntries(
    rows.map(({ part, ...values }) => [
      String(part),
      Object.fromEntries(Object.entries(values).map(([key, value]) => [key, value === null ? null : round(Number(value), 1)])),
    ]),
  );
}

/** The machine's CPU since `from` per delivery, in whole µs: all of it, the cores' busy share, each process at 1 µs or more. */
function machinePerDelivery(from: MachineCpuMark, deliveries: number) {
  const used = machineCpuBetween(from, machineCpuMark(), deliveries);
  if (!used) return null;
  return {
    cpuUsPerOp: Math.round(used.cpuUsPerOp),
    busyPercent: Math.round(used.busyPercent),
    cpuUsPerOpBy: Object.fromEntries(used.cpuUsPerOpBy.filter(([, us]) => Math.round(us) >= 1).map(([label, us]) => [label, Math.round(us)])),
  };
}

export async function orchestrate(): Promise<void> {
  const { openDatabase, InstanceRepository, OutboxRepository, WebhookRepository } = await import('@gw/persistence');
  const { generateWebhookSecret } = await import('@gw/relay');
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const dataSource = await openDatabase({ url: databaseUrl, schema, poolSize: 4 });
  const children: ChildProcess[] = [];
  try {
    const receiver = spawnRole('receiver');
    children.push(receiver);
    const { url, exchange, stream } = await nextMessage<{ url: string; exchange?: string; stream?: string }>(
      receiver,
      (message) => typeof message.url === 'string',
    );

    const instanceIds: string[] = [];
    const webhookIds: string[] = [];
    for (let n = 0; n < INSTANCES; n++) {
      const id = `wb${randomBytes(6).toString('hex')}`;
      await new InstanceRepository(dataSource).create({ id, token: `tok-${id}`, name: `bench-${n}` });
      webhookIds.push(`w${randomBytes(6).toString('hex')}`);
      await new WebhookRepository(dataSource).insert(
        webhookIds[n],
        id,
        {
          url,
          enabled: true,
          events: [],
          excludeMessages: [],
          addUrlEvents: false,
          addUrlTypesMessages: false,
          includeToken: false,
          ...(SINK === 'rabbitmq' ? { kind: 'rabbitmq' as const, options: { exchange, routingKey: '{instance}.{event}' } } : {}),
          ...(SINK === 'nats' ? { kind: 'nats' as const, options: { subjectPrefix: exchange, stream } } : {}),
        },
        generateWebhookSecret(),
      );
      instanceIds.push(id);
    }

    // --seed-rows: the relay's tables as a running gateway's are (events dispatched and delivered before), analyzed.
    const seeded = await seedHistory(dataSource, instanceIds, webhookIds, SEED_ROWS);
    // What the seeding touched is not the relay's (statistics reach pg_statio within a second).
    if (seeded !== null) await sleep(1_100);
    const buffersBefore = seeded === null ? undefined : await buffersPerDelivery(dataSource, schema, 1);

    // The receiver's code warmed first: the relay's phases come before the bare client's (see warmReceiver).
    if (SINK === 'webhook') await ask(receiver, { cmd: 'warm', count: num('receiver-warm', 4_000) });
    const relay = spawnRole('relay', ['--schema', schema]);
    children.push(relay);
    const { settings } = await nextMessage<{ settings: Record<string, number> }>(relay, (message) => message.ready === true);
    log(`relay up: ${JSON.stringify(settings)}; receiver ${url}; schema ${schema}`);

    /** One transaction per tick (the events of every instance due by then), then one notice. */
    let insertMsTotal = 0;
    let insertTx = 0;
    const feed = async (phase: Phase, from: number, to: number) => {
      const createdAt = Date.now();
      const byInstance = new Map<number, Array<{ eventType: string; chatId: string; payload: Record<string, unknown> }>>();
      for (let seq = from; seq < to; seq++) {
        const event = eventFor(phase, seq, createdAt);
        let list = byInstance.get(event.instance);
        if (!list) byInstance.set(event.instance, (list = []));
        list.push({ eventType: 'messages', chatId: event.chat, payload: event.payload as unknown as Record<string, unknown> });
      }
      const started = Date.now();
      await dataSource.transaction(async (manager) => {
        const outbox = new OutboxRepository(dataSource).within(manager);
        for (const [instance, events] of byInstance) await outbox.insert(instanceIds[instance], events);
      });
      insertMsTotal += Date.now() - started;
      insertTx++;
      for (const instance of byInstance.keys()) relay.send({ wake: instanceIds[instance] });
    };

    const preTotal = Math.round(RATE * PRE_SECONDS);
    // 0. (--pre-seconds) the same rate, not measured: the relay's code warmed by use before the steady phase
    if (PRE_SECONDS > 0) {
      log(`relay: ${RATE} events/s for ${PRE_SECONDS} s, not measured`);
      await paced(RATE, PRE_SECONDS, (from, to) => feed('relay-pre', from, to));
      await waitForDelivery(receiver, 'relay-pre', preTotal);
    }
    // 1. steady rate through the relay
    log(`relay: ${RATE} events/s for ${SECONDS} s`);
    await ask(relay, { cmd: 'steady' });
    const steadyStarted = Date.now();
    const progress = setInterval(
      () =>
        void ask<{ stats: PhaseStats }>(receiver, { cmd: 'stats', phase: 'relay-steady', countOnly: true }).then(({ stats }) =>
          log(`relay-steady: ${stats.count} delivered after ${round((Date.now() - steadyStarted) / 1000, 1)} s`),
        ),
      5_000,
    );
    await paced(RATE, SECONDS, (from, to) => feed('relay-steady', from, to));
    clearInterval(progress);
    const feedSeconds = (Date.now() - steadyStarted) / 1000;
    const steadyTotal = Math.round(RATE * SECONDS);
    /** What the bare client posts in all: its unmeasured phase (--pre-seconds), the steady one and the burst. */
    const bareEvents = preTotal + steadyTotal + BURST;
    const relaySteady = await waitForDelivery(receiver, 'relay-steady', steadyTotal);
    // Read once everything is recorded (the flush after the last request).
    await sleep(500);
    const steadyHops = await hops(dataSource, 'relay-steady');
    log(`relay-steady: ${relaySteady.count}/${steadyTotal}, p50 ${relaySteady.p50Ms} ms, p99 ${relaySteady.p99Ms} ms`);
    const steadyInsertMs = insertTx ? insertMsTotal / insertTx : 0;

    // 2. a burst through the relay, fed as fast as the outbox takes it
    await sleep(1_000);
    log(`relay: burst of ${BURST}`);
    await ask(relay, { cmd: 'mark' });
    const postgresBefore = postgresCpuMs();
    const relayMachineBefore = machineCpuMark();
    const burstStarted = Date.now();
    for (let from = 0; from < BURST; from += 1_000) await feed('relay-burst', from, Math.min(BURST, from + 1_000));
    const burstFedSeconds = (Date.now() - burstStarted) / 1000;
    const relayBurst = await waitForDelivery(receiver, 'relay-burst', BURST);
    const relayMachine = machinePerDelivery(relayMachineBefore, relayBurst.count);
    const postgresAfter = postgresCpuMs();
    const postgresBurstMs = postgresBefore === null || postgresAfter === null ? null : postgresAfter - postgresBefore;
    const relayBurstSeconds = (relayBurst.lastAt - burstStarted) / 1000;
    log(`relay-burst: ${relayBurst.count}/${BURST} in ${relayBurstSeconds} s (fed in ${burstFedSeconds} s)`);
    const {
      deliveries,
      queries,
      cold,
      timeline,
      inFlight: relayInFlight,
      cpuMs: relayCpuMs,
      cpuAfterStart: relayCpuAfterStart,
    } = await ask<{
      deliveries: Record<string, number>;
      queries: Record<string, { count: number; ms: number; empty: number }>;
      cold: ColdStats;
      timeline: Record<string, unknown>;
      inFlight: InFlightStats;
      cpuMs: number;
      cpuAfterStart: { total: number; system: number };
    }>(relay, { cmd: 'stop' });
    // The seeded rows (--seed-rows) are delivered rows too, but not the relay's.
    const deliveredRows = (deliveries.delivered ?? 0) - SEED_ROWS;
    const statements = Object.values(queries).reduce((sum, entry) => sum + entry.count, 0);

    // 3. the bare client, same bodies, same receiver, same concurrency
    const bare = spawnRole('bare', ['--url', url, ...(exchange ? ['--exchange', exchange] : [])]);
    children.push(bare);
    await nextMessage(bare, (message) => message.ready === true);
    if (PRE_SECONDS > 0) {
      await ask(bare, { cmd: 'pre' });
      await waitForDelivery(receiver, 'bare-pre', preTotal);
    }
    log(`bare: ${RATE} events/s for ${SECONDS} s`);
    await ask(bare, { cmd: 'steady' });
    const bareSteady = await waitForDelivery(receiver, 'bare-steady', steadyTotal);
    log(`bare-steady: p50 ${bareSteady.p50Ms} ms, p99 ${bareSteady.p99Ms} ms`);
    await sleep(1_000);
    log(`bare: burst of ${BURST}`);
    const bareMachineBefore = machineCpuMark();
    const bareBurstStarted = Date.now();
    await ask(bare, { cmd: 'burst' });
    const bareBurst = await waitForDelivery(receiver, 'bare-burst', BURST);
    const bareMachine = machinePerDelivery(bareMachineBefore, bareBurst.count);
    const bareBurstSeconds = (bareBurst.lastAt - bareBurstStarted) / 1000;
    const {
      cpuMs: bareCpuMs,
      cpuAfterStart: bareCpuAfterStart,
      inFlight: bareInFlight,
    } = await ask<{ cpuMs: number; cpuAfterStart: { total: number; system: number }; inFlight: InFlightStats | null }>(bare, { cmd: 'stop' });

    const relayPerSecond = relayBurst.count / Math.max(relayBurstSeconds, 0.001);
    const barePerSecond = bareBurst.count / Math.max(bareBurstSeconds, 0.001);
    process.stdout.write(
      `${JSON.stringify({
        bench: 'webhooks',
        sink: SINK,
        payload: PAYLOAD,
        payloadBytes: JSON.stringify(eventFor('relay-burst', 0, Date.now()).payload).length,
        seconds: SECONDS,
        rate: RATE,
        burstEvents: BURST,
        instances: INSTANCES,
        chatsPerInstance: CHATS,
        lanes: INSTANCES * CHATS,
        relaySettings: settings,
        seededRows: { rows: SEED_ROWS, ms: seeded },
        steady: {
          events: steadyTotal,
          feedSeconds: round(feedSeconds, 2),
          outboxInsertMsPerTick: round(steadyInsertMs, 2),
          relay: {
            delivered: relaySteady.count,
            deliveriesPerSecond: round(relaySteady.count / Math.max((relaySteady.lastAt - steadyStarted) / 1000, 0.001)),
            p50Ms: relaySteady.p50Ms,
            p99Ms: relaySteady.p99Ms,
            coldStartP99Ms: relaySteady.coldStartP99Ms,
            maxMs: relaySteady.maxMs,
            p99MsByHalfSecond: relaySteady.p99MsByHalfSecond,
            hopsMs: steadyHops,
            duplicates: relaySteady.duplicates,
            outOfOrder: relaySteady.outOfOrder,
          },
          bare: {
            delivered: bareSteady.count,
            p50Ms: bareSteady.p50Ms,
            p99Ms: bareSteady.p99Ms,
            coldStartP99Ms: bareSteady.coldStartP99Ms,
            maxMs: bareSteady.maxMs,
          },
        },
        burst: {
          events: BURST,
          relay: {
            delivered: relayBurst.count,
            fedSeconds: round(burstFedSeconds, 2),
            seconds: round(relayBurstSeconds, 2),
            deliveriesPerSecond: round(relayPerSecond),
            p50Ms: relayBurst.p50Ms,
            p99Ms: relayBurst.p99Ms,
            duplicates: relayBurst.duplicates,
            outOfOrder: relayBurst.outOfOrder,
            // From the first delivery: the ramp while fan-out and the claims get ahead, the plateau, the tail.
            firstDeliveryAfterMs: relayBurst.firstAt - burstStarted,
            deliveredPer100ms: relayBurst.deliveredPer100ms,
            // Postgres' CPU over the burst per 1,000 deliveries, the feeder's event inserts included (null: not readable here).
            postgresCpuMsPerThousand: postgresBurstMs === null ? null : round((postgresBurstMs * 1000) / Math.max(relayBurst.count, 1), 1),
            // The whole machine's CPU over the burst per delivery (µs), and each process's part: on a machine whose
            // cores the burst keeps busy, deliveries/s follow it (null off Linux).
            machine: relayMachine,
          },
          bare: {
            delivered: bareBurst.count,
            seconds: round(bareBurstSeconds, 2),
            deliveriesPerSecond: round(barePerSecond),
            p50Ms: bareBurst.p50Ms,
            p99Ms: bareBurst.p99Ms,
            firstDeliveryAfterMs: bareBurst.firstAt - bareBurstStarted,
            deliveredPer100ms: bareBurst.deliveredPer100ms,
            machine: bareMachine,
          },
          // Ours' machine CPU per delivery over bare's: at most 1 / 0.6 for the burst goal on a machine the burst saturates.
          machineCpuRatio: relayMachine && bareMachine ? round(relayMachine.cpuUsPerOp / Math.max(bareMachine.cpuUsPerOp, 1), 2) : null,
          relayVsBare: round(relayPerSecond / Math.max(barePerSecond, 0.001), 3),
          // Requests in flight from the first request to the last answer (mean, share of the time at the limit).
          inFlight: { limit: settings.maxInFlightPerReceiver, relay: relayInFlight, bare: bareInFlight },
        },
        deliveryRows: deliveries,
        cpuMsPerThousandDeliveries: {
          relay: round((relayCpuMs * 1000) / Math.max(deliveredRows, 1), 1),
          bare: round((bareCpuMs * 1000) / Math.max(bareEvents, 1), 1),
          // From each process's ready on (no module loading or warm-up), and the kernel's part of it.
          afterStart: {
            relay: round((relayCpuAfterStart.total * 1000) / Math.max(deliveredRows, 1), 1),
            relaySystem: round((relayCpuAfterStart.system * 1000) / Math.max(deliveredRows, 1), 1),
            bare: round((bareCpuAfterStart.total * 1000) / Math.max(bareEvents, 1), 1),
            bareSystem: round((bareCpuAfterStart.system * 1000) / Math.max(bareEvents, 1), 1),
          },
        },
        relaySql: { statements, perDelivery: round(statements / Math.max(deliveredRows, 1), 3), byKind: queries },
        relayCold: cold,
        relaySqlTimeline: timeline,
        relayDbBuffersPerDelivery: await buffersPerDelivery(dataSource, schema, deliveredRows, buffersBefore),
        loadAverage: loadavg().map((value) => round(value, 2)),
        goals: { burstVsBare: 0.6, p99MsAtRate: 50 },
        met: {
          burstVsBare: relayPerSecond >= 0.6 * barePerSecond,
          p99: relaySteady.p99Ms !== null && relaySteady.p99Ms <= 50 && relaySteady.count === steadyTotal,
        },
      })}\n`,
    );
  } finally {
    for (const child of children) if (child.connected) child.disconnect();
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill();
    await dataSource.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await dataSource.destroy();
  }
}
