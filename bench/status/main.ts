/**
 * bench/status: text statuses (stories) to audiences of growing size, through the whole stack
 * (`POST /send/status` → gateway → bus → session worker → Baileys → the simulator's server ack) next to
 * a bare Baileys socket calling `sendMessage('status@broadcast', {text}, {statusJidList})` against the
 * same simulator and the same recipients, awaited until the server's ack too. The sides run one after
 * the other in one process; the simulator runs in load mode (phones do not decrypt).
 *
 *   npm run bench -- status [--sizes 1,10,100,300] [--n 20]
 *
 * An answer other than Sent/Delivered/Read (e.g. Pending: no server ack within the worker's 15 s) fails
 * the run with the status and the time it took.
 *
 * A status costs one sender-key message per recipient device, so its price grows with the audience on
 * both sides; what ours adds is the audience query, the recipients' on-WhatsApp check and the store.
 * Prints one JSON object on stdout (progress on stderr).
 */
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { memoryKeyStore, serverAcks } from '../support/sim-clients';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i].replace(/^--/, ''), process.argv[i + 1]);
const SIZES = (args.get('sizes') ?? '1,10,100,300')
  .split(',')
  .map(Number)
  .filter((size) => size > 0);
const N = Number(args.get('n') ?? 20);
const RECIPIENT_PREFIX = '5547';
const log = (line: string) => process.stderr.write(`[status] ${line}\n`);
const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const recipientPhone = (index: number) => `${RECIPIENT_PREFIX}${String(index).padStart(8, '0')}`;

interface Timing {
  sent: number;
  p50Ms: number;
  p90Ms: number;
  maxMs: number;
}

/** N sequential operations (a status is not something one account posts 50 at a time). */
async function measure(operation: () => Promise<void>): Promise<Timing> {
  await operation(); // warm-up: sessions with every recipient device
  const latencies: number[] = [];
  for (let i = 0; i < N; i++) {
    const t0 = process.hrtime.bigint();
    await operation();
    latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  latencies.sort((a, b) => a - b);
  const at = (q: number) => round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]);
  return { sent: latencies.length, p50Ms: at(0.5), p90Ms: at(0.9), maxMs: round(latencies[latencies.length - 1]) };
}

