/**
 * The bench's clients of the cluster: Postgres through HAProxy (its own reads wait out a failover), the API
 * over two gateways behind a client-side balancer, and the webhook receiver the relays deliver to.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import { sleep } from './options';

export type Query = <T>(sql: string, parameters?: unknown[]) => Promise<T[]>;

export async function openQuery(url: string): Promise<{ query: Query; close(): Promise<void> }> {
  const { Pool } = await import('pg');
  const pool = new Pool({ connectionString: url, max: 4, connectionTimeoutMillis: 3_000 });
  pool.on('error', () => undefined);
  const query: Query = async <T>(sql: string, parameters?: unknown[]) => {
    const deadline = Date.now() + 90_000;
    for (;;) {
      try {
        return (await pool.query(sql, parameters)).rows as T[];
      } catch (error) {
        if (Date.now() > deadline || (error as { code?: string }).code?.match(/^(42|22|23)/)) throw error;
        await sleep(500);
      }
    }
  };
  return { query, close: () => pool.end() };
}

interface Answer {
  status: number;
  body: { error?: unknown; status?: unknown } | undefined;
  /** Answered by the other gateway after this one refused the connection. */
  rerouted: boolean;
}

/** How often the balancer asks each gateway's `/ready` (a gateway answers 503 for DRAIN_DELAY_MS, 1 s here, before it stops accepting). */
const READY_POLL_MS = 200;

/**
 * The API through a client-side balancer that does what a load balancer in front of the gateways does
 * (HAProxy's `httpchk`, a Kubernetes Service's readiness): it polls each gateway's `/ready` and sends to
 * the ready ones only, round robin; with none ready, to any. A connection refused (a gateway between its
 * stop and its start) goes to the next gateway at once (`rerouted`). Without the polling, a request that
 * connected in the instant the draining gateway stopped accepting (queued in its listen backlog) was
 * reset: 2 of 6,470 requests in a rolling restart (`connect ECONNRESET`), a connection no balancer that
 * watches `/ready` would have opened.
 */
export function apiClient(gateways: string[]) {
  let next = 0;
  const ready = new Map<string, boolean>(gateways.map((base) => [base, true]));
  const poll = async () => {
    const { request } = await import('undici');
    await Promise.all(
      gateways.map(async (base) => {
        try {
          const response = await request(`${base}/ready`, { reset: true, headersTimeout: READY_POLL_MS * 2, bodyTimeout: READY_POLL_MS * 2 });
          await response.body.dump();
          ready.set(base, response.statusCode === 200);
        } catch {
          ready.set(base, false);
        }
      }),
    );
  };
  const poller = setInterval(() => void poll(), READY_POLL_MS);
  poller.unref();
  const order = (): string[] => {
    const first = next++;
    const rotated = gateways.map((_, i) => gateways[(first + i) % gateways.length]);
    const live = rotated.filter((base) => ready.get(base));
    return live.length > 0 ? [...live, ...rotated.filter((base) => !ready.get(base))] : rotated;
  };
  return async (method: 'GET' | 'POST', path: string, headers: Record<string, string>, body?: unknown): Promise<Answer> => {
    const { request } = await import('undici');
    const bases = order();
    let rerouted = false;
    for (let attempt = 0; attempt < bases.length * 3; attempt++) {
      const base = bases[attempt % bases.length];
      try {
        // One connection per request (reset): a gateway that stops accepting refuses the next one
        // outright, never a request written into a keep-alive socket it is closing.
        const response = await request(`${base}${path}`, {
          method,
          headers: { 'content-type': 'application/json', ...headers },
          body: body === undefined ? undefined : JSON.stringify(body),
          reset: true,
          headersTimeout: 90_000,
          bodyTimeout: 90_000,
        });
        const text = await response.body.text();
        let parsed: Answer['body'];
        try {
          parsed = JSON.parse(text) as Answer['body'];
        } catch {
          parsed = { error: text.slice(0, 160) };
        }
        return { status: response.statusCode, body: parsed, rerouted };
      } catch (error) {
        const code = (error as { code?: string }).code;
        if (code === 'ECONNREFUSED') {
          rerouted = true;
          ready.set(base, false);
          if (attempt >= bases.length - 1) await sleep(200);
          continue;
        }
        return { status: 0, body: { error: `${code ?? ''} ${(error as Error).message}`.trim().slice(0, 160) }, rerouted };
      }
    }
    return { status: 0, body: { error: 'every gateway refused the connection' }, rerouted };
  };
}

