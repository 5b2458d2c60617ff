import { Bus, type BusSubscription } from '@gw/bus';
import { Subjects } from '@gw/contracts';
import {
  DeliveryRepository,
  type DeliveredResult,
  type DeliveryClaim,
  InstanceRepository,
  type SinkKind,
  WebhookRepository,
  type WebhookRow,
} from '@gw/persistence';
import { contextOfTraceparent, failSpan, inSpan, LoopWaker, type Logger, metrics, SpanKind, type SpanOptions, SsrfGuard } from '@gw/platform';
import { nextAttemptDelay } from './retry-schedule';
import { generateWebhookSecret } from './signature';
import type { EnvSink } from './sinks/env-sinks';
import { HttpTransport } from './sinks/http.transport';
import { KafkaTransport } from './sinks/kafka.transport';
import { NatsTransport } from './sinks/nats.transport';
import { RabbitMqTransport } from './sinks/rabbitmq.transport';
import type { SinkMessage, SinkTransport } from './sinks/transport';
import { matchWebhooks } from './webhook-filter';

export interface WebhookRelayConfig {
  /** `BaseUrl` of every envelope: where this gateway is reached. */
  publicBaseUrl: string;
  /** WEBHOOK_INCLUDE_TOKEN: put the instance token in every payload (receivers migrating from uazapi). */
  includeToken: boolean;
  retryScheduleMs: number[];
  requestTimeoutMs: number;
  /** Requests in flight per receiver (URL origin), so one slow receiver cannot starve the others. */
  maxInFlightPerReceiver: number;
  /** A webhook failing for this long is disabled. */
  disableAfterMs: number;
  /**
   * Outbox events fanned out per transaction, and deliveries claimed per statement. A receiver with
   * half of it claimed here and not yet sent is left out of the next claims.
   */
  batchSize: number;
  /** Deliveries of one lane claimed together (its head and those right behind it), sent one by one. */
  laneRunLength: number;
  /** Fallback when no notice arrives (retries falling due, another process's events without NATS). */
  pollIntervalMs: number;
  /** How long a claimed delivery is ours before another relay may take it over. */
  claimMs: number;
  /**
   * Least time from one fan-out (or claim) to the next when the last one was not full. Both are poked
   * often (a fan-out by every event notice, a claim by every fan-out and recorded batch), and every
   * claim walks every lane: passing on each poke makes many small passes (half of the fan-outs found
   * nothing) that cost the database more than they move. Bounds the latency it adds.
   */
  passGapMs: number;
  ssrf: SsrfGuard;
  /**
   * The global broker sinks env names (RABBITMQ_URL, NATS_SINK_URL, KAFKA_BROKERS…): written as global
   * sink rows when the relay starts, removed when env no longer names them. Not given: left alone.
   */
  envSinks?: EnvSink[];
}

export const WEBHOOK_RELAY_DEFAULTS = {
  requestTimeoutMs: 10_000,
  maxInFlightPerReceiver: 8,
  disableAfterMs: 5 * 24 * 3_600_000,
  batchSize: 500,
  laneRunLength: 20,
  pollIntervalMs: 1_000,
  claimMs: 30_000,
  passGapMs: 10,
} as const;

/** Webhooks read into the cache before the first claim (warmUp); the rest are read by the claims that need them. */
const WARM_WEBHOOKS = 1_000;

/** How long successes gather before they are written together (lanes move on once written). */
const FLUSH_DELAY_MS = 5;

/**
 * How often the broker connections are checked against the enabled sinks without a `sinks.changed`
 * notice (a sink removed with its instance, a notice lost): a sink gone stops connecting by then.
 */
const SINK_CONNECTION_CHECK_MS = 10_000;

/** Deliveries of one lane, claimed together; sent strictly one after the other. */
interface LaneRun {
  webhook: WebhookRow;
  claims: DeliveryClaim[];
  /** Nothing of the run is sent after this (local time): the claim could lapse mid-request. */
  sendBy: number;
}

