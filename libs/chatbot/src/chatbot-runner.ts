import type { Bus, BusSubscription } from '@gw/bus';
import { TakeoverRequester } from '@gw/session-client';
import { ErrorCode, RpcError, Subjects, type OutboxNotice, type SendRequest } from '@gw/contracts';
import {
  toChatRecord,
  type ChatbotInstanceSettings,
  toMessageRecord,
  type ChatRow,
  type ChatbotRecordRow,
  type ChatbotRepository,
  type ChatbotRoundRow,
  type MessageRow,
  type NewOutboxEvent,
  type QuickReplyRepository,
  type RoundContext,
} from '@gw/persistence';
import { LoopWaker, type Logger } from '@gw/platform';
import { randomBytes } from 'node:crypto';
import type { ChatbotConfig } from './config';
import { guardedFetch } from './guarded-fetch';
import type { KnowledgeIndexer } from './knowledge';
import { languageModel } from './providers';
import { agentOf, functionOf, triggerOf } from './records';
import { newMessageIds, planRound, quickReplyContent, type AiMetadata, type RoundPlan } from './round-planner';
import { audioKind } from './audio-messages';
import { audioApi, type Voice } from './voice';

/** Bus subject that wakes the runners (a round was admitted, knowledge was stored). */
export const CHATBOT_WAKE = 'chatbot.wake';

/** The `origin` of the outbox notice of a round's end (its ai_metadata update): the chatbot's own follower skips it. */
export const CHATBOT_ORIGIN = 'chatbot';

/** The instance is not reachable now: the round waits, without giving up. */
/** How long a reply's send follows a lost NATS node or a fenced holder before the round retries it later. */
const REPLY_FAILOVER_WAIT_MS = 20_000;
const UNREACHABLE: ReadonlySet<string> = new Set([ErrorCode.NoSession, ErrorCode.NotConnected, ErrorCode.Fenced, ErrorCode.Timeout]);
/** Tries of a round whose sends cannot reach the instance before it fails. */
const MAX_ATTEMPTS = 20;
const RETRY_MS = 5_000;
/** Finished rounds are kept this long (to see what the bot did), then purged, hourly. */
const KEEP_FINISHED_DAYS = 7;
const PURGE_INTERVAL_MS = 3_600_000;

/** What a finished round measured (the bench reads it). */
export interface RoundTiming {
  roundId: string;
  /** The contact's message the round replied to. */
  turn: string;
  receivedAt: number;
  /** This runner began the round (its claim). */
  claimedAt: number;
  modelStartedAt: number;
  modelEndedAt: number;
  /** The plan was stored (before the first send). */
  plannedAt: number;
  /** The last send was acked by the worker. */
  sentAt: number;
  /** The round's end was committed. */
  finishedAt: number;
}

/**
 * Runs the chatbot's rounds. Any number of runners may run side by side (in the dispatcher's
 * processes, and embedded in the gateway by default): each claims due rounds with FOR UPDATE SKIP
 * LOCKED, one round per chat at a time and in order (ChatbotRepository.claim). A round:
 * 1. is checked again (chatbot on, chat not paused, agent still there);
 * 2. is planned: the model is called once (with its tool steps) and its result and the messages to
 *    send, with their ids fixed, are stored in the round BEFORE anything is sent;
 * 3. is delivered: each planned message through the worker's `send` op, whose ledger relays an id at
 *    most once, so a runner that resumes a dead runner's round (its claim lapsed) resends the same ids
 *    and nothing goes out twice;
 * 4. is finished: the `ai_metadata` record is stored on the contact's last message of the round, with
 *    its `messages` event, in the transaction that ends the round.
 */
export class ChatbotRunner {
  private readonly active = new Map<string, Promise<void>>();
  private readonly fetch: typeof globalThis.fetch;
  private subscription?: BusSubscription;
  private running = false;
  private killed = false;
  private readonly waker = new LoopWaker();
  private loopDone?: Promise<void>;
  /** A pass found no room for more rounds: the end of one must look for due work again. */
  private full = false;
  private lastKnowledgeSweep = 0;
  private lastPurge = 0;
  /** Test and bench seam: told when a round finishes. */
  onRoundFinished?: (timing: RoundTiming) => void;

  private readonly requester: TakeoverRequester;

