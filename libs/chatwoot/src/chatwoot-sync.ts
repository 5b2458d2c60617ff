// The Chatwoot bridge's worker: the outbox follower that turns WhatsApp events into jobs, and the runner
// that claims and performs them (chatwoot-copies.ts: WhatsApp → Chatwoot; chatwoot-replies.ts: back).
import type { Bus } from '@gw/bus';
import {
  ChatwootRepository,
  type ChatwootConfigRow,
  type ChatwootJob,
  FileRepository,
  LidMappingRepository,
  type OutboxCursorRepository,
} from '@gw/persistence';
import { guardedConnector, LoopWaker, type Logger, type SsrfGuard } from '@gw/platform';
import { OutboxFollower } from '@gw/relay';
import { randomBytes } from 'node:crypto';
import { Agent } from 'undici';
import { ChatwootClient, ChatwootError } from './chatwoot-client';
import { ChatwootCopies } from './chatwoot-copies';
import { JobKind, jobsOfEvents, lidsOfEvents, Refused } from './chatwoot-jobs';
import { ChatwootReplies } from './chatwoot-replies';

export interface ChatwootSyncConfig {
  /** Names this process in its claims. */
  runnerId: string;
  /** How long a claimed job is this runner's before another may take it over (a crashed runner's jobs wait this long). */
  claimMs: number;
  /** Fallback poll for due jobs (retries falling due, jobs written by the gateway's webhook receiver). */
  pollIntervalMs: number;
  /** Jobs claimed per pass (each from a different lane), run side by side. */
  batchSize: number;
  /** Timeout of one call to Chatwoot. */
  requestTimeoutMs: number;
  /** How long a send or media download through the session worker is awaited (a holder that died answers nothing; the job is then retried, through its heir). */
  workerTimeoutMs: number;
  /** Wait before try n+1 (the last repeats): Chatwoot down keeps the lane waiting, never drops it. */
  retryScheduleMs: number[];
  /** Tries after which a refusal Chatwoot will repeat (a 4xx) gives the job up. */
  maxRefusals: number;
  /** Finished jobs are kept this long (a redelivered webhook within it is recognised by its key). */
  keepDoneMs: number;
  ssrf: SsrfGuard;
}

export const CHATWOOT_SYNC_DEFAULTS = {
  claimMs: 60_000,
  pollIntervalMs: 500,
  batchSize: 16,
  requestTimeoutMs: 15_000,
  workerTimeoutMs: 60_000,
  retryScheduleMs: [1_000, 5_000, 15_000, 60_000, 300_000],
  maxRefusals: 3,
  keepDoneMs: 7 * 86_400_000,
} as const;

/**
 * The bridge's worker, hosted by the webhook relay (embedded in the gateway by default; any number of
 * processes side by side). Two halves:
 *
 * 1. The outbox follower (consumer `chatwoot`, instances with the bridge on) turns `messages` and
 *    `messages_update` events into jobs in the same transaction that moves its cursor: each event
 *    becomes one job, exactly once.
 * 2. The runner claims due lane heads (ChatwootRepository.claim: one job per conversation at a time, in
 *    order) and performs them: calls to Chatwoot, sends through the session worker. A failure waits per
 *    `retryScheduleMs` and blocks its lane meanwhile (order kept); a crash leaves the claim to lapse.
 *
 * Exactly once: a copy into Chatwoot carries `source_id` WAID:<id>, is linked to its WhatsApp id right
 * after, and a retried job (attempts > 1: an earlier try may have created it and died before linking)
 * first looks for that source id in the conversation. A send to WhatsApp has a fixed message id, linked
 * before it is sent, so the worker's send ledger relays it at most once and its own `messages` event is
 * known as a copy.
 */
export class ChatwootSync {
  private readonly agent: Agent;
  private readonly follower: OutboxFollower;
  private readonly claimer: string;
  private running = false;
  private loopDone?: Promise<void>;
  private readonly waker = new LoopWaker();
  private lastPurge = 0;
  /** Instances whose follower step wrote jobs, until that step has committed. */
  private readonly enqueued = new Set<string>();
  /** The Chatwoot → WhatsApp half: agents' replies and deletions sent through the session workers. */
  private readonly replies: ChatwootReplies;
  /** The WhatsApp → Chatwoot half: messages, receipts and deletions copied into Chatwoot. */
  private readonly copies: ChatwootCopies;

  constructor(
    cursors: OutboxCursorRepository,
    private readonly repository: ChatwootRepository,
    private readonly lids: LidMappingRepository,
    private readonly files: FileRepository,
    private readonly bus: Bus,
    private readonly config: ChatwootSyncConfig,
    private readonly logger: Logger,
  ) {
    this.agent = new Agent({ connect: guardedConnector(config.ssrf, { timeout: config.requestTimeoutMs }), keepAliveTimeout: 10_000 });
    this.claimer = `${config.runnerId}:${randomBytes(4).toString('hex')}`;
    this.replies = new ChatwootReplies(repository, files, bus, config);
    this.copies = new ChatwootCopies(repository, lids, files, bus, this.claimer, config, logger);
    this.follower = new OutboxFollower(
      cursors,
      bus,
      {
        consumer: 'chatwoot',
        eventTypes: ['messages', 'messages_update'],
        instances: () => this.repository.enabledInstances(),
        handle: async (tx, instanceId, events) => {
          const chatwoot = this.repository.within(tx);
          const numbers = await chatwoot.numbersOfLids(instanceId, lidsOfEvents(events));
          if ((await chatwoot.enqueue(instanceId, jobsOfEvents(events, numbers))) > 0) this.enqueued.add(instanceId);
        },
        // The jobs are visible once the follower's step has committed: claim them then (a 20 ms timer guessed it before).
        committed: (instanceId) => {
          if (this.enqueued.delete(instanceId)) this.poke();
        },
      },
      logger,
    );
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.follower.start();
    this.loopDone = this.loop();
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.waker.halt();
    await this.follower.stop();
    await this.loopDone;
    await this.agent.close().catch(() => undefined);
  }