/** One receiver (URL origin): its runs waiting for a slot, and how many it has in progress. */
interface Receiver {
  waiting: LaneRun[];
  /** Runs being sent: at most `maxInFlightPerReceiver`, so at most that many requests at once. */
  active: number;
  /** Deliveries claimed for it and not sent yet (in waiting runs or further on in active ones). */
  claimed: number;
}

/**
 * Delivers outbox events to webhooks, at least once and in order per (webhook, instance, chat) lane.
 * All state is in Postgres (see DeliveryRepository); this process only fans out, claims, sends and
 * records, in batches:
 *
 * 1. Two loops side by side: fan-out runs when a NATS `events.<instance>` notice arrives; the claim
 *    when fan-out made rows, results were recorded (lanes moved on) or a receiver has room again.
 *    Both also run every `pollIntervalMs` (retries falling due, events written without a notice).
 * 2. Fan-out turns undispatched outbox events into delivery rows, `batchSize` events a transaction.
 * 3. One claim statement takes due lane heads and a short run behind each (`laneRunLength`); it is
 *    skipped while every receiver served here still has half a batch claimed and unsent.
 * 4. Each receiver sends up to `maxInFlightPerReceiver` runs at once; inside a run, one request at a
 *    time, in lane order: the next is sent only after the previous one got its 2xx. The first failure
 *    is recorded (retry time) and the rest of the run released, so nothing overtakes it.
 * 5. Successes are recorded together, one statement for everything that finished meanwhile. A crash
 *    before that leaves the claims to lapse: those deliveries go out again (same `webhook-id`).
 */
export class WebhookRelay {
  /** How each kind of target is reached (webhook = HTTP; RabbitMQ, NATS JetStream, Kafka). */
  private readonly transports: Map<SinkKind, SinkTransport>;
  private readonly receivers = new Map<string, Receiver>();
  private readonly tokens = new Map<string, { token: string; at: number }>();
  /** Webhook rows for a second: every claim needs its webhooks, most deliveries share a few. */
  private readonly webhookCache = new Map<string, { row: WebhookRow | null; at: number }>();
  /** Webhooks this relay disabled: their runs stop at once (their rows are already discarded). */
  private readonly disabled = new Set<string>();
  private subscription?: BusSubscription;
  private sinksSubscription?: BusSubscription;
  private connectionCheck?: NodeJS.Timeout;
  /** The check of the broker connections in progress, and whether another was asked for meanwhile. */
  private checkingConnections?: Promise<void>;
  private connectionCheckWanted = false;
  private running = false;
  private readonly pending = new Set<Promise<void>>();

  /** Fans out when new events are announced; claims when lanes may have become free. Side by side. */
  private readonly fanOutLoop: PassLoop;
  private readonly claimLoop: PassLoop;
  /**
   * Claimable rows may exist whatever the receivers: the start, rows fanned out for a webhook not read
   * yet, claims given back. Without it (or `movedOn`), a claim waits for the poll.
   */
  private claimWanted = true;
  /**
   * Receivers that may have claimable rows since the last claim pass (rows fanned out for them, results
   * recorded, gone idle or no longer busy, a run that ended early): a claim is wanted if one of them has
   * room when the pass runs. Judged then, not when noted: a claim in progress meanwhile often fills them
   * again, and a claim for busy receivers only leaves their lanes out after walking them all
   * (bench/webhooks: every full claim of a burst was followed by one that found nothing).
   */
  private readonly movedOn = new Set<string>();

  /** Successes not yet recorded, and the flush recording them (one at a time). */
  private delivered: DeliveredResult[] = [];
  /** The receivers of those successes. */
  private readonly deliveredFor = new Set<string>();
  private flushScheduled = false;
  private flushing?: Promise<void>;

