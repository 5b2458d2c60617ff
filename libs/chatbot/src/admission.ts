import {
  ChatbotAdmissionRepository,
  type ChatbotChatContext,
  type ChatbotInstanceSettings,
  type ChatbotRecordRow,
  type ChatbotRoundRow,
  type OutboxRow,
  type RoundContext,
} from '@gw/persistence';
import { agentOf, triggerOf, type Stored, type TriggerSettings } from './records';

/** Message types that are no new turn of the contact: reactions, edits, revokes, poll votes, receipts of calls. */
const NOT_A_TURN = new Set(['ReactionMessage', 'ProtocolMessage', 'PollUpdateMessage', 'EncReactionMessage', 'KeepInChatMessage', 'PinInChatMessage', 'call']);

/**
 * The `messages` events admission ignores before reading anything, as JSON paths over the event's
 * payload (the outbox follower's `ignore`: a notice of only these wakes no step). Each mirrors a first
 * check of admitOne and may only ever match less than it: sent through the API (the bot's own answers
 * included), a message the chatbot recorded (its ai_metadata update), a copy of an earlier message.
 */
export const IGNORED_BEFORE_ADMISSION: readonly string[] = [
  '$.message ? (@.fromMe == true && @.wasSentByApi == true)',
  '$.message.ai_metadata.agent_id',
  '$.chatSource ? (@ != "updated")',
];

/** A received message older than this (it waited while the instance was offline) gets no answer. */
const STALE_AFTER_MS = 15 * 60_000;

export interface AdmissionOptions {
  /** Minutes a person typing on the phone pauses the bot when the instance sets no pause of its own. */
  defaultPauseMinutes: number;
  /** Now, in ms (tests). */
  now?: () => number;
  /**
   * Asked when a new round is due at once: the runner that takes it in admission's own transaction (it
   * runs it right after the commit, with what admission read), or null (a runner's claim takes it).
   */
  claim?: () => { runner: string; claimMs: number } | null;
}

/** A round admission claimed for the runner `AdmissionOptions.claim` named, with what it runs with. */
export interface ClaimedRound {
  round: ChatbotRoundRow;
  context: RoundContext;
}

/** What admission did with one event (for logs and tests). */
export type AdmissionResult =
  | { action: 'admitted'; roundId: string; triggerId: string; claimed?: ClaimedRound }
  | { action: 'paused'; reason: string; until: number }
  | { action: 'ignored'; reason: string };

type Json = Record<string, unknown>;

const str = (value: unknown): string => (typeof value === 'string' ? value : value === undefined || value === null ? '' : String(value));

/** Normalised for matching: lower case, no accents. */
export function fold(text: string): string {
  return text.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase().trim();
}

/** Whether `text` holds one of the `a|b|c` words or phrases, as whole words (an empty list matches anything). */
export function matchesWords(wordsToStart: string, text: string): boolean {
  const words = wordsToStart
    .split('|')
    .map((word) => fold(word))
    .filter(Boolean);
  if (!words.length) return true;
  const folded = fold(text);
  return words.some((word) => new RegExp(`(^|[^\\p{L}\\p{N}])${word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}($|[^\\p{L}\\p{N}])`, 'u').test(folded));
}

/** The lead condition of a trigger against the chat record (`lead_field` as named, or with the `lead_` prefix added). */
export function matchesLead(trigger: Pick<TriggerSettings, 'lead_field' | 'lead_operator' | 'lead_value'>, chat: Json): boolean {
  if (!trigger.lead_field || !trigger.lead_operator) return true;
  const field = trigger.lead_field in chat ? trigger.lead_field : `lead_${trigger.lead_field}`;
  const raw = chat[field];
  const values = Array.isArray(raw) ? raw.map(str) : [str(raw)];
  const actual = fold(values.join(','));
  const expected = fold(trigger.lead_value);
  const isEmpty = Array.isArray(raw) ? raw.length === 0 : actual === '' || actual === '0';
  switch (trigger.lead_operator) {
    case 'equals':
      return Array.isArray(raw) ? values.some((value) => fold(value) === expected) : actual === expected;
    case 'not_equals':
      return Array.isArray(raw) ? !values.some((value) => fold(value) === expected) : actual !== expected;
    case 'contains':
      return actual.includes(expected);
    case 'not_contains':
      return !actual.includes(expected);
    case 'greater':
    case 'less': {
      const [a, b] = [Number(actual), Number(expected)];
      if (!Number.isFinite(a) || !Number.isFinite(b) || actual === '') return false;
      return trigger.lead_operator === 'greater' ? a > b : a < b;
    }
    case 'empty':
      return isEmpty;
    case 'not_empty':
      return !isEmpty;
  }
}