  constructor(
    private readonly rounds: ChatbotRepository,
    private readonly quickReplies: QuickReplyRepository,
    private readonly knowledge: KnowledgeIndexer,
    private readonly bus: Bus,
    private readonly config: ChatbotConfig,
    private readonly logger: Logger,
    /** Hears voice notes and speaks answers; without it a voice note is a placeholder and answers are text. */
    private readonly voice?: Voice,
  ) {
    this.fetch = guardedFetch(config.ssrf);
    // A reply's send follows a NATS node lost with it in flight (ConnectionLostError, or its holder's
    // rejoin notice: ADR 0059) instead of waiting out sendTimeoutMs; a send is relayed at most once whatever the tries.
    this.requester = new TakeoverRequester(bus, { failoverWaitMs: REPLY_FAILOVER_WAIT_MS });
  }

  private get runnerId(): string {
    return this.config.runnerId;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.subscription = this.bus.subscribe(CHATBOT_WAKE, () => this.poke());
    this.loopDone = this.loop();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.subscription?.unsubscribe();
    this.waker.halt();
    await this.loopDone;
    await Promise.allSettled([...this.active.values()]);
  }

  /** Test seam: stops as a crash would (claims left to lapse, nothing more written). */
  kill(): void {
    this.killed = true;
    this.running = false;
    this.subscription?.unsubscribe();
    this.waker.halt();
  }

  /** Look for due work now (the follower wakes the runners after the commit that admitted rounds). */
  poke(): void {
    this.waker.wake();
  }

  /** Whether this runner takes a round now: admission may claim a round due at once for it (`runClaimed`). */
  hasRoom(): boolean {
    return this.running && !this.killed && this.active.size < this.config.maxRounds;
  }

  /**
   * Runs a round admission claimed for this runner, once the admission's transaction committed, with the
   * context admission read (no claim, no context read on the way to the model).
   */
  runClaimed(round: ChatbotRoundRow, context: RoundContext): void {
    if (!this.running || this.killed || this.active.has(round.id)) return;
    this.track(round, context);
  }

  private track(round: ChatbotRoundRow, context?: RoundContext): void {
    const work = this.run(round, context).then((wake) => {
      this.active.delete(round.id);
      // The end of a round wakes the claim loop only when it may have work: a later round of its chat
      // (claimable now), a pass that found no room, or a round that did not end (retry, lost claim, error).
      if (wake || this.full) this.poke();
    });
    this.active.set(round.id, work);
  }

  private async loop(): Promise<void> {
    while (this.running) {
      this.waker.begin();
      let nextDue: Date | null = null;
      let failed = false;
      try {
        const free = this.config.maxRounds - this.active.size;
        this.full = free <= 0;
        if (free > 0) {
          // One statement claims and says when the next round falls due.
          const claimed = await this.rounds.claimDue(this.runnerId, free, this.config.claimMs);
          nextDue = claimed.nextDue;
          this.full = claimed.rounds.length >= free;
          for (const round of claimed.rounds) this.track(round);
        }
        if (Date.now() - this.lastPurge > PURGE_INTERVAL_MS) {
          this.lastPurge = Date.now();
          void this.rounds.purgeFinished(KEEP_FINISHED_DAYS).catch((error) => this.logger.warn({ err: error }, 'purging finished chatbot rounds failed'));
          void this.voice?.purge(KEEP_FINISHED_DAYS).catch((error) => this.logger.warn({ err: error }, 'purging voice note transcripts failed'));
        }
        if (Date.now() - this.lastKnowledgeSweep > this.config.pollIntervalMs) {
          this.lastKnowledgeSweep = Date.now();
          void this.knowledge.sweep().catch((error) => this.logger.warn({ err: error }, 'knowledge vectorization failed'));
        }
      } catch (error) {
        failed = true;
        if (!this.killed) this.logger.error({ err: error }, 'claiming chatbot rounds failed');
      }
      if (!this.running) break;
      // Wakes keep coming (rounds ending, admissions) while the database is down: wait before the next claim.
      if (failed) {
        await this.waker.backoff(this.config.pollIntervalMs);
        continue;
      }
      this.waker.succeeded();
      // Until the next round falls due, a wake (an admission committed, a round ended; also one during
      // this pass) or the fallback poll.
      let sleepMs = this.config.pollIntervalMs;
      if (nextDue) sleepMs = Math.max(1, Math.min(sleepMs, nextDue.getTime() - Date.now() + 2));
      await this.waker.sleep(sleepMs);
    }
  }

