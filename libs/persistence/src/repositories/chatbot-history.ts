// The chat's recent messages as the chatbot's model sees them (ChatbotRepository.history).
import type { DataSource } from 'typeorm';
import { PREPARED } from '../preparing-client';
import { HISTORY_STATUS, type ChatHistoryRow } from './chatbot-rows';

/** How much history: at most `max`, those of the last `windowHours`, at least `min`; `order`: the round's inputs in the order they came. */
export interface ChatHistoryOptions {
  max: number;
  min: number;
  windowHours: number;
  order?: string[];
}

/**
 * The chat's recent messages for the model's context, newest first: at most `max`, those of the last
 * `windowHours`, but at least `min` whatever their age. `jids`: the chat's phone JID and LID. A
 * received message's timestamp has WhatsApp's second resolution, ours milliseconds: within a second
 * the order they were stored in decides, and messages the worker stored in one transaction (the same
 * created_at: a socket's writes share one) follow `order`, the round's inputs in the order they came.
 */
export async function readChatHistory(
  dataSource: Pick<DataSource, 'query'>,
  instanceId: string,
  jids: string[],
  options: ChatHistoryOptions,
): Promise<ChatHistoryRow[]> {
  // Only what the model's context uses: not the records' raw, content or ai_metadata (a contact's message
  // the bot answered carries the whole earlier exchange there), which pg would parse for nothing.
  const rows: Array<{
    message_id: string;
    from_me: boolean;
    sender_name: string;
    message_type: string;
    media_type: string;
    text: string;
    message_timestamp: string;
    send_payload: Record<string, unknown> | null;
  }> = await dataSource.query(
    // The order (by second, then as stored) is no index's, so the read is bounded first: `since`, the
    // second of the $3-th newest message by its timestamp (the newest $3 by JID and by LID, each read
    // down its index), holds every message the order can keep; a chat of thousands reads a few dozen.
    // The JIDs and the limit are read through `(SELECT $n)`: a plan made for known values is no cheaper
    // than the plan for any value, so Postgres keeps the generic plan instead of planning every call
    // (it planned this read for every round, 0.7 ms a time; spec chatbot-statements-plans).
    `${PREPARED} WITH jid AS (SELECT DISTINCT unnest((SELECT $2::text[])) AS id),
     newest AS (
       SELECT DISTINCT n.message_id, n.message_timestamp FROM jid CROSS JOIN LATERAL (
         (SELECT message_id, message_timestamp FROM messages WHERE instance_id = $1 AND chat_id = jid.id AND ${HISTORY_STATUS}
          ORDER BY message_timestamp DESC LIMIT (SELECT $3::int))
         UNION ALL
         (SELECT message_id, message_timestamp FROM messages WHERE instance_id = $1 AND chat_lid = jid.id AND ${HISTORY_STATUS}
          ORDER BY message_timestamp DESC LIMIT (SELECT $3::int))) n),
     edge AS (SELECT coalesce(min(message_timestamp) / 1000 * 1000, 0) AS since FROM (SELECT message_timestamp FROM newest ORDER BY message_timestamp DESC LIMIT (SELECT $3::int)) top)
     SELECT message_id, from_me, sender_name, message_type, media_type, text, message_timestamp,
       CASE WHEN from_me AND (media_type IN ('ptt', 'audio') OR message_type = 'AudioMessage') THEN send_payload END AS send_payload
     FROM messages WHERE instance_id = $1 AND (chat_id = ANY((SELECT $2::text[])::text[]) OR chat_lid = ANY((SELECT $2::text[])::text[])) AND ${HISTORY_STATUS}
       AND message_timestamp >= (SELECT since FROM edge)
     ORDER BY message_timestamp / 1000 DESC, created_at DESC, array_position($4::text[], message_id) DESC NULLS LAST LIMIT (SELECT $3::int)`,
    [instanceId, jids.filter(Boolean), Math.max(options.max, options.min, 1), options.order ?? []],
  );
  const all: ChatHistoryRow[] = rows.map((row) => ({
    messageId: row.message_id,
    fromMe: row.from_me,
    senderName: row.sender_name,
    messageType: row.message_type,
    mediaType: row.media_type,
    text: row.text,
    messageTimestamp: Number(row.message_timestamp),
    sendPayload: row.send_payload,
  }));
  const since = Date.now() - options.windowHours * 3_600_000;
  const recent = options.windowHours > 0 ? all.filter((row) => row.messageTimestamp >= since) : all;
  return (recent.length >= options.min ? recent : all.slice(0, options.min)).slice(0, Math.max(options.max, options.min));
}