  constructor(
    private readonly deliveries: DeliveryRepository,
    private readonly webhooks: WebhookRepository,
    private readonly instances: InstanceRepository,
    private readonly bus: Bus,
    private readonly config: WebhookRelayConfig,
    private readonly logger: Logger,
    transports?: SinkTransport[],
  ) {
    const options = { ssrf: config.ssrf, requestTimeoutMs: config.requestTimeoutMs };
    this.transports = new Map(
      (transports ?? [new HttpTransport(options), new RabbitMqTransport(options), new NatsTransport(options), new KafkaTransport(options)]).map((transport) => [
        transport.kind,
        transport,
      ]),
    );
    const onError = (error: unknown) => this.logger.error({ err: error }, 'webhook relay pass failed');
    this.fanOutLoop = new PassLoop(
      async () => {
        await this.fanOut();
        return false;
      },
      config.pollIntervalMs,
      onError,
      config.passGapMs,
    );
    this.claimLoop = new PassLoop((polled) => this.claimPass(polled), config.pollIntervalMs, onError, config.passGapMs);
  }

  /**
   * Before `start`: opens the pool's connections and plans the relay's statements on each, and reads the
   * enabled webhooks, so that a relay started in a rolling deploy delivers its first second on time
   * (bench/webhooks: p99 370-630 ms over the first 1.5 s of a cold relay, ~40 ms after). A failure is
   * logged, not thrown: the loops connect on their own and retry as always.
   */
  async warmUp(): Promise<void> {
    const started = performance.now();
    try {
      const [connections, webhooks] = await Promise.all([this.deliveries.warmUp(), this.webhooks.enabled(WARM_WEBHOOKS)]);
      const at = Date.now();
      for (const row of webhooks) this.webhookCache.set(row.id, { row, at });
      this.logger.info({ connections, webhooks: webhooks.length, ms: Math.round(performance.now() - started) }, 'webhook relay warmed up');
    } catch (error) {
      this.logger.warn({ err: error }, 'warming the webhook relay up failed; starting cold');
    }
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    if (this.config.envSinks) void this.syncEnvSinks(this.config.envSinks);
    this.subscription = this.bus.subscribe(Subjects.outboxWildcard, () => this.fanOutLoop.poke());
    this.sinksSubscription = this.bus.subscribe(Subjects.sinksChanged, () => this.closeUnusedConnections());
    this.connectionCheck = setInterval(() => this.closeUnusedConnections(), SINK_CONNECTION_CHECK_MS);
    this.connectionCheck.unref();
    this.fanOutLoop.start();
    this.claimLoop.start();
  }

  /** Stops claiming, lets requests in progress finish, gives back what was not sent, records results. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.subscription?.unsubscribe();
    this.sinksSubscription?.unsubscribe();
    clearInterval(this.connectionCheck);
    await this.checkingConnections;
    await Promise.all([this.fanOutLoop.stop(), this.claimLoop.stop()]);
    const waiting = [...this.receivers.values()].flatMap((receiver) => receiver.waiting.splice(0));
    await this.deliveries
      .release(waiting.flatMap((run) => run.claims.map((claim) => claim.deliveryId)))
      .catch((error: unknown) => this.logger.warn({ err: error }, 'releasing claims at stop failed'));
    await Promise.allSettled([...this.pending]);
    await this.drainResults();
    await Promise.all([...this.transports.values()].map((transport) => transport.close().catch(() => undefined)));
  }

  /** Writes the global sinks env names (and removes those it no longer names); fan-out picks them up from then on. */
  async syncEnvSinks(sinks: EnvSink[]): Promise<void> {
    try {
      for (const sink of sinks) await this.webhooks.syncEnvSink(sink.id, sink.values, generateWebhookSecret());
      this.fanOutLoop.poke();
      this.closeUnusedConnections();
    } catch (error) {
      this.logger.error({ err: error }, 'writing the global sinks from env failed');
    }
  }

