import type { SinkKind, WebhookRepository, WebhookRow } from '@gw/persistence';
import type { SsrfGuard } from '@gw/platform';
import { HttpTransport } from './sinks/http.transport';
import { KafkaTransport } from './sinks/kafka.transport';
import { NatsTransport } from './sinks/nats.transport';
import { RabbitMqTransport } from './sinks/rabbitmq.transport';
import type { SinkTransport } from './sinks/transport';

/**
 * The relay's targets: how each kind is reached (webhook = HTTP; RabbitMQ, NATS JetStream, Kafka), the
 * webhook rows read lately, and the webhooks this relay disabled.
 */
export class WebhookTargets {
  private readonly transports: Map<SinkKind, SinkTransport>;
  /** Webhook rows for a second: every claim needs its webhooks, most deliveries share a few. */
  private readonly cache = new Map<string, { row: WebhookRow | null; at: number }>();
  /** Webhooks this relay disabled: their runs stop at once (their rows are already discarded). */
  private readonly disabled = new Set<string>();

  constructor(
    private readonly webhooks: WebhookRepository,
    options: { ssrf: SsrfGuard; requestTimeoutMs: number },
    transports?: SinkTransport[],
  ) {
    this.transports = new Map(
      (transports ?? [new HttpTransport(options), new RabbitMqTransport(options), new NatsTransport(options), new KafkaTransport(options)]).map((transport) => [
        transport.kind,
        transport,
      ]),
    );
  }

  /** The receiver a target's deliveries queue at: a webhook's URL origin, a broker sink's connection. */
  receiverKeyOf(webhook: WebhookRow): string {
    return this.transportOf(webhook)?.receiverKey(webhook) ?? `${webhook.kind} ${webhook.id}`;
  }

  transportOf(webhook: WebhookRow): SinkTransport | undefined {
    return this.transports.get(webhook.kind ?? 'webhook');
  }

  /** Rows read ahead (warmUp) go into the cache. */
  remember(rows: WebhookRow[]): void {
    const at = Date.now();
    for (const row of rows) this.cache.set(row.id, { row, at });
  }

  /** The cached row of a webhook (none: not read yet, or gone). */
  cached(id: string): WebhookRow | null | undefined {
    return this.cache.get(id)?.row;
  }

  /** The cached rows, by webhook id. */
  *cachedRows(): IterableIterator<[string, WebhookRow | null]> {
    for (const [id, { row }] of this.cache) yield [id, row];
  }

  async webhooksOf(ids: string[]): Promise<Map<string, WebhookRow | null>> {
    const now = Date.now();
    const found = new Map<string, WebhookRow | null>();
    const missing: string[] = [];
    for (const id of ids) {
      const cached = this.cache.get(id);
      if (cached && now - cached.at < 1_000) found.set(id, cached.row);
      else missing.push(id);
    }
    if (missing.length > 0) {
      const rows = new Map((await this.webhooks.byIds(missing)).map((row) => [row.id, row]));
      for (const id of missing) {
        const row = rows.get(id) ?? null;
        this.cache.set(id, { row, at: now });
        found.set(id, row);
      }
    }
    return found;
  }

  isDisabled(id: string): boolean {
    return this.disabled.has(id);
  }

  /** Enabled again since this relay disabled it. */
  enabledAgain(id: string): void {
    this.disabled.delete(id);
  }

  /** Disabled by this relay: its runs stop, its row is read again. */
  markDisabled(id: string): void {
    this.disabled.add(id);
    this.cache.delete(id);
  }

  /**
   * Opens the connections of the enabled broker sinks among `rows` ahead of their first attempts (each transport's
   * warmUp), waiting for them `deadlineMs` at most: what is still opening then goes on in the background, into the
   * pool the first attempt takes it from. Answers how many targets were ready (0 when the deadline came first). Never throws.
   */
  async warmUp(rows: WebhookRow[], deadlineMs: number): Promise<number> {
    const warming = Promise.all(
      [...this.transports.values()].map((transport) => {
        const targets = rows.filter((row) => row.enabled && row.kind === transport.kind);
        return targets.length && transport.warmUp ? transport.warmUp(targets).catch(() => 0) : 0;
      }),
    ).then((counts) => counts.reduce((sum, count) => sum + count, 0));
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<number>((resolve) => (timer = setTimeout(() => resolve(0), deadlineMs)));
    try {
      return await Promise.race([warming, deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Closes the broker connections none of `inUse` (the enabled sinks) needs. */
  async closeUnused(inUse: WebhookRow[]): Promise<void> {
    await Promise.all([...this.transports.values()].map((transport) => transport.closeUnused?.(inUse.filter((row) => row.kind === transport.kind))));
  }

  async close(): Promise<void> {
    await Promise.all([...this.transports.values()].map((transport) => transport.close().catch(() => undefined)));
  }
}
