import type { Bus, BusSubscription } from '@gw/bus';
import { ErrorCode, RpcError, Subjects, type SendRequest } from '@gw/contracts';
import {
  ChatRepository,
  InstanceRepository,
  type LeaseRepository,
  type SendLimitRepository,
  SendQueueRepository,
  type ClaimedLane,
  type LaneClaim,
  type QueuedSend,
} from '@gw/persistence';
import { contextOfTraceparent, inSpan, LoopWaker, type Logger, SpanKind } from '@gw/platform';
import { resolveRequestPlaceholders } from '@gw/domain';
import { TakeoverRequester } from '@gw/session-client';
import { randomBytes } from 'node:crypto';

export interface AsyncDispatcherConfig {
  /** Names this dispatcher in its claims (claimed_by = `<id>:<instance>:<nonce>`). */
  dispatcherId: string;
  /** A lane claim lasts this long unless renewed; a dead dispatcher's lanes are free after it. */
  claimMs: number;
  /** Slow poll: wake-ups come from the bus; this catches lost notifications and lapsed claims. */
  pollIntervalMs: number;
  /** Instances this dispatcher sends for at the same time (one send each). */
  maxLanes: number;
  /** Worker answer timeout on top of the message's own typing delay. */
  sendTimeoutMs: number;
  /** Hand-overs (timeouts, errors) before the message is marked Failed. */
  maxAttempts: number;
  /** Wait before attempt n+1 (last value repeats). */
  retryBackoffMs: number[];
  /** Wait while the instance has no connected session (does not count as an attempt). */
  disconnectedRetryMs: number;
  /**
   * How long a send follows a takeover of its instance (its holder died: the same request, same ids,
   * every 250 ms until the heir answers) before it counts as unreachable (FAILOVER_WAIT_MS, ADR 0007).
   */
  failoverWaitMs?: number;
}

export const ASYNC_DISPATCHER_DEFAULTS: Omit<AsyncDispatcherConfig, 'dispatcherId'> & { failoverWaitMs: number } = {
  claimMs: 30_000,
  pollIntervalMs: 1_000,
  maxLanes: 64,
  sendTimeoutMs: 40_000,
  maxAttempts: 5,
  retryBackoffMs: [2_000, 10_000, 30_000, 60_000],
  disconnectedRetryMs: 5_000,
  failoverWaitMs: 20_000,
};

/** The async dispatchers' queue group for queue notices: each notice wakes one dispatcher's claim. */
export const DISPATCH_WAKE_QUEUE = 'dispatcher.async';

/** Sends in a row for one instance without a gap before its claim goes back (fairness between lanes). */
const MAX_STREAK = 16;

/** send's answers besides a next head: the lane was given back, or it is still claimed and its next head is to be taken. */
const LANE_DONE = 'lane-done' as const;
const TAKE_NEXT = 'take-next' as const;

/** Errors after which retrying cannot help: the message fails at once. */
const PERMANENT: ReadonlySet<string> = new Set([ErrorCode.BadRequest, ErrorCode.NotFound]);
/** A limit WhatsApp put on new chats whose end was not recorded (the worker records it with the refusal). */
const LIMIT_FALLBACK_MS = 60_000;

/** The instance is not reachable now: wait, without counting an attempt. */
const UNREACHABLE: ReadonlySet<string> = new Set([ErrorCode.NoSession, ErrorCode.NotConnected, ErrorCode.Fenced]);

/**
 * Sends the `async=true` queue: per instance one send at a time, in acceptance order, with the
 * instance's random gap between sends. All state is in Postgres (SendQueueRepository); any number of
 * dispatchers run side by side and a dead one's lanes are taken over once its claims lapse.
 */
export class AsyncDispatcher {
  private readonly claimPrefix: string;
  private readonly active = new Map<string, Promise<void>>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private subscription?: BusSubscription;
  private running = false;
  /** Set by kill(): behave as a crashed process (write nothing more, release nothing). */
  private killed = false;
  private readonly waker = new LoopWaker();
  private loopDone?: Promise<void>;
  /** The holder check and the takeover retry of sync sends (ADR 0007, 0012). */
  private readonly requester: TakeoverRequester;

  constructor(
    private readonly queue: SendQueueRepository,
    private readonly instances: InstanceRepository,
    private readonly chats: ChatRepository,
    private readonly bus: Bus,
    private readonly config: AsyncDispatcherConfig,
    private readonly logger: Logger,
    /** Tells a takeover under way (a lease left behind by a dead holder); without it a dead holder's send waits disconnectedRetryMs. */
    leases?: LeaseRepository,
    /** WhatsApp's limits on new chats: a send that would open one waits while one applies (without it, such a send fails). */
    private readonly limits?: SendLimitRepository,
  ) {
    this.claimPrefix = `${config.dispatcherId}:${randomBytes(3).toString('hex')}`;
    this.requester = new TakeoverRequester(bus, {
      failoverWaitMs: config.failoverWaitMs ?? ASYNC_DISPATCHER_DEFAULTS.failoverWaitMs,
      heldRecently: leases ? (instanceId, withinMs) => leases.heldRecently(instanceId, withinMs) : undefined,
    });
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    // One dispatcher per notice (a queue group): each claim takes lanes with SKIP LOCKED, so a notice every dispatcher
    // took made one claim find the lane and the others claim nothing (bench/cluster at 25 rounds a second: 3 lane
    // claims per async send, 2 of them empty). The others still poll (pollIntervalMs).
    this.subscription = this.bus.subscribe(Subjects.queueWildcard, () => this.poke(), { queue: DISPATCH_WAKE_QUEUE });
    this.loopDone = this.loop();
  }