async function main(): Promise<void> {
  const { startSimulator } = await import('@gw/wa-sim');
  const baileys = await import('@whiskeysockets/baileys');
  const running = await startSimulator({ logLevel: 'silent', phoneDecrypt: false, initialPrekeyCount: 1000, media: false });
  baileys.WA_CERT_DETAILS.PUBLIC_KEY = Buffer.from(running.rootPublicKey, 'base64');
  const sim = running.sim;
  const largest = Math.max(...SIZES);
  for (let index = 0; index < largest; index++) sim.createAccount({ phone: recipientPhone(index) });
  const recipients = (size: number) => Array.from({ length: size }, (_, index) => recipientPhone(index));
  const result: Record<string, unknown> = { n: N, sizes: SIZES };

  // --- bare: one Baileys socket, in-memory auth -------------------------------------------------
  sim.createAccount({ phone: '5531000000001' });
  const bare = sim.provisionDevice('5531000000001');
  const creds = JSON.parse(JSON.stringify(bare.creds, baileys.BufferJSON.replacer), baileys.BufferJSON.reviver);
  const sock = baileys.makeWASocket({
    auth: { creds, keys: memoryKeyStore() },
    waWebSocketUrl: running.websocketUrl,
    logger: pino({ level: 'silent' }) as never,
    markOnlineOnConnect: false,
    syncFullHistory: false,
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('bare socket did not open')), 60_000);
    sock.ev.on('connection.update', (update) => {
      if (update.connection === 'open') {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  await sleep(1000);
  const acks = serverAcks(sock);
  const bareResults: Record<number, Timing> = {};
  for (const size of SIZES) {
    const jids = recipients(size).map((phone) => `${phone}@s.whatsapp.net`);
    bareResults[size] = await measure(async () => {
      const messageId = `3EB0${randomBytes(9).toString('hex').toUpperCase()}`;
      const acked = new Promise<void>((resolve, reject) => acks.set(messageId, (error) => (error ? reject(new Error(`ack error ${error}`)) : resolve())));
      await sock.sendMessage('status@broadcast', { text: `bench status to ${size}` }, { messageId, statusJidList: jids, backgroundColor: 'ff424242' });
      await acked;
    });
    log(`bare, ${size} recipients: p50 ${bareResults[size].p50Ms} ms`);
  }
  sock.end(undefined);

  // --- ours: gateway HTTP app + session worker, one in-process bus ---------------------------------
  const { openDatabase } = await import('@gw/persistence');
  const { InProcessBus } = await import('@gw/bus');
  const { SessionWorker, sessionWorkerConfig } = await import('@gw/sessions');
  const { EnvReader } = await import('@gw/platform');
  const { loadGatewayConfig } = await import('../../apps/gateway/src/runtime/gateway-config');
  const { createHttpApp } = await import('../../apps/gateway/src/http-app');
  const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const dataSource = await openDatabase({ url: databaseUrl, schema, poolSize: 10 });
  const oursResults: Record<number, Timing> = {};
  try {
    sim.createAccount({ phone: '5532000000001' });
    const device = sim.provisionDevice('5532000000001');
    await dataSource.query(
      `INSERT INTO instances (id, token, name, desired_state, paired, owner) VALUES ('rstatus1', 'tok-status', 'status-bench', 'connected', true, '5532000000001')`,
    );
    await dataSource.query(`INSERT INTO auth_creds (instance_id, value) VALUES ('rstatus1', $1)`, [JSON.stringify(device.creds, baileys.BufferJSON.replacer)]);
    for (const phone of recipients(largest)) {
      await dataSource.query(`INSERT INTO contacts (instance_id, jid, contact_name, in_address_book) VALUES ('rstatus1', $1, $2, true)`, [
        `${phone}@s.whatsapp.net`,
        `Contact ${phone}`,
      ]);
    }
    const bus = new InProcessBus();
    const logger = pino({ level: 'silent' });
    const config = loadGatewayConfig(new EnvReader({ DATABASE_URL: databaseUrl, PORT: '0', LOG_LEVEL: 'silent', RPC_TIMEOUT_MS: '60000' }), []);
    const app = await createHttpApp({ config, dataSource, bus, logger });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const baseUrl = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
    const worker = new SessionWorker({
      dataSource,
      bus,
      logger,
      config: sessionWorkerConfig({
        workerId: 'status-bench',
        simulator: { websocketUrl: running.websocketUrl, rootPublicKey: Buffer.from(running.rootPublicKey, 'base64') },
      }),
    });
    await worker.start();
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const [{ n }]: Array<{ n: number }> = await dataSource.query(`SELECT count(*)::int AS n FROM instances WHERE status = 'connected'`);
      if (n === 1) break;
      await sleep(250);
    }
    await sleep(1000);
    for (const size of SIZES) {
      oursResults[size] = await measure(async () => {
        const started = Date.now();
        const response = await fetch(`${baseUrl}/send/status`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', token: 'tok-status' },
          body: JSON.stringify({ type: 'text', text: `bench status to ${size}`, recipients: recipients(size) }),
        });
        const body = (await response.json()) as { status?: string; error?: string };
        if (response.status !== 200 || !['Sent', 'Delivered', 'Read'].includes(body.status ?? ''))
          throw new Error(`HTTP ${response.status}, status ${body.status} after ${Date.now() - started} ms: ${body.error ?? ''}`);
      });
      log(`ours, ${size} recipients: p50 ${oursResults[size].p50Ms} ms`);
    }
    await app.close();
    await worker.stop();
    await bus.close();
  } finally {
    await dataSource.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await dataSource.destroy();
    await running.stop();
  }
  result.bySize = SIZES.map((size) => ({
    recipients: size,
    bare: bareResults[size],
    ours: oursResults[size],
    p50Ratio: round(oursResults[size].p50Ms / bareResults[size].p50Ms, 2),
  }));
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${(error as Error)?.stack ?? error}\n`);
    process.exit(1);
  },
);