  /** Jobs may be due (a webhook was received, the follower wrote some): claim now. */
  poke(): void {
    this.waker.wake();
  }

  /** The set of instances with the bridge on changed. */
  refresh(): void {
    this.follower.refresh();
  }

  /** One claim and its jobs, by hand (tests). Returns how many jobs ran. */
  async runOnce(): Promise<number> {
    const jobs = await this.repository.claim(this.claimer, this.config.batchSize, this.config.claimMs);
    await Promise.all(jobs.map((job) => this.run(job)));
    return jobs.length;
  }

  private async loop(): Promise<void> {
    while (this.running) {
      this.waker.begin();
      let ran = 0;
      let failed = false;
      try {
        ran = await this.runOnce();
        if (Date.now() - this.lastPurge > 3_600_000) {
          this.lastPurge = Date.now();
          await this.repository.purgeDone(this.config.keepDoneMs);
        }
      } catch (error) {
        failed = true;
        this.logger.error({ err: error }, 'chatwoot sync pass failed');
      }
      if (!this.running) break;
      // Pokes keep coming (webhooks received, jobs written) while the database is down: wait before the next claim.
      if (failed) {
        await this.waker.backoff(this.config.pollIntervalMs);
        continue;
      }
      this.waker.succeeded();
      if (ran > 0) {
        await this.waker.turn();
        continue;
      }
      await this.waker.sleep(this.config.pollIntervalMs);
    }
  }

  /** Performs one claimed job, its claim renewed meanwhile. */
  private async run(job: ChatwootJob): Promise<void> {
    // A job may outlast its claim (a large media download, a slow Chatwoot): the claim is renewed while it
    // runs, so no runner takes it over and does it a second time alongside. Only a dead runner's lapses.
    const heartbeat = setInterval(
      () => {
        this.repository
          .extendClaim(job, this.config.claimMs)
          .catch((error: unknown) => this.logger.warn({ err: error, jobId: job.id }, 'renewing a chatwoot job claim failed'));
      },
      Math.max(100, Math.floor(this.config.claimMs / 3)),
    );
    heartbeat.unref();
    try {
      await this.attempt(job);
    } finally {
      clearInterval(heartbeat);
    }
  }

  /** One try of a job, and its outcome recorded (done, given up, or retried later). */
  private async attempt(job: ChatwootJob): Promise<void> {
    try {
      const config = await this.repository.findConfig(job.instanceId);
      if (!config || !config.enabled) {
        await this.repository.finish(job, 'skipped: the Chatwoot bridge is off');
        return;
      }
      const outcome = await this.perform(job, config);
      await this.repository.finish(job, outcome);
    } catch (error) {
      const refused = error instanceof Refused || (error instanceof ChatwootError && !error.retryable);
      const message = error instanceof Error ? error.message : String(error);
      if (refused && job.attempts >= this.config.maxRefusals) {
        this.logger.warn({ instanceId: job.instanceId, kind: job.kind, jobId: job.id, err: message }, 'chatwoot job given up');
        await this.repository.finish(job, 'failed', message).catch(() => undefined);
        await this.markReplyFailed(job, message);
        return;
      }
      const schedule = this.config.retryScheduleMs;
      let delay = schedule[Math.min(job.attempts - 1, schedule.length - 1)];
      if (error instanceof ChatwootError && error.retryAfterMs) delay = Math.max(delay, error.retryAfterMs);
      this.logger.info(
        { instanceId: job.instanceId, kind: job.kind, jobId: job.id, attempts: job.attempts, delay, err: message },
        'chatwoot job retried later',
      );
      await this.repository
        .retryLater(job, delay, message)
        .catch((failure: unknown) => this.logger.warn({ err: failure }, 'recording a chatwoot retry failed'));
    }
  }

  /** An agent's reply that will not reach WhatsApp shows as failed in Chatwoot, with why (best effort). */
  private async markReplyFailed(job: ChatwootJob, reason: string): Promise<void> {
    if (job.kind !== JobKind.CwSend) return;
    const { conversationId, cwMessageId } = job.payload as { conversationId: number; cwMessageId: number };
    const config = await this.repository.findConfig(job.instanceId).catch(() => null);
    if (!config) return;
    await new ChatwootClient(config, this.agent, this.config.requestTimeoutMs, this.config.ssrf)
      .updateMessageStatus(conversationId, cwMessageId, 'failed', reason.slice(0, 500))
      .catch(() => undefined);
  }

  private perform(job: ChatwootJob, config: ChatwootConfigRow): Promise<string> {
    const client = new ChatwootClient(config, this.agent, this.config.requestTimeoutMs, this.config.ssrf);
    switch (job.kind) {
      case JobKind.WaMessage:
        return this.copies.copyMessage(job, config, client);
      case JobKind.WaUpdate:
        return this.copies.copyUpdate(job, client);
      case JobKind.CwSend:
        return this.replies.send(job, config, client);
      case JobKind.CwDelete:
        return this.replies.delete(job);
      default:
        return Promise.resolve(`skipped: unknown kind ${job.kind}`);
    }
  }
}