  /** Clean stop: no new sends, the ones in flight finish and their lanes are released. */
  async stop(): Promise<void> {
    this.running = false;
    this.subscription?.unsubscribe();
    this.clearTimers();
    this.waker.halt();
    await this.loopDone;
    await Promise.allSettled([...this.active.values()]);
  }

  /** Test seam: stops as a crash would (timers stopped, claims left to lapse, answers ignored). */
  kill(): void {
    this.killed = true;
    this.running = false;
    this.subscription?.unsubscribe();
    this.clearTimers();
    this.waker.halt();
  }

  private poke(): void {
    this.waker.wake();
  }

  private async loop(): Promise<void> {
    while (this.running) {
      this.waker.begin();
      let failed = false;
      try {
        const free = this.config.maxLanes - this.active.size;
        if (free > 0) {
          for (const lane of await this.queue.claimLanes(this.claimPrefix, free, this.config.claimMs)) {
            // A lane claimed while stopping goes back: its head, marked in flight, is not sent.
            if (!this.running) {
              await this.queue.release(lane).catch(() => undefined);
              continue;
            }
            const work = this.runLane(lane).finally(() => {
              this.active.delete(lane.instanceId);
              this.poke();
            });
            this.active.set(lane.instanceId, work);
          }
        }
      } catch (error) {
        failed = true;
        if (!this.killed) this.logger.error({ err: error }, 'claiming async send lanes failed');
      }
      if (!this.running) break;
      // Queue notices keep coming while the database is down: wait before the next claim, whatever wakes.
      if (failed) {
        await this.waker.backoff(this.config.pollIntervalMs);
        continue;
      }
      this.waker.succeeded();
      await this.waker.sleep(this.config.pollIntervalMs);
    }
  }

  /** One send of the lane's head under the claim, then the lane goes back (paced) for the next. */
  private async runLane(lane: ClaimedLane): Promise<void> {
    const claim: LaneClaim = { instanceId: lane.instanceId, claimId: lane.claimId };
    // The claim came with the head marked in flight (null: every queued send waits behind a hold).
    let head: QueuedSend | null = lane.head;
    try {
      // An instance without a gap keeps its claim between sends (up to MAX_STREAK, then other lanes get
      // their turn): no claim round per send. Each send's completion takes the next head in its own statement.
      for (let streak = 1; ; streak++) {
        if (this.killed) return;
        if (!head) {
          await this.queue.release(claim);
          return;
        }
        const more = streak < MAX_STREAK;
        const after = await this.send(claim, head, more);
        if (after === LANE_DONE || this.killed) return;
        // After a hold the lane is still claimed: its next head (marked in flight; null: none, claim lost, reset).
        head = after === TAKE_NEXT ? (this.running && more ? await this.queue.takeHead(claim, this.config.claimMs) : null) : after;
      }
    } catch (error) {
      if (this.killed) return;
      this.logger.error({ err: error, instanceId: claim.instanceId }, 'async send lane failed');
      // The claim lapses by itself; release early when we can.
      await this.queue.release(claim).catch(() => undefined);
    }
  }

