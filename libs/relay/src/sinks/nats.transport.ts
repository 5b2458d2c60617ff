import { isIP } from 'node:net';
import { connect, headers, NoRespondersError, type NatsConnection, type NodeConnectionOptions } from '@nats-io/transport-node';
import type { WebhookRow } from '@gw/persistence';
import { type SsrfGuard, withTraceHeaders } from '@gw/platform';
import { checkedBrokerAddresses, displayBrokerUrl, parseBrokerUrl } from './broker-url';
import { ConnectionPool } from './connection-pool';
import { describeFailure, fillTemplate, type SendOutcome, type SinkMessage, type SinkTransport, warmEach } from './transport';

/** Reconnection attempts (500 ms apart) before a connection to a server that went away is closed. */
const NATS_RECONNECT_ATTEMPTS = 20;

/** A NATS sink's options: subjects `<subjectPrefix>.<instance>.<event>`, captured by a JetStream stream. */
export interface NatsSinkOptions {
  subjectPrefix: string;
  /** The stream capturing `<subjectPrefix>.>`; created (file storage, 2 min duplicate window) when missing. */
  stream: string;
}

export const NATS_SINK_DEFAULTS: NatsSinkOptions = { subjectPrefix: 'wa-gateway.events', stream: 'WA_GATEWAY_EVENTS' };

/**
 * First subject tokens the gateway's own bus uses (contracts `Subjects`: `instance.<id>.<op>`,
 * `sessions.*`, `events.<id>`, `queue.<id>`, `sinks.changed`) or NATS reserves (`_INBOX`): a sink pointed at the
 * gateway's own NATS (an operator may allow its address for webhooks) must not publish where the
 * services listen, nor make a stream capture their traffic.
 */
export const RESERVED_SUBJECT_ROOTS = ['instance', 'sessions', 'events', 'queue', 'sinks', '_INBOX'] as const;

/** Why a subject prefix cannot be used, or null. */
export function subjectPrefixProblem(prefix: string): string | null {
  const root = prefix.split('.')[0];
  return (RESERVED_SUBJECT_ROOTS as readonly string[]).includes(root)
    ? `subjectPrefix must not start with ${RESERVED_SUBJECT_ROOTS.join(', ')} (subjects of the gateway's own bus)`
    : null;
}

/** One subject token: no dots, wildcards or white space. */
const token = (text: string) => text.replace(/[.*>\s]/g, '_') || '_';

export function natsSinkOptions(options: Record<string, unknown>): NatsSinkOptions {
  return {
    subjectPrefix: typeof options.subjectPrefix === 'string' && options.subjectPrefix ? options.subjectPrefix : NATS_SINK_DEFAULTS.subjectPrefix,
    stream: typeof options.stream === 'string' && options.stream ? options.stream : NATS_SINK_DEFAULTS.stream,
  };
}

/** The subject an event is published on, and its JetStream dedupe header (the event's stable id). */
export function natsPublication(options: NatsSinkOptions, message: SinkMessage): { subject: string; headers: Record<string, string> } {
  return {
    subject: `${options.subjectPrefix}.${fillTemplate('{instance}.{event}', message.event, token)}`,
    // Tracing on: `traceparent` of the delivery span, as a webhook request carries it.
    headers: withTraceHeaders({
      'Nats-Msg-Id': message.id,
      'Content-Type': 'application/json',
      'Wa-Instance': message.event.instanceId,
      'Wa-Event': message.event.eventType,
    }),
  };
}

/** The stream a sink makes when it is missing: file storage, capturing `<prefix>.>`, a 2 min duplicate window (Nats-Msg-Id). */
export function natsStreamConfig(options: NatsSinkOptions): Record<string, unknown> {
  return { name: options.stream, subjects: [`${options.subjectPrefix}.>`], storage: 'file', retention: 'limits', duplicate_window: 120_000_000_000 };
}

interface JsApiError {
  error?: { code?: number; err_code?: number; description?: string };
}

/**
 * NATS JetStream over the core client (`@nats-io/transport-node`): a JetStream publish is a request to
 * the subject, answered by the stream with a PubAck once stored; the `Nats-Msg-Id` header makes a
 * repeated attempt (a lost ack, a relay crash) a duplicate the stream drops. A connection per server
 * list is kept (cluster gossip ignored: only the hosts that passed the SSRF guard are dialled).
 */
export class NatsTransport implements SinkTransport {
  readonly kind = 'nats' as const;
  private readonly connections: ConnectionPool<NatsConnection>;
  /** `<url> <stream>` known to exist (or made) on that connection. */
  private readonly streams = new Set<string>();

  constructor(private readonly config: { ssrf: SsrfGuard; requestTimeoutMs: number; connectionIdleMs?: number }) {
    this.connections = new ConnectionPool({
      open: (url) => this.open(url),
      close: (connection) => connection.close(),
      opened: (url, connection) => void connection.closed().then(() => this.connections.forget(url, connection)),
      idleMs: config.connectionIdleMs,
    });
  }

  /** How many server connections are open or opening. */
  get openConnections(): number {
    return this.connections.size;
  }

  receiverKey(target: WebhookRow): string {
    return `nats ${displayBrokerUrl(target.url)}`;
  }

  describe(target: WebhookRow, message: SinkMessage): string {
    return `${displayBrokerUrl(target.url)} subject=${natsPublication(natsSinkOptions(target.options), message).subject}`;
  }