  /**
   * Closes the broker connections no enabled sink uses any more (deleted, disabled, moved to another
   * URL): on a `sinks.changed` notice, when this relay disables or finds a target gone, and every
   * SINK_CONNECTION_CHECK_MS. Checks asked for during one run once more after it.
   */
  private closeUnusedConnections(): void {
    if (!this.running) return;
    if (this.checkingConnections) {
      this.connectionCheckWanted = true;
      return;
    }
    this.checkingConnections = (async () => {
      do {
        this.connectionCheckWanted = false;
        const inUse = await this.webhooks.enabledSinks();
        await Promise.all([...this.transports.values()].map((transport) => transport.closeUnused?.(inUse.filter((row) => row.kind === transport.kind))));
      } while (this.connectionCheckWanted && this.running);
    })()
      .catch((error: unknown) => this.logger.warn({ err: error }, 'closing unused broker connections failed'))
      .finally(() => (this.checkingConnections = undefined));
  }

  /** The receiver a target's deliveries queue at: a webhook's URL origin, a broker sink's connection. */
  private receiverKeyOf(webhook: WebhookRow): string {
    return this.transportOf(webhook)?.receiverKey(webhook) ?? `${webhook.kind} ${webhook.id}`;
  }

  private transportOf(webhook: WebhookRow): SinkTransport | undefined {
    return this.transports.get(webhook.kind ?? 'webhook');
  }

  /** One pass by hand (tests): fan out what is new, then claim what is due. Returns how many deliveries it made and claimed. */
  async runOnce(): Promise<number> {
    return (await this.fanOut()).size + (await this.claim());
  }

  /**
   * Fans out until the outbox has nothing undispatched left, waking the claim after each batch that made
   * rows: while events keep coming (a burst written in many transactions) fan-out keeps finding full
   * batches, and a claim that waited for the end started nothing for the whole burst's writing
   * (bench/webhooks: the first request 1 s after the burst began). Returns the webhooks it made deliveries for.
   */
  private async fanOut(): Promise<Set<string>> {
    const webhookIds = new Set<string>();
    for (;;) {
      const fanned = await this.deliveries.fanOut(this.config.batchSize, matchWebhooks);
      for (const webhookId of fanned.webhookIds) webhookIds.add(webhookId);
      if (fanned.webhookIds.size > 0) {
        // Rows only for receivers that already have half a batch claimed here leave the claim to
        // their progress: a claim now would leave each of their lanes out, after walking them all.
        // Whether they have is judged when the claim pass runs; a webhook not read yet may be anyone's.
        for (const webhookId of fanned.webhookIds) {
          const row = this.webhookCache.get(webhookId)?.row;
          if (row) this.movedOn.add(this.receiverKeyOf(row));
          else this.claimWanted = true;
        }
        this.claimLoop.poke();
      }
      if (fanned.events < this.config.batchSize) return webhookIds;
    }
  }

  private track(promise: Promise<void>): void {
    this.pending.add(promise);
    void promise.finally(() => this.pending.delete(promise));
  }

  private receiverOf(origin: string): Receiver {
    let receiver = this.receivers.get(origin);
    if (!receiver) this.receivers.set(origin, (receiver = { waiting: [], active: 0, claimed: 0 }));
    return receiver;
  }

  /** Webhooks of receivers that already have a batch claimed here: leave their lanes to later. */
  private busyWebhooks(): string[] {
    const busy: string[] = [];
    for (const [id, { row }] of this.webhookCache) {
      const receiver = row && this.receivers.get(this.receiverKeyOf(row));
      if (receiver && this.isBusy(receiver)) busy.push(id);
    }
    return busy;
  }

  /** A receiver not known here (idle), or not busy. */
  private hasRoom(origin: string): boolean {
    const receiver = this.receivers.get(origin);
    return receiver === undefined || !this.isBusy(receiver);
  }

  /** Half a batch or more is claimed for it and not sent yet: claim for it later. */
  private isBusy(receiver: Receiver): boolean {
    return receiver.claimed >= this.config.batchSize / 2;
  }

