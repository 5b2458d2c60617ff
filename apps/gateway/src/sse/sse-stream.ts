import type { ServerResponse } from 'node:http';
import type { Bus, BusSubscription } from '@gw/bus';
import { type EventType, Subjects } from '@gw/contracts';
import type { OutboxPosition, OutboxRepository, SettledRead } from '@gw/persistence';
import { type Logger, metrics } from '@gw/platform';
import { webhookWants } from '@gw/relay';
import type { GatewayConfig } from '../runtime/gateway-config';
import type { SseEventData } from './dto/sse.response';
import { sseFrame } from './sse-frame';

/** A client whose socket holds more than this unsent is too slow, and is dropped at once. */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;
/**
 * Above this much unsent, the reader stops reading the outbox until the client takes it (`drain`); a
 * client that does not within SSE_SLOW_CLIENT_MS is dropped. So a resume with a large backlog is paced
 * by the client instead of dropped, and nothing is buffered without bound.
 */
const HIGH_WATER_BYTES = 1024 * 1024;
const BATCH = 500;
/** Notifications are at most once: a slow poll catches anything a lost one would have announced. */
const POLL_MS = 2_000;
/** Delay before reading again when committed events are not settled yet (see OutboxRepository.readSettled). */
const SETTLE_RETRY_MS = 25;

/** What a stream needs from the gateway (the controller's injected services). */
export interface SseStreamDeps {
  outbox: OutboxRepository;
  bus: Bus;
  config: Pick<GatewayConfig, 'publicBaseUrl' | 'sseHeartbeatMs' | 'sseSlowClientMs'>;
  logger: Logger;
}

/** Where a stream starts: after `cursor`, leaving out the events in `skip` (already visible when it began). */
export interface SseStart {
  cursor: OutboxPosition;
  skip: Set<string>;
}

/**
 * One client's event stream on a hijacked response: reads the instance's outbox from a commit-safe
 * position, writes the events the filter wants, paces the reads by the client (back-pressure), and
 * keeps the connection alive (heartbeats) until the client leaves or is dropped as too slow.
 */
export class SseStream {
  private cursor: OutboxPosition;
  private readonly skip: Set<string>;
  private closed = false;
  private draining: Promise<void> | null = null;
  private again = false;
  private settleRetry: NodeJS.Timeout | null = null;
  private subscription?: BusSubscription;
  private heartbeat?: NodeJS.Timeout;
  private poll?: NodeJS.Timeout;

  constructor(
    private readonly deps: SseStreamDeps,
    private readonly instanceId: string,
    private readonly filter: { events: string[]; excludeMessages: string[] },
    start: SseStart,
    private readonly raw: ServerResponse,
  ) {
    this.cursor = start.cursor;
    this.skip = start.skip;
  }

  /** Counts the client, listens for the outbox's notifications, starts the timers and the first read. */
  start(): void {
    metrics().sseClients.inc();
    this.subscription = this.deps.bus.subscribe(Subjects.outbox(this.instanceId), () => this.drain());
    this.heartbeat = setInterval(() => this.write(`: heartbeat ${Date.now()}\n\n`), this.deps.config.sseHeartbeatMs);
    this.poll = setInterval(() => this.drain(), POLL_MS);
    this.raw.on('close', () => this.close());
    this.raw.on('error', () => this.close());
    this.drain();
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    metrics().sseClients.dec();
    if (this.settleRetry) clearTimeout(this.settleRetry);
    clearInterval(this.heartbeat);
    clearInterval(this.poll);
    this.subscription?.unsubscribe();
    this.raw.end();
  }

  private drop(why: string): void {
    if (this.closed) return;
    this.deps.logger.warn({ instanceId: this.instanceId, unsentBytes: this.raw.writableLength }, `SSE client too slow: dropped (${why})`);
    this.raw.destroy();
    this.close();
  }

  private write(chunk: string): void {
    if (this.closed) return;
    this.raw.write(chunk);
    if (this.raw.writableLength > MAX_BUFFERED_BYTES) this.drop('buffer full');
  }

  /** Resolves once the client took what is buffered down to the high-water mark (or it was dropped or left). */
  private writable(): Promise<void> {
    const raw = this.raw;
    const slowClientMs = this.deps.config.sseSlowClientMs;
    return new Promise<void>((resolve) => {
      if (this.closed || raw.writableLength <= HIGH_WATER_BYTES) return resolve();
      const done = () => {
        clearTimeout(timer);
        raw.off('drain', done);
        raw.off('close', done);
        resolve();
      };
      const timer = setTimeout(() => {
        this.drop(`nothing read for ${slowClientMs} ms`);
        done();
      }, slowClientMs);
      raw.on('drain', done);
      raw.on('close', done);
    });
  }

  /** One reader at a time; a wake-up during a read asks for one more pass. */
  private drain(): void {
    if (this.draining) {
      this.again = true;
      return;
    }
    this.draining = this.readPasses()
      .catch((error: unknown) => this.deps.logger.error({ err: error, instanceId: this.instanceId }, 'SSE read failed'))
      .finally(() => {
        this.draining = null;
      });
  }

  private async readPasses(): Promise<void> {
    do {
      this.again = false;
      let rows: SettledRead['rows'];
      do {
        let waiting: boolean;
        ({ rows, waiting } = await this.deps.outbox.readSettled(this.instanceId, this.cursor, BATCH));
        // Committed events wait behind a transaction still running: look again shortly, not at the next poll.
        if (waiting && !this.closed && !this.settleRetry) {
          this.settleRetry = setTimeout(() => {
            this.settleRetry = null;
            this.drain();
          }, SETTLE_RETRY_MS);
        }
        await this.send(rows);
      } while (rows.length === BATCH && !this.closed);
    } while (this.again && !this.closed);
  }

  /** Writes the rows the filter wants, waiting for the client whenever it falls behind. */
  private async send(rows: SettledRead['rows']): Promise<void> {
    for (const row of rows) {
      this.cursor = row.position;
      // Already visible when the client connected without a Last-Event-ID: not news.
      if (this.skip.size > 0 && this.skip.delete(row.id)) continue;
      if (!webhookWants(this.filter, row.eventType, row.payload)) continue;
      // The outbox keeps each event's payload as it was published (contracts' *EventPayload): the webhooks' body without BaseUrl.
      const data = { BaseUrl: this.deps.config.publicBaseUrl, ...row.payload } as SseEventData;
      this.write(sseFrame({ id: row.id, event: row.eventType as EventType, data }));
      if (this.raw.writableLength > HIGH_WATER_BYTES) await this.writable();
      if (this.closed) break;
    }
  }
}