  async send(target: WebhookRow, message: SinkMessage): Promise<SendOutcome> {
    const options = natsSinkOptions(target.options);
    const reserved = subjectPrefixProblem(options.subjectPrefix);
    if (reserved) return { ok: false, statusCode: null, error: reserved };
    let connection: NatsConnection;
    try {
      connection = await this.connections.get(target.url);
    } catch (error) {
      return { ok: false, statusCode: null, error: `connecting: ${describeFailure(error)}` };
    }
    try {
      await this.ensureStream(connection, target.url, options);
      const publication = natsPublication(options, message);
      const header = headers();
      for (const [name, value] of Object.entries(publication.headers)) header.set(name, value);
      const reply = await connection.request(publication.subject, message.body, { timeout: this.config.requestTimeoutMs, headers: header });
      const ack = reply.json<JsApiError & { stream?: string; seq?: number }>();
      if (ack.error) return { ok: false, statusCode: ack.error.code ?? null, error: `JetStream refused the message: ${ack.error.description ?? 'error'}` };
      return { ok: true, statusCode: 0 };
    } catch (error) {
      if (error instanceof NoRespondersError || (error as { cause?: unknown }).cause instanceof NoRespondersError) {
        this.streams.delete(`${target.url} ${options.stream}`);
        return { ok: false, statusCode: 503, error: `no JetStream stream takes ${options.subjectPrefix}.> (stream ${options.stream})` };
      }
      return { ok: false, statusCode: null, error: describeFailure(error) };
    }
  }

  warmUp(targets: WebhookRow[]): Promise<number> {
    const usable = targets.filter((target) => !subjectPrefixProblem(natsSinkOptions(target.options).subjectPrefix));
    return warmEach(
      usable,
      (target) => `${target.url}\u0000${natsSinkOptions(target.options).stream}`,
      async (target) => this.ensureStream(await this.connections.get(target.url), target.url, natsSinkOptions(target.options)),
    );
  }

  async closeUnused(inUse: WebhookRow[]): Promise<void> {
    const urls = new Set(inUse.map((target) => target.url));
    for (const key of this.streams) if (![...urls].some((url) => key.startsWith(`${url} `))) this.streams.delete(key);
    await this.connections.retain((url) => urls.has(url));
  }

  close(): Promise<void> {
    return this.connections.close();
  }

  private async open(url: string): Promise<NatsConnection> {
    const parsed = parseBrokerUrl('nats', url);
    // The client resolves host names again at every reconnection, past the SSRF guard: it dials the
    // addresses the guard passed now instead. TLS checks the certificate against the host name, which
    // works for one name (the usual single host or a list of one name's addresses); several names over
    // TLS are dialled by name, the guard having checked each of them now.
    const checked = await checkedBrokerAddresses(this.config.ssrf, parsed);
    const names = [...new Set(parsed.hosts.map(({ host }) => host))];
    const tls = parsed.scheme === 'tls';
    const pinned = !tls || names.length === 1;
    const hostPort = (host: string, port: number) => `${host.includes(':') ? `[${host}]` : host}:${port}`;
    const auth = parsed.password ? { user: parsed.username, pass: parsed.password } : parsed.username ? { token: parsed.username } : {};
    return connect({
      servers: pinned ? checked.map(({ address, port }) => hostPort(address, port)) : parsed.hosts.map(({ host, port }) => hostPort(host, port)),
      ...auth,
      // The client passes its tls options through to Node's tls.connect (its type names only some of them).
      ...(tls ? { tls: (pinned && !isIP(names[0]) ? { servername: names[0] } : {}) as unknown as NodeConnectionOptions['tls'] } : {}),
      name: 'wa-gateway event sink',
      ignoreClusterUpdates: true,
      // A server that stays away closes the connection after ~10 s of attempts; the next delivery
      // attempt opens a new one, resolving and checking the names again.
      maxReconnectAttempts: NATS_RECONNECT_ATTEMPTS,
      reconnectTimeWait: 500,
      timeout: this.config.requestTimeoutMs,
      // As the bus (nats-bus.ts): without it the client captures a stack for every publish's request and its
      // timer, in case it fails (~8 % of the relay's CPU in bench/webhooks `--sink nats`, session 62). A failure
      // keeps its class, message and cause (describeFailure, NoRespondersError); only the caller's stack is not attached.
      noAsyncTraces: true,
    });
  }

  /** Looks the stream up once per connection; creates it, capturing `<prefix>.>`, when it does not exist. */
  private async ensureStream(connection: NatsConnection, url: string, options: NatsSinkOptions): Promise<void> {
    const key = `${url} ${options.stream}`;
    if (this.streams.has(key)) return;
    const timeout = this.config.requestTimeoutMs;
    const info = (await connection.request(`$JS.API.STREAM.INFO.${options.stream}`, '', { timeout })).json<JsApiError>();
    if (info.error?.err_code === 10059 || info.error?.code === 404) {
      const created = (
        await connection.request(`$JS.API.STREAM.CREATE.${options.stream}`, JSON.stringify(natsStreamConfig(options)), { timeout })
      ).json<JsApiError>();
      if (created.error) throw new Error(`creating stream ${options.stream}: ${created.error.description ?? 'error'}`);
    } else if (info.error) throw new Error(`stream ${options.stream}: ${info.error.description ?? 'error'}`);
    this.streams.add(key);
  }
}
