/** The floor: the hops our architecture adds to bare Baileys, with no code of ours on them, at ours' rate (docs/adr/0025). */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { firstMessage } from './children';
import { drive } from './load';
import { CONCURRENCY, INSTANCES, type LoadResult, log, N, NATS_URL, POOL, type Role, round, send, TOPOLOGY } from './options';
import { oursSample } from './ours-client';

/** What the floor's chain measured. */
interface FloorChain {
  /** Machine CPU (every process, the kernel's work included) per operation, as machineCpuMsPerSend. */
  machineCpuMsPerOp?: number;
  machineBusyPercent?: number;
  /** machineCpuMsPerOp by process: orchestrate (the HTTP client), hop-http, nats-server, hop-nats, postgres… */
  machineCpuMsPerOpBy?: Record<string, number>;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  failed: number;
  firstError?: string;
}

/**
 * The floor under ours: the deployed architecture's hops with no code of ours on them, at ours' own
 * rate (paced: as many wake-ups per second as ours had, not the batching of a loop flat out), the same
 * N and concurrency, carrying the bytes ours carried. One operation is the HTTP client's request
 * (undici, keep-alive, as driveOurs) → a bare node:http server in a process of its own → a NATS request
 * → a bare responder in a process of its own (as gateway → worker) → one durable commit (an autocommit
 * INSERT of one row, prepared, from a pool of `--pool` connections: the least a ledger durable before
 * the socket writes costs; group commit shares commits among sends, so ours' can cost less) → ours'
 * reply back the same way. With `--topology single` (no bus between two processes) the HTTP server
 * commits itself: no NATS hop. `machineCpuMsPerSend` adds bare Baileys' machine CPU per send: what this
 * machine spends per send on these hops and Baileys before any code of ours runs.
 */
