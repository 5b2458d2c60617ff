import { Bus, type BusSubscription } from '@gw/bus';
import { Subjects } from '@gw/contracts';
import {
  type DeliveryClaim,
  DeliveryRepository,
  type DirectFanOut,
  type FanOutCandidate,
  InstanceRepository,
  WebhookRepository,
  type WebhookRow,
} from '@gw/persistence';
import type { Logger } from '@gw/platform';
import { DeliveredResults } from './delivered-results';
import { DeliverySender } from './delivery-sender';
import { PassLoop } from './pass-loop';
import type { WebhookRelayConfig } from './relay-config';
import { groupByLane, laneChatOf, laneKey, type LaneRun, type Receiver } from './lane-runs';
import { generateWebhookSecret } from './signature';
import type { EnvSink } from './sinks/env-sinks';
import { warmHttpClient } from './sinks/http-client-warm-up';
import type { SinkTransport } from './sinks/transport';
import { matchWebhooks } from './webhook-filter';
import { WebhookTargets } from './webhook-targets';

/** Webhooks read into the cache before the first claim (warmUp); the rest are read by the claims that need them. */
const WARM_WEBHOOKS = 1_000;
/** How long a starting relay waits for its broker sinks' connections (warmUp); a broker slower than that connects on. */
const SINK_WARM_UP_MS = 2_000;

/** Lanes remembered past their run's end (for fan-out's `after`) before the ended ones are forgotten. */
const MAX_REMEMBERED_LANES = 50_000;

/** The window a receiver's pace is counted over (its successes here per window). */
const PACE_WINDOW_MS = 1_000;

/**
 * How much a fan-out may claim and leave queued for a receiver: this many windows of its pace (at least a batch).
 * Well inside a claim's send-by time (claimMs − the request timeout, 20 s by default), so a receiver that slows
 * down gives back what it cannot send in time rather than letting claims lapse.
 */
const DIRECT_QUEUE_WINDOWS = 10;

/**
 * How often the broker connections are checked against the enabled sinks without a `sinks.changed`
 * notice (a sink removed with its instance, a notice lost): a sink gone stops connecting by then.
 */
const SINK_CONNECTION_CHECK_MS = 10_000;
/** The relays' queue group for the outbox's notices: each notice wakes one relay's fan-out. */
export const FAN_OUT_QUEUE = 'webhook-relay.fan-out';

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
 * 5. Successes are recorded together, one statement for everything that finished meanwhile, which
 *    also claims the next run of each lane they moved on (as step 3 would, without walking every lane).
 *    A crash before that leaves the claims to lapse: those deliveries go out again (same `webhook-id`).
 */
export class WebhookRelay {
  /** Transports, webhook rows, webhooks disabled here. */
  private readonly targets: WebhookTargets;
  private readonly sender: DeliverySender;
  /** Successes not yet recorded, recorded in batches. */
  private readonly results: DeliveredResults;
  private readonly receivers = new Map<string, Receiver>();
  private subscription?: BusSubscription;
  private sinksSubscription?: BusSubscription;
  private connectionCheck?: NodeJS.Timeout;
  /** The check of the broker connections in progress, and whether another was asked for meanwhile. */
  private checkingConnections?: Promise<void>;
  private connectionCheckWanted = false;
  private running = false;
  /** Set by `stop`: claims that arrive from then on are given back, not queued. */
  private stopping = false;
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
  /**
   * Receivers left out of a claim while busy (their lanes not walked, or not claimed on by a flush): a claim is
   * wanted for them once they have room again (pump: no longer busy, or idle). Only these: a receiver that goes
   * idle with nothing left out has had its lanes claimed on by the flushes (bench/webhooks: a claim at every
   * idle receiver walked every lane for nothing, 97 % of them empty, once fan-out claimed; ADR 0046).
   */
  private readonly deferred = new Set<string>();
  /**
   * The lanes this relay sends or sent (ADR 0046): each lane's latest run, open (fan-out may add to it) or ended.
   * An ended run stays only if every claim of it was delivered (its lane holds nothing of ours undelivered).
   */
  private readonly lanes = new Map<string, LaneRun>();
  /** Per receiver, its successes here in the current and the previous PACE_WINDOW_MS (directLimit). */
  private readonly pace = new Map<string, { at: number; current: number; previous: number }>();
  /** A fan-out that claims (WEBHOOK_DIRECT); undefined: every delivery waits for a claim. */
  private readonly direct?: DirectFanOut;
  /** The run (or none) each lane had when the current fan-out planned it: what its claims may join. */
  private planned = new Map<string, LaneRun | null>();

