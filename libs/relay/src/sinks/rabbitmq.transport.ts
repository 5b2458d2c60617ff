import { connect, type ChannelModel, type ConfirmChannel, type Options } from 'amqplib';
import type { WebhookRow } from '@gw/persistence';
import { guardedLookup, type SsrfGuard, withTraceHeaders } from '@gw/platform';
import { checkBrokerHosts, displayBrokerUrl, parseBrokerUrl } from './broker-url';
import { ConnectionPool } from './connection-pool';
import { describeFailure, fillTemplate, type SendOutcome, type SinkMessage, type SinkTransport, warmEach } from './transport';

export const RABBITMQ_EXCHANGE_TYPES = ['topic', 'direct', 'fanout', 'headers'] as const;

/** A RabbitMQ sink's options: a durable exchange (declared when missing) and the routing key template. */
export interface RabbitMqOptions {
  /** `''` publishes through the default exchange (the routing key then names a queue). */
  exchange: string;
  exchangeType: (typeof RABBITMQ_EXCHANGE_TYPES)[number];
  /** `{instance}`, `{instanceName}` and `{event}` are filled in. */
  routingKey: string;
}

export const RABBITMQ_DEFAULTS: RabbitMqOptions = { exchange: 'wa-gateway', exchangeType: 'topic', routingKey: '{instance}.{event}' };

export function rabbitMqOptions(options: Record<string, unknown>): RabbitMqOptions {
  const type = options.exchangeType as RabbitMqOptions['exchangeType'];
  return {
    exchange: typeof options.exchange === 'string' ? options.exchange : RABBITMQ_DEFAULTS.exchange,
    exchangeType: RABBITMQ_EXCHANGE_TYPES.includes(type) ? type : RABBITMQ_DEFAULTS.exchangeType,
    routingKey: typeof options.routingKey === 'string' && options.routingKey ? options.routingKey : RABBITMQ_DEFAULTS.routingKey,
  };
}

/** What one event becomes on RabbitMQ: persistent, JSON, the event's stable id as `messageId`. */
export function rabbitMqPublication(options: RabbitMqOptions, message: SinkMessage): { exchange: string; routingKey: string; properties: Options.Publish } {
  const { event } = message;
  return {
    exchange: options.exchange,
    routingKey: fillTemplate(options.routingKey, event),
    properties: {
      persistent: true,
      messageId: message.id,
      contentType: 'application/json',
      contentEncoding: 'utf-8',
      type: event.eventType,
      appId: 'wa-gateway',
      timestamp: Math.floor(Date.now() / 1000),
      // Tracing on: `traceparent` of the delivery span, as a webhook request carries it.
      headers: withTraceHeaders({ instanceId: event.instanceId, event: event.eventType }),
    },
  };
}

/** One broker connection with a confirm channel, and the exchanges declared on it. */
interface Link {
  model: ChannelModel;
  channel: ConfirmChannel;
  declared: Set<string>;
  broken: boolean;
}

/**
 * RabbitMQ (AMQP 0-9-1) through amqplib. Each attempt publishes on a confirm channel and counts as
 * delivered only once the broker confirms it (a durable exchange, persistent messages: the broker has
 * written it). A connection is opened per broker URL and kept; when it drops (or a confirm does not
 * come in time) it is closed and the next attempt opens a new one, so a broker outage is a run of
 * failed attempts that the relay retries on its schedule.
 */
export class RabbitMqTransport implements SinkTransport {
  readonly kind = 'rabbitmq' as const;
  private readonly links: ConnectionPool<Link>;

  constructor(private readonly config: { ssrf: SsrfGuard; requestTimeoutMs: number; connectionIdleMs?: number }) {
    this.links = new ConnectionPool({ open: (url) => this.open(url), close: (link) => link.model.close(), idleMs: config.connectionIdleMs });
  }

  /** How many broker connections are open or opening. */
  get openConnections(): number {
    return this.links.size;
  }

  receiverKey(target: WebhookRow): string {
    return `rabbitmq ${displayBrokerUrl(target.url)}`;
  }