  /**
   * The claim loop's pass. Progress (results recorded, runs done) pokes it often; it queries only when
   * a claim may find something for a receiver with room (`movedOn`: rows fanned out for one, results
   * recorded for one, a receiver gone idle or no longer busy, a run that ended early; `claimWanted`) or the poll fired:
   * each claim walks every lane. A run that is done frees its lane only once its results are recorded,
   * so a claim on every run's end found nothing (about half of the claims of bench/webhooks did).
   */
  private async claimPass(polled: boolean): Promise<boolean> {
    const wanted = this.claimWanted || polled || [...this.movedOn].some((origin) => this.hasRoom(origin));
    this.claimWanted = false;
    // Those still busy wake it again when they have room (pump: no longer busy, or idle).
    this.movedOn.clear();
    if (!wanted) return false;
    // A full claim may have left more behind: look again at once (receivers permitting).
    return (await this.claim()) >= this.config.batchSize;
  }

  /** Claims due lane runs and queues them at their receivers. Returns how many deliveries it claimed. */
  private async claim(): Promise<number> {
    const claimedAt = Date.now();
    const claims = await this.deliveries.claimDue(this.config.batchSize, this.config.claimMs, {
      excludeWebhooks: this.busyWebhooks(),
      perLane: this.config.laneRunLength,
    });
    if (claims.length === 0) return 0;
    let webhooks: Map<string, WebhookRow | null>;
    try {
      webhooks = await this.webhooksOf([...new Set(claims.map((claim) => claim.webhookId))]);
    } catch (error) {
      await this.deliveries.release(claims.map((claim) => claim.deliveryId)).catch(() => undefined);
      throw error;
    }
    // A request started by then ends (or times out) before the claim lapses, unless claims are set
    // shorter than the request timeout; then half the claim at least is used.
    const sendBy = claimedAt + Math.max(this.config.claimMs - this.config.requestTimeoutMs, this.config.claimMs / 2);
    const cutShort: string[] = [];
    const gone = new Set<string>();
    for (const lane of groupByLane(claims)) {
      const webhookId = lane[0].webhookId;
      const webhook = webhooks.get(webhookId);
      if (!webhook || !webhook.enabled) {
        gone.add(webhookId);
        continue;
      }
      this.disabled.delete(webhookId); // enabled again since this relay disabled it
      // A lane's run must start at its head and have no gap (claims are checked again as rows are
      // updated; a row someone else holds ends the run there).
      const unbroken = lane.findIndex((claim, index) => claim.position !== index + 1);
      const claimsToSend = unbroken === -1 ? lane : lane.slice(0, unbroken);
      if (unbroken !== -1) cutShort.push(...lane.slice(unbroken).map((claim) => claim.deliveryId));
      if (claimsToSend.length === 0) continue;
      const receiver = this.receiverOf(this.receiverKeyOf(webhook));
      receiver.claimed += claimsToSend.length;
      receiver.waiting.push({ webhook, claims: claimsToSend, sendBy });
    }
    for (const [origin, receiver] of this.receivers) this.pump(origin, receiver);
    // A disabled or deleted webhook gives up its pending deliveries (what the old loop did per delivery).
    for (const webhookId of gone) {
      const row = webhooks.get(webhookId);
      await this.deliveries.disableWebhook(webhookId, row ? row.disabledReason || 'disabled' : 'deleted').catch(() => undefined);
    }
    if (gone.size > 0) this.closeUnusedConnections();
    if (cutShort.length > 0) {
      await this.deliveries.release(cutShort).catch((error: unknown) => this.logger.warn({ err: error }, 'releasing a broken run failed'));
      this.claimWanted = true;
    }
    return claims.length;
  }

