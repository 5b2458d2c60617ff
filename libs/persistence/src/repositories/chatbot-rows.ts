// The chatbot's stored shapes (records, rounds, knowledge chunks, settings, chat context) and the row
// mappers and SQL fragments ChatbotRepository's statements share.
import type { MessageRow } from './message-row';

/**
 * A message of a chat's history as the model's context uses it: who wrote it and what it says
 * (`sendPayload` only for the bot's own audio: the text it spoke).
 */
export type ChatHistoryRow = Pick<
  MessageRow,
  'messageId' | 'fromMe' | 'senderName' | 'messageType' | 'mediaType' | 'text' | 'messageTimestamp' | 'sendPayload'
>;

/** The four record kinds of the chatbot (uazapi 2.0 §2.17). */
export type ChatbotKind = 'agent' | 'trigger' | 'knowledge' | 'function';

/** One agent, trigger, knowledge or function: its API fields in `data` (secrets in clear; the API masks them). */
export interface ChatbotRecordRow {
  id: string;
  instanceId: string;
  kind: ChatbotKind;
  data: Record<string, unknown>;
  createdAt: Date;
  updatedAt: Date;
}

/** A chunk of a knowledge record with its unit-length embedding. */
export interface KnowledgeChunk {
  text: string;
  embedding: number[];
}

/** A chunk retrieved for a question: its text and its cosine similarity. */
export interface RetrievedChunk {
  knowledgeId: string;
  text: string;
  score: number;
}

export type RoundStatus = 'gathering' | 'running' | 'done' | 'failed' | 'canceled';

/** A round: the contact's consecutive messages one agent answers in one model call. */
export interface ChatbotRoundRow {
  id: string;
  instanceId: string;
  chatId: string;
  triggerId: string;
  agentId: string;
  status: RoundStatus;
  dueAt: Date;
  /** The `message` records of the `messages` events gathered, oldest first. */
  inputs: Array<Record<string, unknown>>;
  /** The last event's envelope without its message: `chat`, `instanceName`, `owner`. */
  envelope: Record<string, unknown>;
  /** When the first message reached the chatbot (the bench's receive time). */
  receivedAt: Date;
  claimedBy: string | null;
  attempts: number;
  /** The model's result and the planned sends with their fixed ids, written before the first send. */
  plan: Record<string, unknown> | null;
  outcome: string;
}

/** A received message the follower admits into a round. */
export interface RoundInput {
  instanceId: string;
  chatId: string;
  messageId: string;
  triggerId: string;
  agentId: string;
  /** `responseDelay_seconds`: the round waits this long for the contact's next message. */
  delaySeconds: number;
  input: Record<string, unknown>;
  envelope: Record<string, unknown>;
}

/** The trigger a chat's conversation runs under. */
export interface ChatbotChatState {
  triggerId: string;
  agentId: string;
  lastTriggerAt: Date;
}

/** The instance's chatbot settings (instances row), as the follower and the runner read them. */
export interface ChatbotInstanceSettings {
  instanceId: string;
  name: string;
  owner: string;
  enabled: boolean;
  ignoreGroups: boolean;
  stopConversation: string;
  stopMinutes: number;
  stopWhenYouSendMsg: number;
  openaiApikey: string;
  /** The display names of lead_field01…20 (`/instance/updateFieldsMap`): what the chatbot's update_lead tool calls them. */
  fieldsMap: Record<string, string>;
}

export type Raw = Record<string, unknown>;

export function toSettings(raw: Raw): ChatbotInstanceSettings {
  return {
    instanceId: raw.id as string,
    name: raw.name as string,
    owner: (raw.owner as string | null) ?? '',
    enabled: Boolean(raw.chatbot_enabled),
    ignoreGroups: Boolean(raw.chatbot_ignore_groups),
    stopConversation: (raw.chatbot_stop_conversation as string | null) ?? '',
    stopMinutes: Number(raw.chatbot_stop_minutes ?? 0),
    stopWhenYouSendMsg: Number(raw.chatbot_stop_when_you_send_msg ?? 0),
    openaiApikey: (raw.openai_apikey as string | null) ?? '',
    fieldsMap: (raw.fields_map as Record<string, string> | null) ?? {},
  };
}

export const SETTINGS = `id, name, owner, chatbot_enabled, chatbot_ignore_groups, chatbot_stop_conversation, chatbot_stop_minutes, chatbot_stop_when_you_send_msg, openai_apikey, fields_map`;