  describe(target: WebhookRow, message: SinkMessage): string {
    const options = rabbitMqOptions(target.options);
    return `${displayBrokerUrl(target.url)} exchange=${options.exchange || '(default)'} routingKey=${fillTemplate(options.routingKey, message.event)}`;
  }

  async send(target: WebhookRow, message: SinkMessage): Promise<SendOutcome> {
    const options = rabbitMqOptions(target.options);
    let link: Link;
    try {
      link = await this.links.get(target.url);
    } catch (error) {
      return { ok: false, statusCode: null, error: `connecting: ${describeFailure(error)}` };
    }
    try {
      await this.declare(link, options);
      const publication = rabbitMqPublication(options, message);
      await withTimeout(
        new Promise<void>((resolve, reject) => {
          link.channel.publish(publication.exchange, publication.routingKey, Buffer.from(message.body), publication.properties, (error: unknown) =>
            error ? reject(error instanceof Error ? error : new Error('the broker refused the message (nack)')) : resolve(),
          );
        }),
        this.config.requestTimeoutMs,
      );
      return { ok: true, statusCode: 0 };
    } catch (error) {
      // Whatever went wrong, the next attempt starts on a fresh connection.
      this.drop(target.url, link);
      return { ok: false, statusCode: null, error: describeFailure(error) };
    }
  }

  warmUp(targets: WebhookRow[]): Promise<number> {
    return warmEach(
      targets,
      (target) => `${target.url}\u0000${rabbitMqOptions(target.options).exchange}`,
      async (target) => {
        const link = await this.links.get(target.url);
        try {
          await this.declare(link, rabbitMqOptions(target.options));
        } catch (error) {
          this.drop(target.url, link);
          throw error;
        }
      },
    );
  }

  /** The exchange a publication goes to, declared (durable) once per connection when it is not the default one. */
  private async declare(link: Link, options: RabbitMqOptions): Promise<void> {
    if (!options.exchange || link.declared.has(options.exchange)) return;
    await withTimeout(link.channel.assertExchange(options.exchange, options.exchangeType, { durable: true }), this.config.requestTimeoutMs);
    link.declared.add(options.exchange);
  }

  async closeUnused(inUse: WebhookRow[]): Promise<void> {
    const urls = new Set(inUse.map((target) => target.url));
    await this.links.retain((url) => urls.has(url));
  }

  close(): Promise<void> {
    return this.links.close();
  }

  private async open(url: string): Promise<Link> {
    const parsed = parseBrokerUrl('rabbitmq', url);
    await checkBrokerHosts(this.config.ssrf, parsed);
    const heartbeat = parsed.params.has('heartbeat') ? url : `${url}${url.includes('?') ? '&' : '?'}heartbeat=10`;
    const model = await connect(heartbeat, {
      lookup: guardedLookup(this.config.ssrf) as never,
      timeout: this.config.requestTimeoutMs,
      // Each lane waits for its publish's confirm before the next: Nagle's delay would add to every one.
      noDelay: true,
      clientProperties: { connection_name: 'wa-gateway event sink' },
    });
    const link: Link = { model, channel: undefined as unknown as ConfirmChannel, declared: new Set(), broken: false };
    model.on('error', () => undefined);
    model.on('close', () => this.drop(url, link));
    try {
      link.channel = await model.createConfirmChannel();
    } catch (error) {
      await model.close().catch(() => undefined);
      throw error;
    }
    link.channel.on('error', () => undefined);
    link.channel.on('close', () => this.drop(url, link));
    // Closed while the channel was being made: a failed open, not a link to keep.
    if (link.broken) throw new Error('the broker closed the connection while it was opening');
    return link;
  }

  /**
   * Forgets a broken link (every time: a link that broke while it was opening is only in the pool once
   * the open resolves, and must not stay there) and closes it once.
   */
  private drop(url: string, link: Link): void {
    this.links.forget(url, link);
    if (link.broken) return;
    link.broken = true;
    void link.model.close().catch(() => undefined);
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(Object.assign(new Error(`no answer from the broker within ${ms} ms`), { name: 'TimeoutError' })), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
