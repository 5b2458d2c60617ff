// A chatbot round's end (ChatbotRepository.finish): the round closed, its ai_metadata on the contact's
// message, the lead fields the model set, and their outbox events, in one pipelined transaction.
import type { DataSource } from 'typeorm';
import { toChatRow, type ChatRow } from './chat-row';
import { toMessageRow, type MessageRow } from './message-row';
import { OutboxRepository, type NewOutboxEvent } from './outbox.repository';
import { PREPARED } from '../preparing-client';
import { pipelinedTransaction } from '../pipelined-transaction';
import { OPEN, CHAT_IS, type ChatbotRoundRow, type Raw } from './chatbot-rows';

/** ChatbotRepository.finish()'s arguments. */
export type RoundEndArgs = [
  round: ChatbotRoundRow,
  runner: string,
  status: 'done' | 'failed',
  outcome: string,
  turn: string,
  aiMetadata: Record<string, unknown>,
  event: (row: MessageRow) => NewOutboxEvent,
  lead?: { fields: Record<string, unknown>; event: (chat: ChatRow) => NewOutboxEvent } | null,
];

/**
 * finish()'s transaction, once, in two round trips (pipelinedTransaction, ADR 0023): START TRANSACTION
 * with the round's end, then the outbox insert of its events with the COMMIT. The lead's chat update,
 * when the model set lead fields, is a third.
 */
export async function finishRoundOnce(dataSource: DataSource, ...args: RoundEndArgs): Promise<{ eventId: string | null; queued: boolean } | null> {
  const [round, runner, status, outcome, turn, aiMetadata, event, lead = null] = args;
  let lastEventId: string | null = null;
  const ended = await pipelinedTransaction(
    dataSource,
    () => 'START TRANSACTION',
    async (manager): Promise<{ queued: boolean; events: NewOutboxEvent[] } | null> => {
      // The round's end and the ai_metadata write in one statement (the message is written only when the
      // claim held), and whether a later round of the chat is open (it is claimable once this commits).
      const rows: Raw[] = await manager.query(
        `${PREPARED} WITH ended AS (UPDATE chatbot_rounds SET status = $3, outcome = $4, claimed_by = NULL, claimed_until = NULL, updated_at = now()
           WHERE id = $1 AND claimed_by = $2 AND status = 'running' RETURNING id),
         changed AS (UPDATE messages SET ai_metadata = $7::jsonb, updated_at = now()
           WHERE instance_id = $5 AND message_id = $6 AND EXISTS (SELECT 1 FROM ended) RETURNING *)
         SELECT EXISTS (SELECT 1 FROM ended) AS round_ended,
           EXISTS (SELECT 1 FROM chatbot_rounds q WHERE q.instance_id = $5 AND q.chat_id = $8 AND q.status IN ${OPEN} AND q.id <> $1) AS round_queued,
           changed.* FROM (SELECT 1) one LEFT JOIN changed ON true`,
        [round.id, runner, status, outcome, round.instanceId, turn, JSON.stringify(aiMetadata), round.chatId],
      );
      if (!rows[0]?.round_ended) return null;
      const events: NewOutboxEvent[] = [];
      if (lead && Object.keys(lead.fields).length) {
        // The lead fields the model wrote, over what the chat had, with the chat's `chats` event.
        const chats: Raw[] = await manager.query(
          `WITH changed AS (UPDATE chats SET lead = lead || $3::jsonb, updated_at = now() WHERE instance_id = $1 AND ${CHAT_IS('$2')} RETURNING *)
           SELECT * FROM changed`,
          [round.instanceId, round.chatId, JSON.stringify(lead.fields)],
        );
        events.push(...chats.map((chat) => lead.event(toChatRow(chat))));
      }
      const { round_ended: _ended, round_queued: queued, ...message } = rows[0];
      if (message.id !== null && message.id !== undefined) events.push(event(toMessageRow(message)));
      return { queued: queued === true, events };
    },
    // The events (the chat's, then the message's) written with the COMMIT.
    (value) => {
      const insert = value ? OutboxRepository.insertStatement(round.instanceId, value.events) : null;
      return insert && { text: insert.text, values: insert.values, rows: (rows) => (lastEventId = insert.lastId(rows)) };
    },
  );
  return ended && { eventId: lastEventId, queued: ended.queued };
}
