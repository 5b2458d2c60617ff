import { PREPARED } from '../preparing-client';
import {
  toSettings,
  SETTINGS,
  toRecordRow,
  toRoundRow,
  OPEN,
  CHAT_UNTIL,
  CHAT_IS,
  CHAT_CONTEXT,
  toChatContext,
  type ChatbotRoundRow,
  type RoundInput,
  type Raw,
  type ChatbotChatContext,
  type AdmissionContext,
  type ChatContextRaw,
} from './chatbot-rows';
import { RepositoryBase } from './repository-base';

/**
 * The chatbot's admission of received messages, inside the outbox follower's transaction (the
 * `manager` of each statement): a message joins its chat's round still gathering or starts one, what
 * admission reads per batch and per message, and a chat paused (a handoff, the stop word). Every
 * statement is scoped by `instance_id`. The rounds' runner and the records are ChatbotRepository's.
 */
export class ChatbotAdmissionRepository extends RepositoryBase {
  /**
   * Admits a received message: into the chat's round still gathering for the same agent (its wait
   * starts again), or a new round. Null, and nothing written, when the message was admitted before.
   * With `claim`, a new round that is due at once (no delay) and has no earlier open round in its chat
   * is claimed for `claim.runner` in the same statement (`claimed`: the round as the claim left it), so
   * the admitting process runs it right after the commit; else a runner's claim() takes it.
   *
   * One statement: whether the id was admitted before (a step holds the cursor's lock, so no other
   * admission of this instance runs meanwhile; the key of chatbot_inputs still refuses a second row),
   * join the chat's round still gathering or start one, record the input with its round, set the chat
   * record's chatbot_lastTrigger_id / chatbot_lastTriggerAt (no chats event of its own: the message's
   * follows) and the chat's running conversation.
   */
  async admit(
    input: RoundInput,
    claim: { runner: string; claimMs: number } | null = null,
  ): Promise<{ roundId: string; claimed: ChatbotRoundRow | null } | null> {
    const manager = this.db;
    const rows: Raw[] = await manager.query(
      `${PREPARED} WITH fresh AS (SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM chatbot_inputs WHERE instance_id = $1 AND message_id = $8)),
       joined AS (
         UPDATE chatbot_rounds SET inputs = inputs || $4::jsonb, envelope = $5::jsonb,
           due_at = greatest(due_at, clock_timestamp() + $6 * interval '1 second'), updated_at = now()
         WHERE id = (SELECT id FROM chatbot_rounds WHERE instance_id = $1 AND chat_id = $2 AND agent_id = $3 AND status = 'gathering' ORDER BY id DESC LIMIT 1)
           AND status = 'gathering' AND EXISTS (SELECT 1 FROM fresh)
         RETURNING id),
       claim AS (
         SELECT $9::text IS NOT NULL AND $6 = 0
           AND NOT EXISTS (SELECT 1 FROM chatbot_rounds e WHERE e.instance_id = $1 AND e.chat_id = $2 AND e.status IN ${OPEN}) AS now),
       created AS (
         INSERT INTO chatbot_rounds (instance_id, chat_id, agent_id, trigger_id, inputs, envelope, due_at, status, claimed_by, claimed_until, attempts)
         SELECT $1, $2, $3, $7, $4::jsonb, $5::jsonb, clock_timestamp() + $6 * interval '1 second',
           CASE WHEN claim.now THEN 'running' ELSE 'gathering' END,
           CASE WHEN claim.now THEN $9::text END,
           CASE WHEN claim.now THEN clock_timestamp() + $10 * interval '1 millisecond' END,
           CASE WHEN claim.now THEN 1 ELSE 0 END
         FROM claim WHERE EXISTS (SELECT 1 FROM fresh) AND NOT EXISTS (SELECT 1 FROM joined)
         RETURNING *),
       round AS (SELECT id FROM joined UNION ALL SELECT id FROM created),
       linked AS (INSERT INTO chatbot_inputs (instance_id, message_id, round_id) SELECT $1, $8, id FROM round RETURNING 1),
       lead AS (
         UPDATE chats SET lead = lead || jsonb_build_object('chatbot_lastTrigger_id', $7::text, 'chatbot_lastTriggerAt', extract(epoch FROM now())::bigint)
         WHERE instance_id = $1 AND ${CHAT_IS('$2')} AND EXISTS (SELECT 1 FROM fresh) RETURNING 1),
       state AS (
         INSERT INTO chatbot_chat_state (instance_id, chat_id, trigger_id, agent_id, last_trigger_at) SELECT $1, $2, $7, $3, now() FROM fresh
         ON CONFLICT (instance_id, chat_id) DO UPDATE SET trigger_id = EXCLUDED.trigger_id, agent_id = EXCLUDED.agent_id, last_trigger_at = now()
         RETURNING 1)
       SELECT round.id AS round_id, created.* FROM round LEFT JOIN created ON created.id = round.id`,
      [
        input.instanceId,
        input.chatId,
        input.agentId,
        JSON.stringify([input.input]),
        JSON.stringify(input.envelope),
        input.delaySeconds,
        input.triggerId,
        input.messageId,
        claim?.runner ?? null,
        claim?.claimMs ?? 0,
      ],
    );
    if (!rows.length) return null;
    const row = rows[0];
    return { roundId: String(row.round_id), claimed: row.id != null && row.status === 'running' ? toRoundRow(row) : null };
  }