/**
 * The outbox follower's handler for the chatbot: turns `messages` events into rounds, inside the
 * transaction that moves the follower's cursor (so each event is admitted exactly once).
 * - A message sent through the API (the bot's own included) is ignored; one typed on the phone by a
 *   person (fromMe, not sent by the API) pauses the bot in that chat (chatbot_stopWhenYouSendMsg, else
 *   chatbot_stopMinutes, else `defaultPauseMinutes`).
 * - A received message older than 15 minutes (it waited while the instance was offline) is not answered.
 * - A received message: groups are skipped when the instance or the trigger ignores them; the stop word
 *   (`chatbot_stopConversation`) pauses the chat for chatbot_stopMinutes; a chat whose
 *   `chatbot_disableUntil` lies ahead is left alone; else the chat's running conversation continues
 *   (within its agent's `contextTimeWindow_hours`), or the active trigger of highest priority whose
 *   words and lead condition match starts one.
 * `admissions` is bound within the follower's transaction (`ChatbotAdmissionRepository.within(tx)`).
 */
export async function admitEvents(
  admissions: ChatbotAdmissionRepository,
  instanceId: string,
  events: OutboxRow[],
  options: AdmissionOptions,
): Promise<AdmissionResult[]> {
  const messages = events.filter((event) => event.eventType === 'messages');
  // Settings, triggers, agents and functions, and the pause and running conversation of every chat of
  // the batch: one statement per batch (admission changes none of the first), and only once an event
  // needs them (most events of a round are ours: the answer, its receipts, ai_metadata).
  const chatIds = [...new Set(messages.map(chatOf).filter(Boolean))];
  let loaded: Promise<BatchContext | null> | undefined;
  let fresh = new Map<string, ChatbotChatContext>();
  const context = async (chatId: string): Promise<{ batch: BatchContext | null; chat?: ChatbotChatContext }> => {
    loaded ??= admissions.admissionContext(instanceId, chatIds).then((read) => {
      fresh = read.chats;
      return read.settings?.enabled ? batchContext(read.settings, read.triggers, read.agents, read.functions, read.hasKnowledge, read.hasQuickReplies) : null;
    });
    const batch = await loaded;
    // A chat's context read with the batch is what the first of its events that asks sees; the events
    // after it (which may have changed it) read their own.
    const chat = fresh.get(chatId);
    fresh.delete(chatId);
    return { batch, chat };
  };
  const results: AdmissionResult[] = [];
  for (const event of messages) {
    const result = await admitOne(admissions, context, event, options);
    // A pause writes the chat's lead field, which an event naming the same chat by its other id (phone
    // number or lid) reads too: after one, every event reads its chat's context anew.
    if (result.action === 'paused') fresh.clear();
    results.push(result);
  }
  return results;
}

/** The chat an event of `messages` is about. */
function chatOf(event: OutboxRow): string {
  return event.chatId || str(((event.payload as Json).message as Json | undefined)?.chatid);
}

function batchContext(
  settings: ChatbotInstanceSettings,
  triggerRows: ChatbotRecordRow[],
  agentRows: ChatbotRecordRow[],
  functions: ChatbotRecordRow[],
  hasKnowledge: boolean,
  hasQuickReplies: boolean,
): BatchContext {
  return {
    settings,
    triggers: triggerRows.map(triggerOf).filter((trigger) => trigger.active && (trigger.type === 'agent' || trigger.type === 'quickreply')),
    agents: new Map(agentRows.map((row) => [row.id, agentOf(row)])),
    rows: new Map([...triggerRows, ...agentRows].map((row) => [row.id, row])),
    functions,
    hasKnowledge,
    hasQuickReplies,
  };
}

interface BatchContext {
  settings: ChatbotInstanceSettings;
  /** The active agent and quick-reply triggers. */
  triggers: Array<Stored<TriggerSettings>>;
  agents: Map<string, ReturnType<typeof agentOf>>;
  /** The trigger and agent records by id, as stored (a claimed round's context). */
  rows: Map<string, ChatbotRecordRow>;
  functions: ChatbotRecordRow[];
  hasKnowledge: boolean;
  hasQuickReplies: boolean;
}