  /** Starts waiting runs while the receiver has slots. */
  private pump(origin: string, receiver: Receiver): void {
    while (this.running && receiver.active < this.config.maxInFlightPerReceiver && receiver.waiting.length > 0) {
      const run = receiver.waiting.shift() as LaneRun;
      receiver.active++;
      const busyBefore = this.isBusy(receiver);
      this.track(
        this.sendRun(run, receiver)
          .catch(() => true)
          .then((endedEarly) => {
            receiver.active--;
            if (receiver.active === 0 && receiver.waiting.length === 0) {
              // Idle now: its lanes may have more, and no busy receiver may keep the claim from running.
              this.receivers.delete(origin);
              this.movedOn.add(origin);
            } else {
              // Room again (its lanes were left out of the claims meanwhile), or a lane that moved on
              // without a recorded success (a final failure, claims given back).
              if (endedEarly || (busyBefore && !this.isBusy(receiver))) this.movedOn.add(origin);
              this.pump(origin, receiver);
            }
            this.claimLoop.poke();
          }),
      );
    }
  }

  /**
   * Sends a lane's run in order, one request at a time. Stops at the first failure (recorded with its
   * retry time, so the lane waits behind it), when the relay stops, or when the claim is about to
   * lapse; what was not sent is released for a later claim.
   */
  private async sendRun(run: LaneRun, receiver: Receiver): Promise<boolean> {
    let done = 0;
    let failed = false;
    try {
      while (done < run.claims.length) {
        if (!this.running || this.disabled.has(run.webhook.id) || Date.now() > run.sendBy) break;
        const ok = await this.send(run.claims[done], run.webhook);
        done++;
        receiver.claimed--;
        if (!ok) {
          failed = true;
          break;
        }
      }
    } catch (error) {
      failed = true;
      // Recording the failure failed: that delivery stays claimed and goes out again once it lapses.
      done++;
      receiver.claimed--;
      this.logger.error({ err: error, deliveryId: run.claims[done - 1]?.deliveryId }, 'webhook delivery bookkeeping failed');
    }
    receiver.claimed -= run.claims.length - done;
    const unsent = run.claims.slice(done).map((claim) => claim.deliveryId);
    if (unsent.length > 0) await this.deliveries.release(unsent).catch((error: unknown) => this.logger.warn({ err: error }, 'releasing unsent claims failed'));
    return failed || unsent.length > 0;
  }

  private async webhooksOf(ids: string[]): Promise<Map<string, WebhookRow | null>> {
    const now = Date.now();
    const found = new Map<string, WebhookRow | null>();
    const missing: string[] = [];
    for (const id of ids) {
      const cached = this.webhookCache.get(id);
      if (cached && now - cached.at < 1_000) found.set(id, cached.row);
      else missing.push(id);
    }
    if (missing.length > 0) {
      const rows = new Map((await this.webhooks.byIds(missing)).map((row) => [row.id, row]));
      for (const id of missing) {
        const row = rows.get(id) ?? null;
        this.webhookCache.set(id, { row, at: now });
        found.set(id, row);
      }
    }
    return found;
  }