  /** Runs a round; true when the claim loop should look for due work after it. */
  private async run(round: ChatbotRoundRow, context?: RoundContext): Promise<boolean> {
    const heartbeat = setInterval(
      () => {
        if (!this.killed) void this.rounds.renew(round.id, this.runnerId, this.config.claimMs).catch(() => undefined);
      },
      Math.max(50, Math.floor(this.config.claimMs / 3)),
    );
    try {
      return (await this.execute(round, context)) !== 'ended';
    } catch (error) {
      if (!this.killed) this.logger.error({ err: error, roundId: round.id, instanceId: round.instanceId }, 'chatbot round failed');
      // The claim lapses and another try follows (a plan, once stored, is resent with its ids).
      return true;
    } finally {
      clearInterval(heartbeat);
    }
  }

  /** A round; 'ended' when it finished and no later round of its chat is open. */
  private async execute(round: ChatbotRoundRow, claimedContext?: RoundContext): Promise<'ended' | void> {
    const claimedAt = Date.now();
    // Read by admission when it claimed the round, else one statement: each is a round trip on the way to the model.
    const { settings, disabledUntil, trigger, agent, functions, hasKnowledge, hasQuickReplies } =
      claimedContext ?? (await this.rounds.roundContext(round.instanceId, round.chatId, round.triggerId, round.agentId));
    const turn = String(round.inputs[round.inputs.length - 1]?.messageid ?? '');
    let plan = round.plan as unknown as RoundPlan | null;
    // A stored plan is a promise: it is kept even if the bot was turned off since (some of it may be out).
    if (!settings || (!settings.enabled && !plan)) return this.rounds.cancel(round.id, this.runnerId, 'canceled: chatbot disabled');
    if (!plan) {
      if (disabledUntil * 1000 > Date.now()) return this.rounds.cancel(round.id, this.runnerId, 'canceled: chatbot_disableUntil');
      plan = await this.plan(round, turn, settings, trigger, agent, functions, hasKnowledge, hasQuickReplies);
      if (!plan) return this.rounds.cancel(round.id, this.runnerId, 'canceled: the trigger or agent is gone');
      if (this.killed || !(await this.rounds.storePlan(round.id, this.runnerId, plan as unknown as Record<string, unknown>))) return;
    }
    const plannedAt = Date.now();
    if (this.killed) return;
    const delivery = await this.deliver(round, plan, agent ? agentOf(agent).typingDelay_seconds : 0, agent ? agentOf(agent).readMessages : false);
    if (this.killed || delivery === 'retry') return;
    const metadata: AiMetadata = plan.metadata;
    if (delivery.failed.length) {
      metadata.outcome = {
        ...metadata.outcome,
        status: delivery.sent ? metadata.outcome.status : 'send_failed',
        detail: `not sent: ${delivery.failed.join('; ')}`.slice(0, 1000),
      };
    }
    if (plan.handoff) {
      const minutes = settings.stopMinutes || this.config.defaultPauseMinutes;
      await this.rounds.pauseChat(round.instanceId, round.chatId, Math.floor(Date.now() / 1000) + minutes * 60, 'paused: handed over to a person');
    }
    const status = plan.failed || (delivery.failed.length && !delivery.sent) ? 'failed' : 'done';
    const lead = plan.lead && Object.keys(plan.lead).length ? { fields: plan.lead, event: (chat: ChatRow) => this.chatsEvent(round, chat) } : null;
    const finished = await this.rounds.finish(
      round,
      this.runnerId,
      status,
      metadata.outcome.status,
      turn,
      metadata as unknown as Record<string, unknown>,
      (row) => this.messagesEvent(round, row),
      lead,
    );
    if (!finished) return;
    if (finished.eventId)
      this.bus.publish(Subjects.outbox(round.instanceId), {
        instanceId: round.instanceId,
        lastId: finished.eventId,
        origin: CHATBOT_ORIGIN,
      } satisfies OutboxNotice);
    this.onRoundFinished?.({
      roundId: round.id,
      turn,
      receivedAt: round.receivedAt.getTime(),
      claimedAt,
      modelStartedAt: plan.modelStartedAt,
      modelEndedAt: plan.modelEndedAt,
      plannedAt,
      sentAt: delivery.sentAt,
      finishedAt: Date.now(),
    });
    if (!finished.queued) return 'ended';
  }