async function admitOne(
  admissions: ChatbotAdmissionRepository,
  context: (chatId: string) => Promise<{ batch: BatchContext | null; chat?: ChatbotChatContext }>,
  event: OutboxRow,
  options: AdmissionOptions,
): Promise<AdmissionResult> {
  const now = options.now?.() ?? Date.now();
  const payload = event.payload as Json;
  const message = (payload.message ?? {}) as Json;
  const chat = (payload.chat ?? {}) as Json;
  const messageId = str(message.messageid);
  const chatId = chatOf(event);
  if (!messageId || !chatId) return { action: 'ignored', reason: 'no message id' };
  if (chatId.endsWith('@newsletter') || chatId === 'status@broadcast') return { action: 'ignored', reason: 'not a conversation' };
  // A copy of an earlier message (edit, status change, our own ai_metadata update) is no new turn.
  if (payload.chatSource !== undefined && payload.chatSource !== 'updated') return { action: 'ignored', reason: 'not a new message' };
  if (message.ai_metadata && Object.keys(message.ai_metadata as Json).length) return { action: 'ignored', reason: 'a message the chatbot recorded' };

  if (message.fromMe === true && message.wasSentByApi === true) return { action: 'ignored', reason: 'sent through the API' };
  const { batch, chat: chatRead } = await context(chatId);
  if (!batch) return { action: 'ignored', reason: 'chatbot disabled' };
  const { settings, triggers, agents } = batch;
  if (message.fromMe === true) {
    const minutes = settings.stopWhenYouSendMsg || settings.stopMinutes || options.defaultPauseMinutes;
    const until = Math.floor(now / 1000) + minutes * 60;
    await admissions.pauseChat(settings.instanceId, chatId, until, 'paused: a person answered from the phone');
    return { action: 'paused', reason: 'a person answered from the phone', until };
  }
  if (NOT_A_TURN.has(str(message.messageType)) || str(message.edited) !== '' || str(message.reaction) !== '')
    return { action: 'ignored', reason: 'not a new turn' };
  // Messages that waited on WhatsApp's side while the instance was offline are not answered hours late.
  const sentAt = Number(message.messageTimestamp ?? 0);
  if (sentAt > 0 && now - sentAt > STALE_AFTER_MS) return { action: 'ignored', reason: 'too old to answer' };
  const isGroup = message.isGroup === true || chatId.endsWith('@g.us');
  if (isGroup && settings.ignoreGroups) return { action: 'ignored', reason: 'groups are ignored' };

  const text = str(message.text);
  if (settings.stopConversation && fold(text) === fold(settings.stopConversation)) {
    const until = Math.floor(now / 1000) + (settings.stopMinutes || options.defaultPauseMinutes) * 60;
    await admissions.pauseChat(settings.instanceId, chatId, until, 'paused: the contact sent the stop word');
    return { action: 'paused', reason: 'stop word', until };
  }
  // The chat's pause and running conversation: read with the batch's context, else one statement.
  const { disabledUntil, state } = chatRead ?? (await admissions.chatContext(settings.instanceId, chatId));
  if (disabledUntil * 1000 > now) return { action: 'ignored', reason: 'chatbot_disableUntil' };

  const usable = (trigger: Stored<TriggerSettings>) =>
    (trigger.type !== 'agent' || agents.has(trigger.agent_id)) && !(isGroup && trigger.ignoreGroups) && matchesLead(trigger, chat);

  let chosen: Stored<TriggerSettings> | undefined;
  if (state) {
    const running = triggers.find((trigger) => trigger.id === state.triggerId);
    const window = (agents.get(running?.agent_id ?? '')?.contextTimeWindow_hours || 24) * 3_600_000;
    if (running && running.type === 'agent' && usable(running) && now - state.lastTriggerAt.getTime() < window) chosen = running;
  }
  chosen ??= triggers
    .filter((trigger) => usable(trigger) && matchesWords(trigger.wordsToStart, text))
    .sort((a, b) => b.priority - a.priority || a.id.localeCompare(b.id))[0];
  if (!chosen) return { action: 'ignored', reason: 'no trigger matched' };

  const { message: _message, ...envelope } = payload;
  const claim = chosen.responseDelay_seconds === 0 ? (options.claim?.() ?? null) : null;
  const admitted = await admissions.admit(
    {
      instanceId: settings.instanceId,
      chatId,
      messageId,
      triggerId: chosen.id,
      agentId: chosen.type === 'agent' ? chosen.agent_id : '',
      delaySeconds: chosen.responseDelay_seconds,
      input: message,
      envelope: envelope as Json,
    },
    claim,
  );
  if (!admitted) return { action: 'ignored', reason: 'admitted before' };
  const result: AdmissionResult = { action: 'admitted', roundId: admitted.roundId, triggerId: chosen.id };
  if (admitted.claimed)
    result.claimed = {
      round: admitted.claimed,
      // What the runner would read before the model (roundContext): read in this transaction, moments ago.
      context: {
        settings,
        disabledUntil,
        trigger: batch.rows.get(chosen.id) ?? null,
        agent: chosen.type === 'agent' ? (batch.rows.get(chosen.agent_id) ?? null) : null,
        functions: batch.functions,
        hasKnowledge: batch.hasKnowledge,
        hasQuickReplies: batch.hasQuickReplies,
      },
    };
  return result;
}
