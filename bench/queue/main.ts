/**
 * bench/queue: the async send queue. Enqueue throughput of our accept path (AsyncQueue.enqueue: one
 * transaction, `Queued` messages row + queue row) next to a bare single-row INSERT loop on the same
 * Postgres, with the same concurrency; then dispatch throughput (claim → fake worker → complete) for
 * many instances with no pacing gap.
 *
 *   npm run bench -- queue [--n 5000] [--concurrency 32] [--instances 50]
 *
 * Prints one JSON object. Goal: ≥ 3,000 enqueues/s.
 */
import { InProcessBus } from '@gw/bus';
import { Subjects, type SendRequest } from '@gw/contracts';
import { AsyncDispatcher, ASYNC_DISPATCHER_DEFAULTS, AsyncQueue } from '@gw/dispatch';
import { InstanceRepository, openDatabase } from '@gw/persistence';
import { createLogger } from '@gw/platform';
import { randomBytes } from 'node:crypto';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i].replace(/^--/, ''), process.argv[i + 1]);
const N = Number(args.get('n') ?? 5_000);
const CONCURRENCY = Number(args.get('concurrency') ?? 32);
const INSTANCES = Number(args.get('instances') ?? 50);
const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

async function inParallel(count: number, work: (index: number) => Promise<void>): Promise<number> {
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) await work(next++);
    }),
  );
  return Number(process.hrtime.bigint() - started) / 1e9;
}

async function main(): Promise<void> {
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const dataSource = await openDatabase({ url, schema, poolSize: CONCURRENCY + 4 });
  const bus = new InProcessBus();
  try {
    const instanceIds: string[] = [];
    for (let n = 0; n < INSTANCES; n++) {
      const id = `b${randomBytes(6).toString('hex')}`;
      await new InstanceRepository(dataSource).create({ id, token: `t${id}`, name: id });
      instanceIds.push(id);
    }
    const request = (index: number): SendRequest => {
      const text = `bench message ${index}`;
      return {
        instanceId: instanceIds[index % INSTANCES],
        recordId: `r${randomBytes(4).toString('hex').slice(0, 7)}`,
        messageId: `3EB0${randomBytes(9).toString('hex').toUpperCase()}`,
        chatJid: '5511999990000@s.whatsapp.net',
        content: { kind: 'text', text, linkPreview: null },
        delayMs: 0,
        record: { sendFunction: 'SendTextMessage', sendPayload: { number: '5511999990000', text }, trackSource: '', trackId: '', sendFolderId: '' },
      };
    };

    await dataSource.query(`CREATE TABLE bare_insert (id bigserial PRIMARY KEY, payload jsonb NOT NULL)`);
    const bareSeconds = await inParallel(N, async (index) => void (await dataSource.query(`INSERT INTO bare_insert (payload) VALUES ($1::jsonb)`, [JSON.stringify(request(index))])));

    const queue = new AsyncQueue(dataSource, bus);
    const enqueueSeconds = await inParallel(N, async (index) => void (await queue.enqueue(request(index), '5511888880000')));

    let sent = 0;
    for (const id of instanceIds) {
      bus.subscribe(Subjects.instance(id, 'send'), async (data) => {
        const sentRequest = data as SendRequest;
        await dataSource.query(`UPDATE messages SET status = 'Sent', relayed_at = now() WHERE instance_id = $1 AND message_id = $2`, [sentRequest.instanceId, sentRequest.messageId]);
        sent++;
        return { status: 'Sent' };
      });
    }
    const dispatcher = new AsyncDispatcher(dataSource, bus, { ...ASYNC_DISPATCHER_DEFAULTS, dispatcherId: 'bench', maxLanes: INSTANCES }, createLogger('bench', 'silent'));
    const started = Date.now();
    dispatcher.start();
    while (sent < N) await new Promise((resolve) => setTimeout(resolve, 20));
    const dispatchSeconds = (Date.now() - started) / 1000;
    await dispatcher.stop();

    process.stdout.write(
      `${JSON.stringify({
        bench: 'queue',
        n: N,
        concurrency: CONCURRENCY,
        instances: INSTANCES,
        bareInsertPerSecond: Math.round(N / bareSeconds),
        enqueuePerSecond: Math.round(N / enqueueSeconds),
        enqueueVsBare: Math.round((bareSeconds / enqueueSeconds) * 100) / 100,
        dispatchPerSecond: Math.round(N / dispatchSeconds),
        goalEnqueuePerSecond: 3_000,
      })}\n`,
    );
  } finally {
    await bus.close();
    await dataSource.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await dataSource.destroy();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});