  constructor(
    private readonly deliveries: DeliveryRepository,
    private readonly webhooks: WebhookRepository,
    instances: InstanceRepository,
    private readonly bus: Bus,
    private readonly config: WebhookRelayConfig,
    private readonly logger: Logger,
    transports?: SinkTransport[],
  ) {
    this.targets = new WebhookTargets(webhooks, { ssrf: config.ssrf, requestTimeoutMs: config.requestTimeoutMs }, transports);
    this.results = new DeliveredResults(
      deliveries,
      logger,
      (origins, limited) => {
        // The flush claimed on its lanes, but not for busy receivers (left out), nor beyond its limit.
        for (const origin of origins) {
          if (limited) this.movedOn.add(origin);
          else if (!this.hasRoom(origin)) this.deferred.add(origin);
        }
        if (limited) this.claimLoop.poke();
      },
      {
        // The lanes a flush moves on are claimed on in the flush's statement, as a claim would (receivers
        // with half a batch claimed left out), without walking every lane (bench/webhooks, issue #38).
        options: () =>
          this.running
            ? {
                limit: this.config.batchSize,
                claimMs: this.config.claimMs,
                claim: { excludeWebhooks: this.busyWebhooks(), perLane: this.config.laneRunLength },
              }
            : null,
        claimed: (claims, claimedAt) => this.queueNextRuns(claims, claimedAt),
      },
    );
    this.sender = new DeliverySender(deliveries, instances, this.targets, this.results, bus, config, logger);
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
    if (config.direct !== false) this.direct = { claimMs: config.claimMs, plan: (candidates) => this.planDirect(candidates) };
  }

  /**
   * Before `start`: opens the pool's connections and plans the relay's statements on each, and reads the
   * enabled webhooks, so that a relay started in a rolling deploy delivers its first second on time
   * (bench/webhooks: p99 370-630 ms over the first 1.5 s of a cold relay, ~40 ms after), then sends
   * 800 requests to a loopback server of its own so undici's parser and code are compiled and hot
   * (warmHttpClient), then opens the enabled broker sinks' connections, exchanges and streams as their first
   * attempts would (WebhookTargets.warmUp, 2 s at most). A failure is logged, not thrown: the loops connect on
   * their own and retry as always.
   */
  async warmUp(): Promise<void> {
    const started = performance.now();
    try {
      const [connections, webhooks] = await Promise.all([this.deliveries.warmUp(), this.webhooks.enabled(WARM_WEBHOOKS)]);
      this.targets.remember(webhooks);
      // After the database's part: both on this process's one core would only slow each other.
      const requests = await warmHttpClient();
      // The broker sinks' connections, exchanges and streams, as their first attempts would make them.
      const sinks = await this.targets.warmUp(await this.webhooks.enabledSinks(), SINK_WARM_UP_MS);
      this.logger.info({ connections, webhooks: webhooks.length, requests, sinks, ms: Math.round(performance.now() - started) }, 'webhook relay warmed up');
    } catch (error) {
      this.logger.warn({ err: error }, 'warming the webhook relay up failed; starting cold');
    }
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.stopping = false;
    if (this.config.envSinks) void this.syncEnvSinks(this.config.envSinks);
    // One relay per notice (a queue group): fan-outs are one at a time across the relays (a lock), so a notice each
    // relay took made one fan-out find the events and the others wait for the lock and find none. In the HA cluster
    // at 25 rounds a second (bench/cluster), 149 fan-out transactions a second for 124 events, half of them empty.
    // A relay that misses a notice still polls (pollIntervalMs).
    this.subscription = this.bus.subscribe(Subjects.outboxWildcard, () => this.fanOutLoop.poke(), { queue: FAN_OUT_QUEUE });
    this.sinksSubscription = this.bus.subscribe(Subjects.sinksChanged, () => this.closeUnusedConnections());
    this.connectionCheck = setInterval(() => this.closeUnusedConnections(), SINK_CONNECTION_CHECK_MS);
    this.connectionCheck.unref();
    this.fanOutLoop.start();
    this.claimLoop.start();
  }

