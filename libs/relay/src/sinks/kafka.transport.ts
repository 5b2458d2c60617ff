import { isIP, connect as netConnect, Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { ISocketFactory, KafkaConfig, logLevel, Message, Producer, SASLOptions } from 'kafkajs';
import type { WebhookRow } from '@gw/persistence';
import { guardedLookup, SsrfError, type SsrfGuard, withTraceHeaders } from '@gw/platform';
import { type BrokerUrl, checkBrokerHosts, displayBrokerUrl, parseBrokerUrl } from './broker-url';
import { ConnectionPool } from './connection-pool';
import { describeFailure, type SendOutcome, type SinkMessage, type SinkTransport, warmEach } from './transport';

/** A Kafka sink's options: the topic every event goes to (keyed by instance). */
export interface KafkaSinkOptions {
  topic: string;
}

export const KAFKA_SINK_DEFAULTS: KafkaSinkOptions = { topic: 'wa-gateway-events' };

export function kafkaSinkOptions(options: Record<string, unknown>): KafkaSinkOptions {
  return { topic: typeof options.topic === 'string' && options.topic ? options.topic : KAFKA_SINK_DEFAULTS.topic };
}

/**
 * What one event becomes on Kafka: keyed by instance (one partition per instance, so its events stay
 * in order), the envelope as value, the stable id in the `message-id` header.
 */
export function kafkaRecord(options: KafkaSinkOptions, message: SinkMessage): { topic: string; message: Message } {
  return {
    topic: options.topic,
    message: {
      key: message.event.instanceId,
      value: message.body,
      // Tracing on: `traceparent` of the delivery span, as a webhook request carries it.
      headers: withTraceHeaders({
        'message-id': message.id,
        'content-type': 'application/json',
        instance: message.event.instanceId,
        event: message.event.eventType,
      }),
    },
  };
}

/**
 * kafkajs's client settings for a `kafka://` (or TLS `kafkas://`) URL: brokers from the host list, SASL
 * from the user info (`?sasl=scram-sha-256|scram-sha-512`, plain by default), sockets through the SSRF
 * guard (brokers the cluster advertises are dialled too, so each connection is checked).
 */
export function kafkaClientConfig(url: BrokerUrl, ssrf: SsrfGuard, timeoutMs: number): KafkaConfig {
  const mechanism = (url.params.get('sasl') ?? 'plain').toLowerCase();
  if (!['plain', 'scram-sha-256', 'scram-sha-512'].includes(mechanism)) throw new Error(`sasl must be plain, scram-sha-256 or scram-sha-512`);
  return {
    clientId: url.params.get('clientId') ?? 'wa-gateway',
    brokers: url.hosts.map(({ host, port }) => `${host.includes(':') ? `[${host}]` : host}:${port}`),
    ssl: url.scheme === 'kafkas',
    ...(url.username ? { sasl: { mechanism, username: url.username, password: url.password } as SASLOptions } : {}),
    connectionTimeout: timeoutMs,
    requestTimeout: timeoutMs,
    retry: { retries: 2, initialRetryTime: 200, maxRetryTime: 2_000 },
    // kafkajs's logLevel.NOTHING: the package itself is loaded only when a producer is opened (open()).
    logLevel: 0 as logLevel.NOTHING,
    socketFactory: guardedSocketFactory(ssrf),
  };
}

function guardedSocketFactory(ssrf: SsrfGuard): ISocketFactory {
  const lookup = guardedLookup(ssrf) as never;
  return ({ host, port, ssl, onConnect }) => {
    if (isIP(host) && !ssrf.isAddressAllowed(host)) {
      const socket = new Socket();
      process.nextTick(() => socket.destroy(new SsrfError(`refused connection to a private or reserved address (${host})`)));
      return socket;
    }
    const socket = ssl
      ? tlsConnect({ ...ssl, host, port, servername: isIP(host) ? undefined : host, lookup }, onConnect)
      : netConnect({ host, port, lookup }, onConnect);
    socket.setKeepAlive(true, 30_000);
    return socket;
  };
}

/**
 * Kafka through kafkajs: an idempotent producer per broker list (acks from all in-sync replicas, one
 * request in flight, so a retry inside the client neither duplicates nor reorders). An attempt is
 * delivered once the broker acknowledged it.
 */
export class KafkaTransport implements SinkTransport {
  readonly kind = 'kafka' as const;
  private readonly producers: ConnectionPool<Producer>;

  constructor(private readonly config: { ssrf: SsrfGuard; requestTimeoutMs: number; connectionIdleMs?: number }) {
    this.producers = new ConnectionPool({
      open: (url) => this.open(url),
      close: (producer) => producer.disconnect(),
      opened: (url, producer) => void producer.on(producer.events.DISCONNECT, () => this.producers.forget(url, producer)),
      idleMs: config.connectionIdleMs,
    });
  }

  receiverKey(target: WebhookRow): string {
    return `kafka ${displayBrokerUrl(target.url)}`;
  }

  describe(target: WebhookRow): string {
    return `${displayBrokerUrl(target.url)} topic=${kafkaSinkOptions(target.options).topic}`;
  }

  async send(target: WebhookRow, message: SinkMessage): Promise<SendOutcome> {
    let producer: Producer;
    try {
      producer = await this.producers.get(target.url);
    } catch (error) {
      return { ok: false, statusCode: null, error: `connecting: ${describeFailure(error)}` };
    }
    try {
      const record = kafkaRecord(kafkaSinkOptions(target.options), message);
      await producer.send({ topic: record.topic, acks: -1, timeout: this.config.requestTimeoutMs, messages: [record.message] });
      return { ok: true, statusCode: 0 };
    } catch (error) {
      return { ok: false, statusCode: null, error: describeFailure(error) };
    }
  }

  warmUp(targets: WebhookRow[]): Promise<number> {
    return warmEach(
      targets,
      (target) => target.url,
      async (target) => void (await this.producers.get(target.url)),
    );
  }

  async closeUnused(inUse: WebhookRow[]): Promise<void> {
    const urls = new Set(inUse.map((target) => target.url));
    await this.producers.retain((url) => urls.has(url));
  }

  close(): Promise<void> {
    return this.producers.close();
  }

  private async open(url: string): Promise<Producer> {
    const parsed = parseBrokerUrl('kafka', url);
    await checkBrokerHosts(this.config.ssrf, parsed);
    // Loaded with the first Kafka sink's producer, not with every service that carries the sinks' code: ~40 ms of
    // CPU at start (a CPU profile of each service's start) for a broker few deployments use.
    const { Kafka } = await import('kafkajs');
    const producer = new Kafka(kafkaClientConfig(parsed, this.config.ssrf, this.config.requestTimeoutMs)).producer({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: true,
    });
    await producer.connect();
    return producer;
  }
}