  /**
   * What admission reads once per batch of events, in one statement: the instance's settings, triggers,
   * agents and functions and whether it has knowledge or quick replies stored (what a round claimed at
   * admission runs with), and for each of `chatIds` (the batch's chats) its `chatbot_disableUntil` and
   * running conversation (chatContext's read). The chats come through `(SELECT $2)`: Postgres cannot count
   * them when it plans, so a plan made for one call's chats is no cheaper than the generic one, which it
   * keeps (it planned every call otherwise; spec chatbot-statements-plans).
   */
  async admissionContext(instanceId: string, chatIds: string[]): Promise<AdmissionContext> {
    const manager = this.db;
    const [row]: Array<{
      settings: Raw | null;
      records: Raw[] | null;
      has_knowledge: boolean;
      has_quick_replies: boolean;
      chats: Array<ChatContextRaw & { chat_id: string }> | null;
    }> = await manager.query(
      `${PREPARED} SELECT (SELECT row_to_json(i) FROM (SELECT ${SETTINGS} FROM instances WHERE id = $1) i) AS settings,
         (SELECT json_agg(r ORDER BY r.created_at, r.id) FROM chatbot_records r WHERE r.instance_id = $1 AND r.kind IN ('trigger', 'agent', 'function')) AS records,
         EXISTS (SELECT 1 FROM chatbot_knowledge_chunks WHERE instance_id = $1) AS has_knowledge,
         EXISTS (SELECT 1 FROM quick_replies WHERE instance_id = $1) AS has_quick_replies,
         (SELECT json_agg(json_build_object('chat_id', c.chat_id, 'until', ${CHAT_UNTIL('c.chat_id')},
              'trigger_id', s.trigger_id, 'agent_id', s.agent_id, 'last_trigger_at', s.last_trigger_at))
            FROM unnest((SELECT $2::text[])) AS c(chat_id) LEFT JOIN chatbot_chat_state s ON s.instance_id = $1 AND s.chat_id = c.chat_id) AS chats`,
      [instanceId, chatIds],
    );
    const records = (row?.records ?? []).map(toRecordRow);
    return {
      settings: row?.settings ? toSettings(row.settings) : null,
      triggers: records.filter((record) => record.kind === 'trigger'),
      agents: records.filter((record) => record.kind === 'agent'),
      functions: records.filter((record) => record.kind === 'function'),
      hasKnowledge: row?.has_knowledge === true,
      hasQuickReplies: row?.has_quick_replies === true,
      chats: new Map((row?.chats ?? []).map((chat) => [chat.chat_id, toChatContext(chat)])),
    };
  }

  /** What admission reads per message, in one statement: the chat's `chatbot_disableUntil` and its running conversation. */
  async chatContext(instanceId: string, chatId: string): Promise<ChatbotChatContext> {
    const manager = this.db;
    const [row]: ChatContextRaw[] = await manager.query(`SELECT ${CHAT_CONTEXT}`, [instanceId, chatId]);
    return toChatContext(row);
  }

  /**
   * Stops the bot in a chat until `untilSeconds` (unix seconds): the chat's `chatbot_disableUntil`, the
   * field the API and the Chatwoot bridge set too. A round still gathering there is dropped; the
   * conversation starts afresh (a trigger must match again) after the pause.
   */
  async pauseChat(instanceId: string, chatId: string, untilSeconds: number, reason: string): Promise<void> {
    const manager = this.db;
    await manager.query(
      `UPDATE chats SET lead = lead || jsonb_build_object('chatbot_disableUntil', $3::bigint), updated_at = now()
       WHERE instance_id = $1 AND ${CHAT_IS('$2')}`,
      [instanceId, chatId, untilSeconds],
    );
    await manager.query(
      `UPDATE chatbot_rounds SET status = 'canceled', outcome = $3, updated_at = now() WHERE instance_id = $1 AND chat_id = $2 AND status = 'gathering'`,
      [instanceId, chatId, reason],
    );
    await manager.query(`DELETE FROM chatbot_chat_state WHERE instance_id = $1 AND chat_id = $2`, [instanceId, chatId]);
  }

  /** The chat's `chatbot_disableUntil` (unix seconds; 0 when unset or not a number). */
  async disabledUntil(instanceId: string, chatId: string): Promise<number> {
    const manager = this.db;
    const rows: Array<{ until: string | null }> = await manager.query(
      `SELECT max(CASE WHEN jsonb_typeof(lead->'chatbot_disableUntil') = 'number' THEN (lead->>'chatbot_disableUntil')::float8 END)::bigint AS until
       FROM chats WHERE instance_id = $1 AND ${CHAT_IS('$2')}`,
      [instanceId, chatId],
    );
    return Number(rows[0]?.until ?? 0);
  }
}