  /** Stops claiming, lets requests in progress finish, gives back what was not sent, records results. */
  async stop(): Promise<void> {
    if (!this.running) {
      // Stopped before it started: the connections warmUp opened go with it.
      await this.targets.close();
      return;
    }
    this.running = false;
    this.stopping = true;
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
    await this.results.drain();
    await this.targets.close();
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
        await this.targets.closeUnused(inUse);
      } while (this.connectionCheckWanted && this.running);
    })()
      .catch((error: unknown) => this.logger.warn({ err: error }, 'closing unused broker connections failed'))
      .finally(() => (this.checkingConnections = undefined));
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
      const claimedAt = Date.now();
      this.planned = new Map();
      const fanned = await this.deliveries.fanOut(this.config.batchSize, matchWebhooks, this.running ? this.direct : undefined);
      for (const webhookId of fanned.webhookIds) webhookIds.add(webhookId);
      if (fanned.claims.length > 0) await this.queueDirect(fanned.claims, claimedAt);
      // Rows left pending behind a run of ours: its last success claims the lane on in its flush.
      for (const candidate of fanned.leftPending) {
        const run = this.lanes.get(laneKey(candidate.webhookId, candidate.event.instanceId, candidate.laneChatId));
        if (run) run.mayHaveMore = true;
      }
      if (fanned.pendingWebhookIds.size > 0) {
        // Rows only for receivers that already have half a batch claimed here leave the claim to
        // their progress: a claim now would leave each of their lanes out, after walking them all.
        // Whether they have is judged when the claim pass runs; a webhook not read yet may be anyone's.
        for (const webhookId of fanned.pendingWebhookIds) {
          const row = this.targets.cached(webhookId);
          if (row) this.movedOn.add(this.targets.receiverKeyOf(row));
          else this.claimWanted = true;
        }
        this.claimLoop.poke();
      }
      if (fanned.events < this.config.batchSize) return webhookIds;
    }
  }

  /**
   * Fan-out's plan (DirectFanOut, ADR 0046): which of its deliveries this relay claims at their insert, and after
   * which event of their lane nothing may be pending for that. A lane is offered when its webhook is enabled and
   * reachable here and its receiver has room (what it takes in DIRECT_QUEUE_WINDOWS seconds at its recent pace, at
   * least a batch, claimed and unsent here), with the last event of this relay's run of it: an open run takes the new claims at its end, a
   * run that ended delivered leaves its lane to a new one, and a lane with no run here must have nothing pending.
   * Once a lane's delivery is not offered, none after it in the batch is (it would overtake the one left pending).
   */
  private async planDirect(candidates: FanOutCandidate[]): Promise<Array<string | null>> {
    if (!this.running) return candidates.map(() => null);
    const webhooks = await this.targets.webhooksOf([...new Set(candidates.map((candidate) => candidate.webhookId))]);
    const planned = new Map<string, number>();
    const decided = new Map<string, string | null>();
    return candidates.map((candidate) => {
      const lane = laneKey(candidate.webhookId, candidate.event.instanceId, candidate.laneChatId);
      const earlier = decided.get(lane);
      if (earlier === null) return null;
      const webhook = webhooks.get(candidate.webhookId);
      let after: string | null = null;
      if (webhook && webhook.enabled && !this.targets.isDisabled(webhook.id) && this.targets.transportOf(webhook)) {
        const origin = this.targets.receiverKeyOf(webhook);
        const queued = (this.receivers.get(origin)?.claimed ?? 0) + (planned.get(origin) ?? 0);
        if (queued < this.directLimit(origin)) {
          if (earlier !== undefined) after = earlier;
          else {
            // A run still sent, or one that ended delivered, is what the lane's new claims follow.
            const kept = this.lanes.get(lane);
            const run = kept && (!kept.ended || kept.ok) ? kept : null;
            after = run ? run.lastEventId : '0';
            this.planned.set(lane, run);
          }
          planned.set(origin, (planned.get(origin) ?? 0) + 1);
        }
      }
      decided.set(lane, after);
      return after;
    });
  }

  /** How many deliveries fan-out may claim for a receiver and leave queued here: DIRECT_QUEUE_WINDOWS of its recent pace, at least a batch. */
  private directLimit(origin: string): number {
    const pace = this.pace.get(origin);
    if (!pace) return this.config.batchSize;
    const age = Date.now() - pace.at;
    const perWindow = age >= 2 * PACE_WINDOW_MS ? 0 : age >= PACE_WINDOW_MS ? pace.current : Math.max(pace.current, pace.previous);
    return Math.max(this.config.batchSize, DIRECT_QUEUE_WINDOWS * perWindow);
  }

  private notePace(origin: string): void {
    const now = Date.now();
    let pace = this.pace.get(origin);
    if (!pace) this.pace.set(origin, (pace = { at: now, current: 0, previous: 0 }));
    else if (now - pace.at >= PACE_WINDOW_MS) {
      pace.previous = now - pace.at >= 2 * PACE_WINDOW_MS ? 0 : pace.current;
      pace.current = 0;
      pace.at = now;
    }
    pace.current++;
  }

  /**
   * Queues the deliveries a fan-out claimed (ADR 0046), each behind its lane's run as planned: at the end of the
   * run if it is still open, in a new run if the lane had none or its run ended delivered. A lane whose run
   * ended otherwise meanwhile (a failure, claims given back) gives them back: they wait behind its head.
   */
  private async queueDirect(claims: DeliveryClaim[], claimedAt: number): Promise<void> {
    const sendBy = this.sendByOf(claimedAt);
    const giveBack: string[] = [];
    const touched = new Set<string>();
    // Each lane's claims together, in lane order (the claims come in event order).
    const byLane = new Map<string, { webhook: WebhookRow; claims: DeliveryClaim[] }>();
    for (const claim of claims) {
      const webhook = this.targets.cached(claim.webhookId);
      if (this.stopping || !webhook) {
        giveBack.push(claim.deliveryId);
        continue;
      }
      const lane = laneKey(claim.webhookId, claim.event.instanceId, laneChatOf(webhook, claim.event.chatId));
      const group = byLane.get(lane);
      if (group) group.claims.push(claim);
      else byLane.set(lane, { webhook, claims: [claim] });
    }
    for (const [lane, { webhook, claims: laneClaims }] of byLane) {
      const origin = this.targets.receiverKeyOf(webhook);
      const planned = this.planned.get(lane);
      const current = this.lanes.get(lane);
      const last = laneClaims[laneClaims.length - 1];
      let run: LaneRun;
      if (current && !current.ended && (planned === null || planned === current)) {
        run = current;
        for (const claim of laneClaims) {
          claim.headId = run.claims[0]?.headId ?? claim.deliveryId;
          claim.position = run.claims.length + 1;
          run.claims.push(claim);
        }
        run.sendBy.push(...laneClaims.map(() => sendBy));
        run.lastEventId = last.event.id;
      } else if (planned === null || (planned?.ended && planned.ok && (current === planned || current === undefined))) {
        run = { webhook, claims: laneClaims, sendBy: laneClaims.map(() => sendBy), lane, lastEventId: last.event.id, mayHaveMore: false };
        this.remember(run);
        this.receiverOf(origin).waiting.push(run);
      } else {
        // The run they were to follow ended without delivering all of its claims: they wait behind its head.
        giveBack.push(...laneClaims.map((claim) => claim.deliveryId));
        continue;
      }
      this.receiverOf(origin).claimed += laneClaims.length;
      touched.add(origin);
    }
    for (const origin of touched) {
      const receiver = this.receivers.get(origin);
      if (receiver) this.pump(origin, receiver);
    }
    if (giveBack.length > 0) {
      await this.deliveries.release(giveBack).catch((error: unknown) => this.logger.warn({ err: error }, 'giving back claims of fan-out failed'));
      this.claimWanted = true;
      this.claimLoop.poke();
    }
  }

  /** A lane's new run becomes the one fan-out judges the lane by; ended runs are forgotten when too many are kept. */
  private remember(run: LaneRun): void {
    this.lanes.set(run.lane, run);
    if (this.lanes.size <= MAX_REMEMBERED_LANES) return;
    for (const [lane, kept] of this.lanes) if (kept.ended) this.lanes.delete(lane);
  }

  /** Nothing claimed at `claimedAt` is sent after this: a request started by then ends (or times out) before the claim lapses. */
  private sendByOf(claimedAt: number): number {
    // Unless claims are set shorter than the request timeout; then half the claim at least is used.
    return claimedAt + Math.max(this.config.claimMs - this.config.requestTimeoutMs, this.config.claimMs / 2);
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
    for (const [id, row] of this.targets.cachedRows()) {
      if (!row) continue;
      const origin = this.targets.receiverKeyOf(row);
      const receiver = this.receivers.get(origin);
      if (receiver && this.isBusy(receiver)) {
        busy.push(id);
        // Left out of the claim asking: claim for it once it has room.
        this.deferred.add(origin);
      }
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
    for (const origin of this.movedOn) if (!this.hasRoom(origin)) this.deferred.add(origin);
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
    await this.queueClaims(claims, claimedAt);
    return claims.length;
  }

  /** The next runs a flush of results claimed: queued like a claim's (given back when the relay is stopping). */
  private async queueNextRuns(claims: DeliveryClaim[], claimedAt: number): Promise<void> {
    try {
      await this.queueClaims(claims, claimedAt);
    } catch (error) {
      // Not queued: released by queueClaims, or left to lapse (sent again by whoever claims them then).
      this.logger.warn({ err: error, count: claims.length }, 'queueing the next runs of delivered lanes failed');
    }
  }

  /** Queues claimed runs at their receivers and starts what they have room for. */
  private async queueClaims(claims: DeliveryClaim[], claimedAt: number): Promise<void> {
    let webhooks: Map<string, WebhookRow | null>;
    try {
      webhooks = await this.targets.webhooksOf([...new Set(claims.map((claim) => claim.webhookId))]);
    } catch (error) {
      await this.deliveries.release(claims.map((claim) => claim.deliveryId)).catch(() => undefined);
      throw error;
    }
    // Stopping (a flush's claims can arrive after `stop` gave back what waited): give these back too.
    if (this.stopping) {
      await this.deliveries.release(claims.map((claim) => claim.deliveryId));
      return;
    }
    const sendBy = this.sendByOf(claimedAt);
    const cutShort: string[] = [];
    const gone = new Set<string>();
    for (const lane of groupByLane(claims)) {
      const webhookId = lane[0].webhookId;
      const webhook = webhooks.get(webhookId);
      if (!webhook || !webhook.enabled) {
        gone.add(webhookId);
        continue;
      }
      this.targets.enabledAgain(webhookId); // enabled again since this relay disabled it
      // A lane's run must start at its head and have no gap (claims are checked again as rows are
      // updated; a row someone else holds ends the run there).
      const unbroken = lane.findIndex((claim, index) => claim.position !== index + 1);
      const claimsToSend = unbroken === -1 ? lane : lane.slice(0, unbroken);
      if (unbroken !== -1) cutShort.push(...lane.slice(unbroken).map((claim) => claim.deliveryId));
      if (claimsToSend.length === 0) continue;
      const receiver = this.receiverOf(this.targets.receiverKeyOf(webhook));
      receiver.claimed += claimsToSend.length;
      const last = claimsToSend[claimsToSend.length - 1];
      const run: LaneRun = {
        webhook,
        claims: claimsToSend,
        sendBy: claimsToSend.map(() => sendBy),
        lane: laneKey(webhookId, last.event.instanceId, laneChatOf(webhook, last.event.chatId)),
        lastEventId: last.event.id,
        mayHaveMore: true,
      };
      // Fan-out may add to it (its lane's pending rows are this run's, up to its last event).
      const open = this.lanes.get(run.lane);
      if (!open || open.ended) this.remember(run);
      receiver.waiting.push(run);
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
  }

  /** Starts waiting runs while the receiver has slots. */
  private pump(origin: string, receiver: Receiver): void {
    while (this.running && receiver.active < this.config.maxInFlightPerReceiver && receiver.waiting.length > 0) {
      const run = receiver.waiting.shift() as LaneRun;
      receiver.active++;
      const busyBefore = this.isBusy(receiver);
      this.track(
        this.sendRun(run, receiver, origin)
          .catch(() => true)
          .then((endedEarly) => {
            receiver.active--;
            if (receiver.active === 0 && receiver.waiting.length === 0) {
              // Idle now: a claim it was left out of while busy may find its lanes.
              this.receivers.delete(origin);
              if (this.deferred.delete(origin)) this.movedOn.add(origin);
            } else {
              // Room again (its lanes were left out of the claims meanwhile), or a lane that moved on
              // without a recorded success (a final failure, claims given back).
              if (endedEarly) this.movedOn.add(origin);
              else if (busyBefore && !this.isBusy(receiver) && this.deferred.delete(origin)) this.movedOn.add(origin);
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
  private async sendRun(run: LaneRun, receiver: Receiver, origin: string): Promise<boolean> {
    let done = 0;
    let failed = false;
    try {
      // The run may grow while it is sent (fan-out adds its lane's new claims at the end until it has ended).
      while (done < run.claims.length) {
        if (!this.running || this.targets.isDisabled(run.webhook.id) || Date.now() > run.sendBy[done]) break;
        const ok = await this.sender.send(run.claims[done], run.webhook, run.mayHaveMore && done === run.claims.length - 1);
        done++;
        receiver.claimed--;
        if (!ok) {
          failed = true;
          break;
        }
        this.notePace(origin);
      }
    } catch (error) {
      failed = true;
      // Recording the failure failed: that delivery stays claimed and goes out again once it lapses.
      done++;
      receiver.claimed--;
      this.logger.error({ err: error, deliveryId: run.claims[done - 1]?.deliveryId }, 'webhook delivery bookkeeping failed');
    }
    // Ended, in the same turn as the loop's last check: nothing is added to it from here on.
    run.ended = true;
    run.ok = !failed && done === run.claims.length;
    if (!run.ok && this.lanes.get(run.lane) === run) this.lanes.delete(run.lane);
    receiver.claimed -= run.claims.length - done;
    const unsent = run.claims.slice(done).map((claim) => claim.deliveryId);
    // Only its lane's key and last event are needed from now on.
    run.claims = [];
    run.sendBy = [];
    if (unsent.length > 0) await this.deliveries.release(unsent).catch((error: unknown) => this.logger.warn({ err: error }, 'releasing unsent claims failed'));
    return failed || unsent.length > 0;
  }
}