  /**
   * One attempt of one delivery, through the transport of the target's kind. True once delivered
   * (recorded with the next batch); false once a failure is recorded (its retry time, the error log,
   * disabling a target gone or failing too long: the same for every kind).
   */
  private async send(claim: DeliveryClaim, webhook: WebhookRow): Promise<boolean> {
    const { event } = claim;
    const envelope: Record<string, unknown> = { BaseUrl: this.config.publicBaseUrl, ...event.payload };
    if (this.config.includeToken || webhook.includeToken) envelope.token = await this.tokenOf(event.instanceId);
    const message: SinkMessage = { id: `evt_${event.id}`, event, envelope, body: JSON.stringify(envelope) };
    const transport = this.transportOf(webhook);
    const started = performance.now();
    // Tracing on: the delivery is a span of the trace the event was written in (its outbox row's traceparent),
    // active while the transport sends, so a webhook request carries it in its own `traceparent` header.
    const outcome = transport
      ? await inSpan('webhook-relay', `deliver ${webhook.kind}`, deliverySpan(claim, webhook), async (span) => {
          const sent = await transport.send(webhook, message);
          if (span && sent.statusCode !== null) span.setAttribute('http.response.status_code', sent.statusCode);
          if (!sent.ok) failSpan(span, new Error(sent.error));
          return sent;
        })
      : { ok: false as const, statusCode: null, error: `no transport for ${webhook.kind} targets in this relay` };
    // HTTP attempts are counted by the transport (by status class); a broker's here, by kind.
    const latencyMs = performance.now() - started;
    if (webhook.kind !== 'webhook') metrics().recordSinkDelivery(webhook.kind, outcome.ok, latencyMs / 1000);
    if (outcome.ok) {
      this.recordDelivered({ deliveryId: claim.deliveryId, statusCode: outcome.statusCode, latencyMs }, this.receiverKeyOf(webhook));
      return true;
    }

    await this.deliveries.logError({
      webhookId: webhook.id,
      kind: webhook.kind,
      instanceId: event.instanceId,
      global: webhook.instanceId === null,
      url: transport ? transport.describe(webhook, message) : webhook.kind,
      event: event.eventType,
      messageType: messageTypeOf(event.payload),
      statusCode: outcome.statusCode,
      attempts: claim.attempt,
      error: outcome.error,
      payload: { ...envelope, ...(envelope.token ? { token: '[masked]' } : {}) },
    });
    if (outcome.gone) {
      await this.disable(webhook, outcome.gone, null);
      this.logger.warn({ webhookId: webhook.id, kind: webhook.kind, reason: outcome.gone }, 'webhook disabled: target gone');
      return false;
    }
    const delay = nextAttemptDelay(this.config.retryScheduleMs, claim.attempt, outcome.retryAfterMs ?? null);
    const failingSince = await this.deliveries.markAttemptFailed(
      claim.deliveryId,
      webhook.id,
      outcome.statusCode,
      outcome.error,
      delay === null ? null : new Date(Date.now() + delay),
      latencyMs,
    );
    if (Date.now() - failingSince.getTime() >= this.config.disableAfterMs) {
      await this.disable(webhook, `failing since ${failingSince.toISOString()}`, failingSince);
      this.logger.warn({ webhookId: webhook.id, kind: webhook.kind, failingSince }, 'webhook disabled: failing for too long');
    }
    return false;
  }

  /** Disables a webhook on the relay's own decision, with a `webhook` `Disabled` event (see DeliveryRepository.disableWebhook). */
  private async disable(webhook: WebhookRow, reason: string, failingSince: Date | null): Promise<void> {
    this.disabled.add(webhook.id);
    this.webhookCache.delete(webhook.id);
    const event = await this.deliveries.disableWebhook(webhook.id, reason, { failingSince });
    if (event) this.bus.publish(Subjects.outbox(event.instanceId), { instanceId: event.instanceId, lastId: event.lastId });
    // Every relay (this one too) closes the connections the sink no longer needs.
    if (webhook.kind !== 'webhook') this.bus.publish(Subjects.sinksChanged, {});
  }

  // --- recording successes in batches ---------------------------------------------------------------

  private recordDelivered(result: DeliveredResult, origin: string): void {
    this.delivered.push(result);
    this.deliveredFor.add(origin);
    this.scheduleFlush();
  }

  /** Everything that succeeded within a few milliseconds goes into one statement. */
  private scheduleFlush(): void {
    if (this.flushScheduled || this.flushing) return;
    this.flushScheduled = true;
    setTimeout(() => {
      this.flushScheduled = false;
      this.flushing = this.flush().finally(() => {
        this.flushing = undefined;
        if (this.delivered.length > 0) this.scheduleFlush();
      });
    }, FLUSH_DELAY_MS);
  }

