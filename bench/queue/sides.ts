/** The children: the simulator, the bare HTTP loop (the baseline) and ours (the gateway, later a worker and a dispatcher). */
import { createServer } from 'node:http';
import pino from 'pino';
import { simControl } from '../support/sim-clients';
import { args, DRAIN_INSTANCES, INSTANCES, PEER, send, type SimInfo } from './options';

export async function runSim(): Promise<void> {
  const { startSimulator } = await import('@gw/wa-sim');
  // Load mode: phones acknowledge without decrypting.
  const sim = await startSimulator({ logLevel: 'silent', phoneDecrypt: false, initialPrekeyCount: 1000, media: false });
  await simControl({ controlUrl: sim.controlUrl }, 'POST', '/sim/accounts', { phone: PEER });
  send({ websocketUrl: sim.websocketUrl, controlUrl: sim.controlUrl, rootPublicKey: sim.rootPublicKey } satisfies SimInfo);
  process.on('disconnect', () => void sim.stop().finally(() => process.exit(0)));
}

export async function runBare(databaseUrl: string, schema: string): Promise<void> {
  const pg = await import('pg');
  const Pool = pg.default?.Pool ?? pg.Pool;
  const pool = new Pool({ connectionString: databaseUrl, max: 20, options: `-c search_path=${schema}` });
  await pool.query(
    `CREATE TABLE IF NOT EXISTS bare_sends (id bigserial PRIMARY KEY, instance_id text NOT NULL, request jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`,
  );
  const tokens = new Map<string, string>(Array.from({ length: INSTANCES }, (_, index) => [`tok-${index}`, `inst-${index}`]));
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const answer = (status: number, body: unknown) => {
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(JSON.stringify(body));
      };
      const instance = tokens.get(String(request.headers.token));
      if (!instance) return answer(401, { error: 'Invalid token' });
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>;
      } catch {
        return answer(400, { error: 'bad json' });
      }
      pool.query(`INSERT INTO bare_sends (instance_id, request) VALUES ($1, $2::jsonb) RETURNING id`, [instance, JSON.stringify(body)]).then(
        (result) => answer(200, { id: String(result.rows[0].id), status: 'Queued' }),
        (error: Error) => answer(500, { error: error.message }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  send({ baseUrl: `http://127.0.0.1:${(server.address() as { port: number }).port}` });
  process.once('disconnect', () => {
    server.close();
    void pool.end().finally(() => process.exit(0));
  });
}

export async function runOurs(databaseUrl: string, schema: string, sim: SimInfo): Promise<void> {
  const { ChatRepository, InstanceRepository, openDatabase, SendQueueRepository } = await import('@gw/persistence');
  const { InProcessBus } = await import('@gw/bus');
  const { SessionWorker, sessionWorkerConfig } = await import('@gw/sessions');
  const { AsyncDispatcher, ASYNC_DISPATCHER_DEFAULTS } = await import('@gw/dispatch');
  const { EnvReader, createLogger } = await import('@gw/platform');
  const { loadGatewayConfig } = await import('../../apps/gateway/src/runtime/gateway-config');
  const { createHttpApp } = await import('../../apps/gateway/src/http-app');
  const { AsyncQueueService } = await import('../../apps/gateway/src/message/async/async-queue.service');
  const dataSource = await openDatabase({ url: databaseUrl, schema, poolSize: 24 });
  const bus = new InProcessBus();
  // `--log error`: the stack's logs on stderr (to see why a request failed).
  const logger = args.get('log')
    ? (pino({ level: args.get('log') as string }, pino.destination(2)) as unknown as ReturnType<typeof createLogger>)
    : createLogger('bench', 'silent');
  // The dispatcher's hand-overs to the worker (`instance.<id>.send`): when each began and ended, to
  // measure the gap the dispatcher leaves between the end of one send and the start of the next.
  const handOvers: Array<{ instanceId: string; start: number; end: number }> = [];
  const request = bus.request.bind(bus);
  bus.request = async <T>(subject: string, data: unknown, options: Parameters<typeof request>[2]): Promise<T> => {
    const match = /^instance\.(.+)\.send$/.exec(subject);
    const start = performance.timeOrigin + performance.now();
    try {
      return await request<T>(subject, data, options);
    } finally {
      if (match) handOvers.push({ instanceId: match[1], start, end: performance.timeOrigin + performance.now() });
    }
  };
  // Thousands of sends a second on one token (the cancel step): the limiter still runs, but never refuses.
  const env: Record<string, string> = { DATABASE_URL: databaseUrl, PORT: '0', LOG_LEVEL: 'silent', RPC_TIMEOUT_MS: '30000', RATE_LIMIT_INSTANCE: '1000000/s' };
  const config = loadGatewayConfig(new EnvReader(env), []);
  const app = await createHttpApp({ config, dataSource, bus, logger });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const accepts = app.get(AsyncQueueService, { strict: false });
  // Counts the SQL statements of the accept path (pg's Client.query sees every statement TypeORM issues).
  const pg = await import('pg');
  const statements = new Map<string, number>();
  const clientPrototype = (pg.default?.Client ?? pg.Client).prototype as unknown as { query: (...call: unknown[]) => unknown };
  const originalQuery = clientPrototype.query;
  clientPrototype.query = function (this: unknown, ...call: unknown[]) {
    const first = call[0] as string | { text?: string };
    const text = (typeof first === 'string' ? first : (first?.text ?? '?')).replace(/\s+/g, ' ').slice(0, 80);
    statements.set(text, (statements.get(text) ?? 0) + 1);
    return originalQuery.apply(this, call);
  };
  let worker: InstanceType<typeof SessionWorker> | undefined;
  let dispatcher: InstanceType<typeof AsyncDispatcher> | undefined;

  process.on('message', (message: { do: string; [key: string]: unknown }) => {
    const done = (result: Record<string, unknown> = {}) => send({ done: message.do, ...result });
    const work = async () => {
      switch (message.do) {
        case 'accept-stats':
          return done({ stats: accepts.acceptStats(), sql: [...statements.entries()].sort((a, b) => b[1] - a[1]).slice(0, 8) });
        case 'hand-overs':
          return done({ handOvers: handOvers.filter((entry) => entry.start >= (message.since as number)) });
        case 'start-worker': {
          worker = new SessionWorker({
            dataSource,
            bus,
            logger,
            config: sessionWorkerConfig({
              workerId: 'bench-worker',
              capacity: DRAIN_INSTANCES,
              simulator: { websocketUrl: sim.websocketUrl, rootPublicKey: Buffer.from(sim.rootPublicKey, 'base64') },
            }),
          });
          await worker.start();
          return done();
        }
        case 'start-dispatcher':
          dispatcher = new AsyncDispatcher(
            new SendQueueRepository(dataSource),
            new InstanceRepository(dataSource),
            new ChatRepository(dataSource),
            bus,
            { ...ASYNC_DISPATCHER_DEFAULTS, dispatcherId: 'bench', maxLanes: DRAIN_INSTANCES },
            logger,
          );
          dispatcher.start();
          return done();
        case 'stop': {
          await dispatcher?.stop();
          await app.close();
          await worker?.stop();
          await bus.close();
          await dataSource.destroy();
          done();
          return setTimeout(() => process.exit(0), 100);
        }
      }
    };
    work().catch((error: unknown) => done({ error: String((error as Error)?.stack ?? error) }));
  });
  send({ baseUrl: `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}` });
}