/** What one POST carrying an inbound marker was: its delivery id header, event type and message (to tell a second POST of one event from another event carrying the text). */
export interface ReceivedPost {
  webhookId: string;
  eventType: string;
  messageId: string;
  fromMe: boolean;
  /** When it arrived (epoch ms): a second POST of one event 10 s after the first is a request the relay gave up on. */
  at: number;
}

interface HookBody {
  EventType?: string;
  message?: { messageid?: string; fromMe?: boolean; text?: string };
}

function parseHook(text: string): HookBody | null {
  try {
    return JSON.parse(text) as HookBody;
  } catch {
    return null;
  }
}

/** The role argument of the bench's own process when forked as the webhook receiver. */
export const WEBHOOK_RECEIVER_ROLE = 'webhook-receiver';

export interface WebhookReceiver {
  url: string;
  /** Per inbound marker: POSTs whose event's own message carried it, and what each was. As of the last `refresh`. */
  counts: Map<string, number>;
  posts: Map<string, ReceivedPost[]>;
  /** Reads the receiver's counts and posts as they are now. */
  refresh(): Promise<void>;
  close(): void;
}

/**
 * The webhook receiver, in a child process of its own: in the bench's process it answered late whenever
 * the bench's own traffic (1,000 instances' sends and probes) kept its event loop busy, past the relays'
 * 10 s timeout, and each request the relay gave up on was posted again (runs 67-69: 34-112 "doubles", all
 * `timed out` attempts in webhook_errors). A receiver that answers at once is what a deployment's is meant
 * to be; the relays' timeouts and retries are theirs to show, not the bench's load.
 */
export async function webhookReceiver(): Promise<WebhookReceiver> {
  const child: ChildProcess = fork(process.argv[1], [WEBHOOK_RECEIVER_ROLE], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (message) => resolve((message as { url: string }).url));
    child.once('exit', (code) => reject(new Error(`the webhook receiver exited (${code}) before it listened`)));
  });
  const receiver: WebhookReceiver = {
    url,
    counts: new Map(),
    posts: new Map(),
    refresh: () =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('the webhook receiver did not report within 30 s')), 30_000);
        child.once('message', (message) => {
          clearTimeout(timer);
          const report = message as { counts: [string, number][]; posts: [string, ReceivedPost[]][] };
          receiver.counts = new Map(report.counts);
          receiver.posts = new Map(report.posts);
          resolve();
        });
        child.send({ report: true });
      }),
    close: () => void child.kill(),
  };
  return receiver;
}

/** The receiver's process: listens on loopback, tells its parent the URL, reports its counts when asked; returns when the parent goes. */
export async function serveWebhookReceiver(): Promise<void> {
  const counts = new Map<string, number>();
  const posts = new Map<string, ReceivedPost[]>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const body = parseHook(text);
      // The event's own message only: another message's event carries an earlier text in its chat record
      // (the chat's last message: a message WhatsApp delivered again after a worker died is older than what
      // the chat shows), which is not that message delivered twice (runs 9-11).
      const own = body ? (body.message?.text ?? '') : text;
      const markers = new Set(own.match(/chaos \S+ \S+ inbound \d+-[a-z0-9]+/g) ?? []);
      if (markers.size > 0 && body) {
        const post: ReceivedPost = {
          webhookId: String(req.headers['webhook-id'] ?? ''),
          eventType: body.EventType ?? '',
          messageId: body.message?.messageid ?? '',
          fromMe: body.message?.fromMe === true,
          at: Date.now(),
        };
        for (const marker of markers) posts.set(marker, [...(posts.get(marker) ?? []), post]);
      }
      for (const marker of markers) counts.set(marker, (counts.get(marker) ?? 0) + 1);
      res.writeHead(200).end('{}');
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  process.on('message', () => process.send?.({ counts: [...counts], posts: [...posts] }));
  process.send?.({ url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook` });
  await new Promise<void>((done) => process.once('disconnect', done));
}