  /**
   * The round's plan: a quick-reply trigger's reply, or the agent's model call (the voice notes among
   * its messages and the history transcribed; a voice note's answer spoken). Null when its trigger or
   * agent is gone.
   */
  private async plan(
    round: ChatbotRoundRow,
    turn: string,
    settings: ChatbotInstanceSettings,
    triggerRow: ChatbotRecordRow | null,
    agentRow: ChatbotRecordRow | null,
    functionRows: ChatbotRecordRow[],
    hasKnowledge: boolean,
    hasQuickReplies: boolean,
  ): Promise<RoundPlan | null> {
    if (!triggerRow) return null;
    const trigger = triggerOf(triggerRow);
    if (trigger.type === 'quickreply') return this.quickReplyPlan(round, turn, trigger.quickReply_id, trigger.id);
    if (!agentRow) return null;
    const agent = agentOf(agentRow);
    const chat = (round.envelope.chat ?? {}) as Record<string, unknown>;
    const jids = [round.chatId, String(chat.wa_chatid ?? ''), String(chat.wa_chatlid ?? '')];
    const audio = audioApi(agent, settings.openaiApikey, this.config);
    // The round's own voice notes, newest first: heard before the knowledge is searched for what they said.
    const spoken = round.inputs
      .filter((input) => audioKind(input))
      .map((input) => String(input.messageid ?? ''))
      .reverse();
    const heard =
      spoken.length && this.voice ? this.voice.hear(round.instanceId, spoken, audio, this.config.modelTimeoutMs) : Promise.resolve(new Map<string, string>());
    const question = (transcripts: Map<string, string>) =>
      round.inputs
        .map((input) => (audioKind(input) ? (transcripts.get(String(input.messageid ?? '')) ?? '') : String(input.text ?? '')))
        .filter(Boolean)
        .join('\n');
    const functions = functionRows.map(functionOf).filter((fn) => fn.active);
    const [history, quickReplies, knowledge, transcripts] = await Promise.all([
      this.rounds.history(round.instanceId, jids, {
        max: agent.contextMaxMessages,
        min: agent.contextMinMessages,
        windowHours: agent.contextTimeWindow_hours,
        order: round.inputs.map((input) => String(input.messageid ?? '')),
      }),
      // The instance's quick replies (the model's send_quick_reply tool): not read when it has none.
      hasQuickReplies ? this.quickReplies.list(round.instanceId) : [],
      heard
        .then((transcripts) => this.knowledge.retrieve(round.instanceId, question(transcripts), settings.openaiApikey, hasKnowledge))
        .catch((error: unknown) => {
          this.logger.warn({ err: error, instanceId: round.instanceId }, 'knowledge retrieval failed; answering without it');
          return [];
        }),
      heard,
    ]);
    // Earlier voice notes of the history: their stored transcripts only (one read; a voice note never
    // heard — it came while the bot was paused — stays a placeholder rather than delay the round with
    // downloads of old media).
    const earlier = history.filter((row) => !row.fromMe && audioKind(row) && !transcripts.has(row.messageId)).map((row) => row.messageId);
    if (earlier.length && this.voice) for (const [id, text] of await this.voice.hear(round.instanceId, earlier, null, 0)) transcripts.set(id, text);
    const plan = await planRound({
      agent,
      model: await languageModel(agent, this.config, this.fetch),
      turn,
      history,
      inputs: round.inputs,
      chat,
      fieldsMap: settings.fieldsMap,
      transcripts,
      isGroup: round.chatId.endsWith('@g.us'),
      knowledge,
      quickReplies,
      functions,
      fetch: this.fetch,
      modelTimeoutMs: this.config.modelTimeoutMs,
      functionTimeoutMs: this.config.functionTimeoutMs,
      maxSteps: this.config.maxSteps,
    });
    // The contact spoke: the answer is spoken too (or stays text, outcome.detail saying why).
    const last = round.inputs[round.inputs.length - 1];
    if (last && audioKind(last) === 'ptt' && this.voice) return this.voice.speak(round.instanceId, plan, agent, audio, this.config.modelTimeoutMs);
    return plan;
  }

  private async quickReplyPlan(round: ChatbotRoundRow, turn: string, quickReplyId: string, triggerId: string): Promise<RoundPlan | null> {
    const reply = await this.quickReplies.find(round.instanceId, quickReplyId);
    if (!reply) return null;
    const content = quickReplyContent(reply);
    const now = Date.now();
    const metadata: AiMetadata = {
      agent_id: '',
      turn,
      flow_id: '',
      request: { messages: [], tools: [], options: { model: '', temperature: 0, maxTokens: 0, topP: 0, frequencyPenalty: 0, presencePenalty: 0 } },
      response: { choices: [], toolResults: [], error: '' },
      outcome: {
        status: content ? 'sent' : 'error',
        texts: content?.kind === 'text' ? 1 : 0,
        audio: false,
        menus: 0,
        files: content && content.kind !== 'text' ? 1 : 0,
        handoff: '',
        lead: [],
        detail: content
          ? `quick reply ${reply.shortCut} (trigger ${triggerId})`
          : `quick reply ${reply.shortCut} cannot be sent automatically (kind ${String(reply.message.kind)})`,
      },
    };
    return {
      metadata,
      sends: content ? [{ ...newMessageIds(), kind: 'quickreply', content, payload: { shortCut: reply.shortCut, quickReply_id: reply.id } }] : [],
      handoff: '',
      lead: {},
      failed: !content,
      modelStartedAt: now,
      modelEndedAt: now,
    };
  }