export function toRecordRow(raw: Raw): ChatbotRecordRow {
  return {
    id: raw.id as string,
    instanceId: raw.instance_id as string,
    kind: raw.kind as ChatbotKind,
    data: raw.data as Record<string, unknown>,
    // Dates, or their JSON text when the row came through json_agg (roundContext).
    createdAt: new Date(raw.created_at as Date | string),
    updatedAt: new Date(raw.updated_at as Date | string),
  };
}

export function toRoundRow(raw: Raw): ChatbotRoundRow {
  return {
    id: String(raw.id),
    instanceId: raw.instance_id as string,
    chatId: raw.chat_id as string,
    triggerId: raw.trigger_id as string,
    agentId: raw.agent_id as string,
    status: raw.status as RoundStatus,
    dueAt: raw.due_at as Date,
    inputs: raw.inputs as Array<Record<string, unknown>>,
    envelope: raw.envelope as Record<string, unknown>,
    receivedAt: raw.received_at as Date,
    claimedBy: (raw.claimed_by as string | null) ?? null,
    attempts: Number(raw.attempts),
    plan: (raw.plan as Record<string, unknown> | null) ?? null,
    outcome: raw.outcome as string,
  };
}

/** Open rounds: not finished. */
export const OPEN = `('gathering', 'running')`;

/** A chat as admission sees it: its `chatbot_disableUntil` (unix seconds, 0 when unset) and its running conversation. */
export interface ChatbotChatContext {
  disabledUntil: number;
  state: ChatbotChatState | null;
}

/** What admission reads once per batch (admissionContext), with the first chat's context. */
export interface AdmissionContext {
  settings: ChatbotInstanceSettings | null;
  triggers: ChatbotRecordRow[];
  agents: ChatbotRecordRow[];
  functions: ChatbotRecordRow[];
  hasKnowledge: boolean;
  hasQuickReplies: boolean;
  /** The pause and running conversation of each chat asked for. */
  chats: Map<string, ChatbotChatContext>;
}

/** What a runner needs before it plans a round (roundContext(), or what admission read when it claimed the round). */
export interface RoundContext {
  settings: ChatbotInstanceSettings | null;
  /** The chat's `chatbot_disableUntil` (unix seconds). */
  disabledUntil: number;
  trigger: ChatbotRecordRow | null;
  agent: ChatbotRecordRow | null;
  functions: ChatbotRecordRow[];
  hasKnowledge: boolean;
  /** Whether the instance has quick replies (the model's `send_quick_reply` tool; none: not read). */
  hasQuickReplies: boolean;
}

export type ChatContextRaw = { until: string | null; trigger_id: string | null; agent_id: string | null; last_trigger_at: Date | string | null };

/** The chat's `chatbot_disableUntil` (unix seconds, null when unset) as a scalar subquery ($1 instance, `chat` the chat's id). */
export const CHAT_UNTIL = (
  chat: string,
) => `(SELECT max(CASE WHEN jsonb_typeof(lead->'chatbot_disableUntil') = 'number' THEN (lead->>'chatbot_disableUntil')::float8 END)::bigint
     FROM chats WHERE instance_id = $1 AND ${CHAT_IS(chat)})`;

/** The messages a chat's history shows (ChatbotRepository.history). */
export const HISTORY_STATUS = `status NOT IN ('Deleted', 'Canceled', 'Failed', 'Queued')`;

/**
 * The chat `chat` (an SQL expression: a parameter, a column) names by its phone JID or its LID, in the
 * form the partial indexes chats_chatid and chats_chatlid answer: a plan that cannot prove `chat` is not
 * empty (a prepared statement's generic plan, a value read in the statement) cannot use them for
 * `wa_chatid = chat` alone, and reads every chat.
 */
export const CHAT_IS = (chat: string) => `((wa_chatid = ${chat} AND wa_chatid <> '') OR (wa_chatlid = ${chat} AND wa_chatlid <> ''))`;

/** The chat's pause and running conversation as select-list items ($1 instance, $2 chat). */
export const CHAT_CONTEXT = `${CHAT_UNTIL('$2')} AS until,
   s.trigger_id, s.agent_id, s.last_trigger_at
   FROM (SELECT 1) one LEFT JOIN chatbot_chat_state s ON s.instance_id = $1 AND s.chat_id = $2`;

export function toChatContext(row: ChatContextRaw | undefined): ChatbotChatContext {
  return {
    disabledUntil: Number(row?.until ?? 0),
    state:
      row?.trigger_id != null && row.last_trigger_at
        ? { triggerId: row.trigger_id, agentId: row.agent_id ?? '', lastTriggerAt: new Date(row.last_trigger_at) }
        : null,
  };
}