  /**
   * Hands the head over and records the outcome. Answers the lane's next head when its completion kept the claim and
   * took it (`more` and still running when the answer came, no gap), TAKE_NEXT when the head was held and the lane is
   * still claimed, LANE_DONE when the lane was given back (released, paced, or waiting to retry).
   */
  private async send(claim: LaneClaim, head: QueuedSend, more: boolean): Promise<QueuedSend | typeof TAKE_NEXT | typeof LANE_DONE> {
    // While WhatsApp limits new chats, a send that would open one is not tried (each try counts as one
    // more reach-out): it waits for the limit's end, and the lane goes on with the sends behind it.
    const limit = await this.newChatLimit(head);
    if (limit) {
      await this.queue.hold(claim, head.id, limit.until, limit.reason);
      return TAKE_NEXT;
    }
    const heartbeat = setInterval(
      () => {
        if (this.killed) return;
        void this.queue.renew(claim, this.config.claimMs).catch(() => undefined);
      },
      Math.max(50, Math.floor(this.config.claimMs / 3)),
    );
    this.timers.add(heartbeat);
    let outcome: { ok: true } | { ok: false; error: unknown };
    const stored = head.request as unknown as SendRequest;
    try {
      // Queued: a send that lost its connection before reaching WhatsApp comes back to us (NotConnected).
      const { traceparent, ...prepared } = await this.prepare(stored);
      const request = { ...prepared, queued: true };
      // A holder that dies with the request is noticed within a second, and the same request (same ids:
      // the ledger relays an id at most once) follows the takeover to the heir, as a sync send does.
      // Tracing on: a `queue send` span in the trace of the HTTP request that accepted it (its stored traceparent).
      await inSpan(
        'dispatcher',
        'queue send',
        {
          kind: SpanKind.CONSUMER,
          parent: contextOfTraceparent(traceparent),
          attributes: { 'wa.message.id': head.messageId, 'wa.send.attempt': head.attempts + 1 },
        },
        () => this.requester.requestAcrossTakeover(claim.instanceId, 'send', request, this.config.sendTimeoutMs + (request.delayMs ?? 0)),
      );
      outcome = { ok: true };
    } catch (error) {
      outcome = { ok: false, error };
    } finally {
      clearInterval(heartbeat);
      this.timers.delete(heartbeat);
    }
    if (this.killed) return LANE_DONE;

    if (outcome.ok) {
      // The worker stored Sent or Failed (a refusal by WhatsApp is final: never resent).
      // Without a gap, the same statement keeps the claim and takes the next head; not once stopping (stop()
      // lets the sends in flight finish and gives their lanes back).
      const goOn = more && this.running;
      const { gapMs, next } = await this.queue.complete(claim, head.id, goOn ? { claimMs: this.config.claimMs } : undefined);
      if (gapMs > 0) this.wakeAfter(gapMs);
      return next ?? LANE_DONE;
    }
    const error = outcome.error;
    const code = error instanceof RpcError ? error.code : ErrorCode.Internal;
    const message = error instanceof Error ? error.message : String(error);
    if (code === ErrorCode.Limited && this.limits) {
      // The worker met the limit (and recorded it): the send waits for its end, not counted as an attempt.
      const until = (await this.limits.active(claim.instanceId))[0]?.until ?? new Date(Date.now() + LIMIT_FALLBACK_MS);
      await this.queue.hold(claim, head.id, until, message);
      return TAKE_NEXT;
    }
    if (UNREACHABLE.has(code)) {
      await this.queue.retryLater(claim, head.id, this.config.disconnectedRetryMs, false, message);
      this.wakeAfter(this.config.disconnectedRetryMs);
      return LANE_DONE;
    }
    const attempts = head.attempts + 1;
    if (PERMANENT.has(code) || attempts >= this.config.maxAttempts) {
      this.logger.warn({ instanceId: claim.instanceId, messageId: head.messageId, attempts, err: message }, 'async send failed');
      const eventId = await this.queue.fail(claim, head.id, head.messageId, `failed to send: ${message}`);
      // Its messages_update is in the outbox with the Failed status; the relay's poll would find it too.
      if (eventId) {
        try {
          this.bus.publish(Subjects.outbox(claim.instanceId), { instanceId: claim.instanceId, lastId: eventId });
        } catch (error) {
          this.logger.warn({ err: error, instanceId: claim.instanceId }, 'outbox notice not published');
        }
      }
      this.poke();
      return LANE_DONE;
    }
    // Timeout included: the same request (same ids) goes again; a relayed id is answered from the store.
    const backoff = this.config.retryBackoffMs[Math.min(attempts - 1, this.config.retryBackoffMs.length - 1)] ?? 1_000;
    await this.queue.retryLater(claim, head.id, backoff, true, message);
    this.wakeAfter(backoff);
    return LANE_DONE;
  }

  /** The limit the head must wait for: one is in force and the head would open a new chat. */
  private async newChatLimit(head: QueuedSend): Promise<{ until: Date; reason: string } | null> {
    // `limited` was read with the head: false (the usual case) needs no read of the limits.
    if (!this.limits || head.limited === false) return null;
    const [limit] = await this.limits.active(head.instanceId);
    const chatJid = (head.request as unknown as SendRequest).chatJid;
    if (!limit || !(await this.limits.opensNewChat(head.instanceId, chatJid, head.messageId))) return null;
    const name = limit.kind === 'reachout_timelock' ? "WhatsApp's reach-out timelock (error 463)" : "WhatsApp's new-chat message cap (error 475)";
    return { until: limit.until, reason: `held: ${name} keeps this account from starting new chats until ${limit.until.toISOString()}` };
  }

  /** Placeholders are resolved when the message goes out (the lead may have changed meanwhile). */
  private async prepare(request: SendRequest): Promise<SendRequest> {
    const content = request.content;
    const text = content.kind === 'text' ? content.text : content.kind === 'media' ? content.caption : '';
    if (!text.includes('{{')) return request;
    const instance = await this.instances.findById(request.instanceId);
    if (!instance) return request;
    return resolveRequestPlaceholders(this.chats, { id: instance.id, fieldsMap: instance.fieldsMap }, request);
  }

  private wakeAfter(ms: number): void {
    if (!this.running) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.poke();
    }, ms + 5);
    this.timers.add(timer);
  }

  private clearTimers(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }
}