  /** Sends the plan's messages in order (each id at most once, by the worker's ledger). 'retry': the instance is not reachable now. */
  private async deliver(
    round: ChatbotRoundRow,
    plan: RoundPlan,
    typingSeconds: number,
    readMessages: boolean,
  ): Promise<{ sent: number; failed: string[]; sentAt: number } | 'retry'> {
    const chatJid = String(round.inputs[round.inputs.length - 1]?.chatid || round.chatId);
    const turn = plan.metadata.turn;
    let sent = 0;
    const failed: string[] = [];
    let sentAt = 0;
    const typingMs = typingSeconds * 1000;
    for (const [index, send] of plan.sends.entries()) {
      if (this.killed) return 'retry';
      const request: SendRequest = {
        instanceId: round.instanceId,
        recordId: send.recordId,
        messageId: send.messageId,
        chatJid,
        content: send.content,
        // Typing is shown here (below), not by the send: a send with a delay is stored before it is relayed,
        // and a resend of the same id during that delay (a runner resuming a dead one's round) would relay too.
        delayMs: 0,
        // The contact's messages are marked read with the first answer.
        readMessages: index === 0 && readMessages,
        record: {
          sendFunction: `chatbot/${send.kind}`,
          sendPayload: send.payload,
          trackSource: 'chatbot',
          trackId: round.agentId || round.triggerId,
          sendFolderId: '',
          aiMetadata: { agent_id: plan.metadata.agent_id, turn },
        },
      };
      try {
        if (typingMs > 0) {
          const audio = send.content.kind === 'media' && send.content.mediaType === 'audio';
          await this.bus.request(
            Subjects.instance(round.instanceId, 'chat.presence'),
            { instanceId: round.instanceId, chatJid, presence: audio ? 'recording' : 'composing', delayMs: typingMs },
            { timeoutMs: this.config.sendTimeoutMs },
          );
          await new Promise((resolve) => setTimeout(resolve, typingMs));
          if (this.killed) return 'retry';
        }
        // Queued: a send that lost its connection before reaching WhatsApp comes back (NotConnected) and the round retries it.
        await this.requester.requestAcrossTakeover(round.instanceId, 'send', { ...request, queued: true }, this.config.sendTimeoutMs);
        sent++;
        sentAt = Date.now();
      } catch (error) {
        const code = error instanceof RpcError ? error.code : ErrorCode.Internal;
        const message = error instanceof Error ? error.message : String(error);
        if (UNREACHABLE.has(code) && round.attempts < MAX_ATTEMPTS) {
          this.logger.warn({ instanceId: round.instanceId, roundId: round.id, err: message }, 'chatbot answer waits: the instance is not reachable');
          await this.rounds.retryLater(round.id, this.runnerId, RETRY_MS, `waiting: ${message}`.slice(0, 500));
          return 'retry';
        }
        failed.push(`${send.kind} ${send.messageId}: ${message}`);
      }
    }
    return { sent, failed, sentAt };
  }

  /** The `chats` event of the chat whose lead fields the model wrote. */
  private chatsEvent(round: ChatbotRoundRow, chat: ChatRow): NewOutboxEvent {
    const owner = String(round.envelope.owner ?? '');
    return {
      eventType: 'chats',
      chatId: chat.waChatId || chat.waChatLid,
      payload: { EventType: 'chats', chats: [toChatRecord(chat, owner)], instanceName: round.envelope.instanceName ?? '', owner },
    };
  }

  /** The `messages` event of the contact's message now carrying `ai_metadata` (the envelope of the round's last event). */
  private messagesEvent(round: ChatbotRoundRow, row: MessageRow): NewOutboxEvent {
    const owner = String(round.envelope.owner ?? '');
    const groupName = String((round.inputs[round.inputs.length - 1] ?? {}).groupName ?? 'Unknown');
    return {
      eventType: 'messages',
      chatId: round.chatId,
      payload: { ...round.envelope, EventType: 'messages', chatSource: 'updated', message: { ...toMessageRecord(row, owner), groupName } },
    };
  }
}

/** A runner id unique to this process and start. */
export function runnerId(prefix: string): string {
  return `${prefix}:${randomBytes(3).toString('hex')}`;
}