export async function runFloor(ratePerSecond: number, bare: LoadResult, databaseUrl: string): Promise<Record<string, unknown>> {
  const hopChild = async (hopRole: Role, setup: Record<string, unknown>) => {
    const proc = fork(process.argv[1], [hopRole], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const ready = firstMessage<Record<string, unknown>>(proc);
    proc.send(setup);
    return { proc, ready: await ready };
  };
  const schema = `bench_floor_${randomBytes(4).toString('hex')}`;
  const subject = `${schema}.send`;
  const pg = await import('pg');
  const admin = new (pg.default?.Client ?? pg.Client)({ connectionString: databaseUrl });
  await admin.connect();
  const children: ChildProcess[] = [];
  const { Agent, request } = await import('undici');
  const agent = new Agent({ connections: CONCURRENCY, pipelining: 1, keepAliveTimeout: 60_000 });
  try {
    await admin.query(`CREATE SCHEMA "${schema}"`);
    await admin.query(
      `CREATE TABLE "${schema}".sends (id text PRIMARY KEY, instance_id text NOT NULL, status text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`,
    );
    const setup: HopSetup = { reply: oursSample.reply, databaseUrl, schema };
    if (TOPOLOGY === 'split') {
      const responder = await hopChild('hop-nats', { ...setup, subject, natsUrl: NATS_URL });
      children.push(responder.proc);
    }
    const http = await hopChild('hop-http', TOPOLOGY === 'split' ? { ...setup, subject, natsUrl: NATS_URL } : { ...setup });
    children.push(http.proc);
    const url = `http://127.0.0.1:${String(http.ready.port)}/send/text`;
    const operation = async () => {
      const response = await request(url, {
        method: 'POST',
        dispatcher: agent,
        headers: { 'content-type': 'application/json', token: 'tok-floor' },
        body: oursSample.request,
      });
      const text = await response.body.text();
      if (response.statusCode !== 200) throw new Error(`HTTP ${response.statusCode}: ${text.slice(0, 200)}`);
    };
    await drive(INSTANCES, operation);
    const result = await drive(N, operation, ratePerSecond);
    log(`floor: ${JSON.stringify(result)}`);
    const chain: FloorChain = {
      machineCpuMsPerOp: result.machineCpuMsPerSend,
      machineBusyPercent: result.machineBusyPercent,
      machineCpuMsPerOpBy: result.machineCpuMsPerSendBy,
      perSecond: result.perSecond,
      p50Ms: result.p50Ms,
      p99Ms: result.p99Ms,
      failed: result.failed,
      ...(result.firstError ? { firstError: result.firstError } : {}),
    };
    return {
      ratePerSecond: round(ratePerSecond),
      chain,
      machineCpuMsPerSend:
        bare.machineCpuMsPerSend !== undefined && chain.machineCpuMsPerOp !== undefined ? round(bare.machineCpuMsPerSend + chain.machineCpuMsPerOp, 2) : null,
    };
  } finally {
    await agent.close();
    for (const proc of children) proc.kill();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await admin.end();
  }
}

/** What a hop of the floor is told: ours' reply, where to commit, and (split) the NATS subject it serves or passes requests on to. */
interface HopSetup {
  reply: string;
  databaseUrl: string;
  schema: string;
  subject?: string;
  natsUrl?: string;
}

/** The floor's one durable commit per send: an autocommit INSERT of one row, prepared, from a pool of `--pool` connections. */
async function floorCommitter(setup: HopSetup): Promise<(number: string) => Promise<void>> {
  const pg = await import('pg');
  const pool = new (pg.default?.Pool ?? pg.Pool)({ connectionString: setup.databaseUrl, max: POOL });
  const text = `INSERT INTO "${setup.schema}".sends (id, instance_id, status) VALUES ($1, $2, 'reserved')`;
  let sequence = 0;
  return async (number) => {
    await pool.query({ name: 'floor-insert', text, values: [`3EB0${++sequence}`, number] });
  };
}

/**
 * The floor's bare HTTP server. Split: passes each request's body on as a NATS request (to the
 * responder, as the gateway to the worker) and answers with its reply; single: commits itself and
 * answers ours' reply (one process, as `--topology single`).
 */
export function runHopHttp(): void {
  process.once('message', (setup: HopSetup) => {
    void (async () => {
      let answer: (body: string) => Promise<string>;
      if (setup.subject && setup.natsUrl) {
        const { connect } = await import('@nats-io/transport-node');
        const connection = await connect({ servers: setup.natsUrl.split(','), noAsyncTraces: true });
        const subject = setup.subject;
        answer = async (body) => (await connection.request(subject, body, { timeout: 30_000 })).string();
      } else {
        const commit = await floorCommitter(setup);
        answer = async (body) => {
          await commit(String((JSON.parse(body) as { number?: string }).number));
          return setup.reply;
        };
      }
      const server = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          JSON.parse(body);
          answer(body).then(
            (text) => {
              res.setHeader('content-type', 'application/json');
              res.end(text);
            },
            (error: unknown) => {
              res.statusCode = 500;
              res.end(String((error as Error)?.message ?? error));
            },
          );
        });
      });
      server.listen(0, '127.0.0.1', () => send({ port: (server.address() as AddressInfo).port }));
    })();
  });
}

/** The floor's bare NATS responder (split): one durable commit per request, then ours' reply. */
export function runHopNats(): void {
  process.once('message', (setup: HopSetup) => {
    void (async () => {
      const { connect } = await import('@nats-io/transport-node');
      const commit = await floorCommitter(setup);
      const connection = await connect({ servers: String(setup.natsUrl).split(','), noAsyncTraces: true });
      connection.subscribe(String(setup.subject), {
        callback: (error, message) => {
          if (error) return;
          const input = JSON.parse(message.string()) as { number?: string };
          commit(String(input.number)).then(
            () => message.respond(setup.reply),
            () => undefined,
          );
        },
      });
      await connection.flush();
      send({ ready: true });
    })();
  });
}