  private async flush(): Promise<void> {
    const batch = this.delivered.splice(0);
    const origins = [...this.deliveredFor];
    this.deliveredFor.clear();
    if (batch.length === 0) return;
    try {
      await this.deliveries.markDelivered(batch);
      // Their lanes moved on: claim if one of their receivers has room when the claim pass runs (else when it has).
      for (const origin of origins) this.movedOn.add(origin);
      this.claimLoop.poke();
    } catch (error) {
      // Kept for the next flush; if this process dies first, the claims lapse and they go out again.
      this.delivered.unshift(...batch);
      for (const origin of origins) this.deliveredFor.add(origin);
      this.logger.error({ err: error, count: batch.length }, 'recording delivered webhooks failed');
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  /** At stop: waits for the flush in progress, then records what is left (a few tries). */
  private async drainResults(): Promise<void> {
    for (let tries = 0; tries < 5 && (this.flushing || this.flushScheduled || this.delivered.length > 0); tries++) {
      await this.flushing;
      await this.flush();
    }
  }

  private async tokenOf(instanceId: string): Promise<string> {
    const cached = this.tokens.get(instanceId);
    if (cached && Date.now() - cached.at < 60_000) return cached.token;
    const token = (await this.instances.findToken(instanceId)) ?? '';
    this.tokens.set(instanceId, { token, at: Date.now() });
    return token;
  }
}

/**
 * Runs `pass` whenever poked (pokes during a pass make one more), and every `intervalMs` anyway; a
 * poke within `minGapMs` of the last pass's start waits for the rest of that gap (not after a pass
 * that asked to run again at once). After a pass that threw, the next waits out the waker's backoff
 * whatever the pokes.
 */
class PassLoop {
  private polled = true;
  private running = false;
  private readonly waker = new LoopWaker();
  private done?: Promise<void>;

  /** `pass` is told whether the poll interval (rather than a poke) started it; true runs it again at once. */
  constructor(
    private readonly pass: (polled: boolean) => Promise<boolean>,
    private readonly intervalMs: number,
    private readonly onError: (error: unknown) => void,
    private readonly minGapMs = 0,
  ) {}

  start(): void {
    this.running = true;
    this.done = this.loop();
  }

  poke(): void {
    this.waker.wake();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.waker.halt();
    await this.done;
  }

  private async loop(): Promise<void> {
    while (this.running) {
      const polled = this.polled;
      this.waker.begin();
      this.polled = false;
      const started = Date.now();
      let again = false;
      try {
        again = await this.pass(polled);
      } catch (error) {
        this.onError(error);
        // Pokes keep coming while the database is down: wait before the next pass, a poll that retries it all.
        if (this.running) await this.waker.backoff(this.intervalMs);
        this.polled = true;
        continue;
      }
      this.waker.succeeded();
      if (again) {
        await this.waker.turn();
        continue;
      }
      if (this.running && !this.waker.woken) this.polled = !(await this.waker.sleep(this.intervalMs));
      // A poke (during the pass or since) soon after it started waits out the gap; the poll does not.
      const gap = started + this.minGapMs - Date.now();
      if (this.running && !this.polled && gap > 0) await new Promise((resolve) => setTimeout(resolve, gap));
    }
  }
}

/** Claims grouped by the lane head they were claimed behind, each group in lane order. */
function groupByLane(claims: DeliveryClaim[]): DeliveryClaim[][] {
  const lanes = new Map<string, DeliveryClaim[]>();
  for (const claim of claims) {
    let lane = lanes.get(claim.headId);
    if (!lane) lanes.set(claim.headId, (lane = []));
    lane.push(claim);
  }
  return [...lanes.values()].map((lane) => lane.sort((a, b) => a.position - b.position));
}

/** A delivery's span: continues the event's trace (its outbox row's traceparent; a trace of its own without one). */
function deliverySpan(claim: DeliveryClaim, webhook: WebhookRow): SpanOptions {
  return {
    kind: webhook.kind === 'webhook' ? SpanKind.CLIENT : SpanKind.PRODUCER,
    parent: contextOfTraceparent(claim.event.traceparent),
    attributes: { 'wa.event.id': claim.event.id, 'wa.event.type': claim.event.eventType, 'wa.delivery.attempt': claim.attempt },
  };
}

function messageTypeOf(payload: Record<string, unknown>): string {
  const message = payload.message as { messageType?: unknown } | undefined;
  return typeof message?.messageType === 'string' ? message.messageType : '';
}
