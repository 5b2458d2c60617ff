import { recordId } from '@gw/platform';
import { isStalePlan, PREPARED } from '../preparing-client';
import { ChatbotAdmissionRepository } from './chatbot-admission.repository';
import { readChatHistory, type ChatHistoryOptions } from './chatbot-history';
import { finishRoundOnce, type RoundEndArgs } from './chatbot-round-end';
import {
  toSettings,
  SETTINGS,
  toRecordRow,
  toRoundRow,
  OPEN,
  CHAT_UNTIL,
  type ChatHistoryRow,
  type ChatbotKind,
  type ChatbotRecordRow,
  type KnowledgeChunk,
  type RetrievedChunk,
  type ChatbotRoundRow,
  type ChatbotInstanceSettings,
  type Raw,
  type RoundContext,
} from './chatbot-rows';
import { RepositoryBase } from './repository-base';

/**
 * The chatbot's records and its durable work. Every statement is scoped by `instance_id`. Rounds are
 * claimed with FOR UPDATE SKIP LOCKED by any number of runners; a round is only claimable when no
 * earlier round of its chat is open, so the rounds of one chat run one at a time, in order. A claim
 * lapses (`claimed_until`) when its runner dies, and the next runner resumes the round from its plan.
 * Admission (inside the outbox follower's transaction) is ChatbotAdmissionRepository's; the round's end
 * transaction is chatbot-round-end.ts, the model's history read chatbot-history.ts.
 */
export class ChatbotRepository extends RepositoryBase {
  private readonly admission = new ChatbotAdmissionRepository(this.dataSource);

  // ---- instance settings ----------------------------------------------------------------------

  /** The instances with the chatbot on (the ones the outbox follower follows). */
  async enabledInstances(): Promise<string[]> {
    const rows: Array<{ id: string }> = await this.db.query(`SELECT id FROM instances WHERE chatbot_enabled ORDER BY id`);
    return rows.map((row) => row.id);
  }

  async settings(instanceId: string): Promise<ChatbotInstanceSettings | null> {
    const rows: Raw[] = await this.db.query(`SELECT ${SETTINGS} FROM instances WHERE id = $1`, [instanceId]);
    return rows.length ? toSettings(rows[0]) : null;
  }

  // ---- records --------------------------------------------------------------------------------

  async list(instanceId: string, kind: ChatbotKind): Promise<ChatbotRecordRow[]> {
    const rows: Raw[] = await this.db.query(`SELECT * FROM chatbot_records WHERE instance_id = $1 AND kind = $2 ORDER BY created_at, id`, [instanceId, kind]);
    return rows.map(toRecordRow);
  }

  async find(instanceId: string, kind: ChatbotKind, id: string): Promise<ChatbotRecordRow | null> {
    const rows: Raw[] = await this.db.query(`SELECT * FROM chatbot_records WHERE instance_id = $1 AND kind = $2 AND id = $3`, [instanceId, kind, id]);
    return rows.length ? toRecordRow(rows[0]) : null;
  }

  /** A new record of `data` (the record's settings, stored as JSON). */
  async create(instanceId: string, kind: ChatbotKind, data: object): Promise<ChatbotRecordRow> {
    const rows: Raw[] = await this.db.query(`INSERT INTO chatbot_records (id, instance_id, kind, data) VALUES ($1, $2, $3, $4::jsonb) RETURNING *`, [
      recordId(),
      instanceId,
      kind,
      JSON.stringify(data),
    ]);
    return toRecordRow(rows[0]);
  }

  /** Replaces a record's fields; null when the instance has no such record. */
  async update(instanceId: string, kind: ChatbotKind, id: string, data: object): Promise<ChatbotRecordRow | null> {
    const rows: Raw[] = await this.db.query(
      `WITH changed AS (UPDATE chatbot_records SET data = $4::jsonb, updated_at = now() WHERE instance_id = $1 AND kind = $2 AND id = $3 RETURNING *)
       SELECT * FROM changed`,
      [instanceId, kind, id, JSON.stringify(data)],
    );
    return rows.length ? toRecordRow(rows[0]) : null;
  }

  /** Merges fields into a record (vector state); null when it is gone. */
  async patch(instanceId: string, id: string, fields: Record<string, unknown>): Promise<ChatbotRecordRow | null> {
    const rows: Raw[] = await this.db.query(
      `WITH changed AS (UPDATE chatbot_records SET data = data || $3::jsonb, updated_at = now() WHERE instance_id = $1 AND id = $2 RETURNING *)
       SELECT * FROM changed`,
      [instanceId, id, JSON.stringify(fields)],
    );
    return rows.length ? toRecordRow(rows[0]) : null;
  }

  async delete(instanceId: string, kind: ChatbotKind, id: string): Promise<boolean> {
    const rows: Raw[] = await this.db.query(
      `WITH gone AS (DELETE FROM chatbot_records WHERE instance_id = $1 AND kind = $2 AND id = $3 RETURNING id) SELECT id FROM gone`,
      [instanceId, kind, id],
    );
    return rows.length > 0;
  }

  // ---- knowledge ------------------------------------------------------------------------------

  /**
   * Replaces a knowledge record's chunks and merges `state` (isVectorized, vectorStatus,
   * lastVectorizedAt) into it, in one transaction; false when the record is gone, or was changed
   * after `version` (its content is being vectorized again: this result is stale).
   */
  async storeChunks(instanceId: string, knowledgeId: string, version: Date, chunks: KnowledgeChunk[], state: Record<string, unknown>): Promise<boolean> {
    return this.transaction(async (manager) => {
      const current: Raw[] = await manager.query(
        `SELECT updated_at FROM chatbot_records WHERE instance_id = $1 AND id = $2 AND kind = 'knowledge' FOR UPDATE`,
        [instanceId, knowledgeId],
      );
      if (!current.length || (current[0].updated_at as Date).getTime() !== version.getTime()) return false;
      await manager.query(`DELETE FROM chatbot_knowledge_chunks WHERE knowledge_id = $1`, [knowledgeId]);
      if (chunks.length)
        await manager.query(
          `INSERT INTO chatbot_knowledge_chunks (knowledge_id, ord, instance_id, text, embedding)
           SELECT $1, n - 1, $2, t, (SELECT array_agg(v::real ORDER BY i) FROM jsonb_array_elements_text(e) WITH ORDINALITY AS x(v, i))
           FROM unnest($3::text[], $4::jsonb[]) WITH ORDINALITY AS u(t, e, n)`,
          [knowledgeId, instanceId, chunks.map((chunk) => chunk.text), chunks.map((chunk) => JSON.stringify(chunk.embedding))],
        );
      // The record keeps its updated_at: it is the version the next vectorization compares with.
      await manager.query(`UPDATE chatbot_records SET data = data || $3::jsonb WHERE instance_id = $1 AND id = $2`, [
        instanceId,
        knowledgeId,
        JSON.stringify(state),
      ]);
      return true;
    });
  }

  /**
   * Claims knowledge records to vectorize: `pending` ones, and `processing` ones whose vectorizer died
   * (claimed before `staleBefore`, unix ms). The record's updated_at is left as it is: it is the version
   * storeChunks() compares with.
   */
  async claimKnowledge(limit: number, staleBefore: number): Promise<ChatbotRecordRow[]> {
    const rows: Raw[] = await this.db.query(
      `WITH next AS (
         SELECT id FROM chatbot_records
         WHERE kind = 'knowledge' AND (data->>'vectorStatus' = 'pending'
           OR (data->>'vectorStatus' = 'processing' AND COALESCE((data->>'vectorClaimedAt')::bigint, 0) < $1))
         ORDER BY updated_at, id LIMIT $2 FOR UPDATE SKIP LOCKED),
       claimed AS (
         UPDATE chatbot_records r SET data = r.data || jsonb_build_object('vectorStatus', 'processing', 'vectorClaimedAt', $3::bigint)
         FROM next WHERE r.id = next.id RETURNING r.*)
       SELECT * FROM claimed`,
      [staleBefore, limit, Date.now()],
    );
    return rows.map(toRecordRow);
  }

  /** Whether the instance has any vectorized knowledge (retrieval skips the embedding call when not). */
  async hasChunks(instanceId: string): Promise<boolean> {
    const rows: Raw[] = await this.db.query(`SELECT 1 FROM chatbot_knowledge_chunks WHERE instance_id = $1 LIMIT 1`, [instanceId]);
    return rows.length > 0;
  }

  /** The `limit` chunks of the instance's active knowledge nearest to `vector` (unit length: the dot product is the cosine). */
  async nearestChunks(instanceId: string, vector: number[], limit: number, minScore = 0): Promise<RetrievedChunk[]> {
    const rows: Array<{ knowledge_id: string; text: string; score: number }> = await this.db.query(
      `SELECT c.knowledge_id, c.text, s.score
       FROM chatbot_knowledge_chunks c
       JOIN chatbot_records k ON k.id = c.knowledge_id AND k.instance_id = $1 AND COALESCE((k.data->>'active')::boolean, true)
       CROSS JOIN LATERAL (SELECT COALESCE(sum(a * b), 0)::float8 AS score FROM unnest(c.embedding, $2::real[]) AS p(a, b)) s
       WHERE c.instance_id = $1 AND cardinality(c.embedding) = cardinality($2::real[]) AND s.score >= $4
       ORDER BY s.score DESC, c.knowledge_id, c.ord LIMIT $3`,
      [instanceId, vector, limit, minScore],
    );
    return rows.map((row) => ({ knowledgeId: row.knowledge_id, text: row.text, score: Number(row.score) }));
  }

  /** ChatbotAdmissionRepository.pauseChat() in a transaction (a handoff). */
  async pauseChat(instanceId: string, chatId: string, untilSeconds: number, reason: string): Promise<void> {
    await this.transaction((manager) => this.admission.within(manager).pauseChat(instanceId, chatId, untilSeconds, reason));
  }

  /**
   * What a runner reads before it plans a round, in one statement: the instance's settings, the chat's
   * `chatbot_disableUntil`, the round's trigger and agent, the instance's functions, and whether it has
   * any knowledge stored.
   */
  async roundContext(instanceId: string, chatId: string, triggerId: string, agentId: string): Promise<RoundContext> {
    const [row]: Array<{ settings: Raw | null; until: string | null; records: Raw[] | null; has_knowledge: boolean; has_quick_replies: boolean }> =
      await this.db.query(
        `SELECT (SELECT row_to_json(i) FROM (SELECT ${SETTINGS} FROM instances WHERE id = $1) i) AS settings,
         ${CHAT_UNTIL('$2')} AS until,
         (SELECT json_agg(r ORDER BY r.created_at, r.id) FROM chatbot_records r
            WHERE r.instance_id = $1 AND ((r.kind = 'trigger' AND r.id = $3) OR (r.kind = 'agent' AND r.id = $4) OR r.kind = 'function')) AS records,
         EXISTS (SELECT 1 FROM chatbot_knowledge_chunks WHERE instance_id = $1) AS has_knowledge,
         EXISTS (SELECT 1 FROM quick_replies WHERE instance_id = $1) AS has_quick_replies`,
        [instanceId, chatId, triggerId, agentId],
      );
    const records = (row?.records ?? []).map(toRecordRow);
    return {
      settings: row?.settings ? toSettings(row.settings) : null,
      disabledUntil: Number(row?.until ?? 0),
      trigger: records.find((record) => record.kind === 'trigger') ?? null,
      agent: agentId ? (records.find((record) => record.kind === 'agent') ?? null) : null,
      functions: records.filter((record) => record.kind === 'function'),
      hasKnowledge: row?.has_knowledge === true,
      hasQuickReplies: row?.has_quick_replies === true,
    };
  }

  // ---- the runner ----------------------------------------------------------------------------

  /**
   * Claims up to `limit` due rounds for `runner` (their claim lasting `claimMs`): rounds that finished
   * gathering, and running rounds whose runner's claim lapsed. A round waits while an earlier round of
   * its chat is open.
   */
  async claim(runner: string, limit: number, claimMs: number): Promise<ChatbotRoundRow[]> {
    return (await this.claimDue(runner, limit, claimMs)).rounds;
  }

  /**
   * claim(), and in the same statement when the next round not claimed now falls due (null: none open),
   * so a runner can sleep until then: the next gathering round's due time, or a running round's claim
   * lapsing; rounds waiting behind an earlier open round of their chat are not counted (the end of that
   * round wakes the runner). Prepared, its limit through `(SELECT $3)`: with the limit itself Postgres
   * planned it again on every call (test/chatbot-claim-plan.spec.ts).
   */
  async claimDue(runner: string, limit: number, claimMs: number): Promise<{ rounds: ChatbotRoundRow[]; nextDue: Date | null }> {
    const rows: Raw[] = await this.db.query(
      `${PREPARED} WITH next AS (
         SELECT r.id FROM chatbot_rounds r
         WHERE r.status IN ${OPEN} AND r.due_at <= clock_timestamp()
           AND (r.status = 'gathering' OR r.claimed_until IS NULL OR r.claimed_until < clock_timestamp())
           AND NOT EXISTS (SELECT 1 FROM chatbot_rounds e WHERE e.instance_id = r.instance_id AND e.chat_id = r.chat_id AND e.status IN ${OPEN} AND e.id < r.id)
         ORDER BY r.due_at, r.id LIMIT (SELECT $3::int) FOR UPDATE SKIP LOCKED),
       claimed AS (
         UPDATE chatbot_rounds r SET status = 'running', claimed_by = $1, claimed_until = clock_timestamp() + $2 * interval '1 millisecond',
           attempts = r.attempts + 1, updated_at = now()
         FROM next WHERE r.id = next.id RETURNING r.*),
       due AS (
         SELECT min(CASE WHEN o.status = 'gathering' THEN o.due_at ELSE greatest(o.due_at, o.claimed_until) END) AS next_due
         FROM chatbot_rounds o
         WHERE o.status IN ${OPEN} AND NOT EXISTS (SELECT 1 FROM next WHERE next.id = o.id)
           AND NOT EXISTS (SELECT 1 FROM chatbot_rounds e WHERE e.instance_id = o.instance_id AND e.chat_id = o.chat_id AND e.status IN ${OPEN} AND e.id < o.id))
       SELECT claimed.*, due.next_due FROM due LEFT JOIN claimed ON true ORDER BY claimed.due_at, claimed.id`,
      [runner, claimMs, limit],
    );
    return { rounds: rows.filter((row) => row.id !== null).map(toRoundRow), nextDue: (rows[0]?.next_due as Date | null) ?? null };
  }

  /** Extends `runner`'s claim; false when it is no longer the runner's. */
  async renew(roundId: string, runner: string, claimMs: number): Promise<boolean> {
    const rows: Raw[] = await this.db.query(
      `WITH renewed AS (UPDATE chatbot_rounds SET claimed_until = clock_timestamp() + $3 * interval '1 millisecond'
         WHERE id = $1 AND claimed_by = $2 AND status = 'running' RETURNING id) SELECT id FROM renewed`,
      [roundId, runner, claimMs],
    );
    return rows.length > 0;
  }

  /** Stores the plan (the model's result and the sends with their fixed ids) before anything is sent; false when the claim was lost. */
  async storePlan(roundId: string, runner: string, plan: Record<string, unknown>): Promise<boolean> {
    const rows: Raw[] = await this.db.query(
      `${PREPARED} WITH stored AS (UPDATE chatbot_rounds SET plan = $3::jsonb, updated_at = now() WHERE id = $1 AND claimed_by = $2 AND status = 'running' RETURNING id)
       SELECT id FROM stored`,
      [roundId, runner, JSON.stringify(plan)],
    );
    return rows.length > 0;
  }

  /** Gives a round back for a later try (the worker is not reachable now): claimable again after `delayMs`. */
  async retryLater(roundId: string, runner: string, delayMs: number, reason: string): Promise<void> {
    await this.db.query(
      `UPDATE chatbot_rounds SET claimed_until = clock_timestamp() + $3 * interval '1 millisecond', outcome = $4, updated_at = now()
       WHERE id = $1 AND claimed_by = $2 AND status = 'running'`,
      [roundId, runner, delayMs, reason],
    );
  }

  /** Ends a round without recording anything on a message (the chat was paused or the agent deleted before it ran). */
  async cancel(roundId: string, runner: string, reason: string): Promise<void> {
    await this.db.query(
      `UPDATE chatbot_rounds SET status = 'canceled', outcome = $3, claimed_by = NULL, claimed_until = NULL, updated_at = now()
       WHERE id = $1 AND claimed_by = $2 AND status = 'running'`,
      [roundId, runner, reason],
    );
  }

  /**
   * Ends a round (`done` or `failed`) and stores its `ai_metadata` on the contact's message `turn`, with
   * the `messages` event `event` builds from the updated row, and the lead fields the model set (with
   * the chat's `chats` event), in one transaction. Null when the claim
   * was lost (another runner finishes it); else the id of the event written (null when the message is
   * not stored) and whether a later round of the chat is open (`queued`: a runner should claim now).
   * Its arguments: RoundEndArgs (round, runner, status, outcome, turn, aiMetadata, event, lead).
   */
  async finish(...args: RoundEndArgs): Promise<{ eventId: string | null; queued: boolean } | null> {
    const once = () => finishRoundOnce(this.dataSource, ...args);
    // Its first statement is prepared and answers the message's whole row: a migration that adds a column
    // to messages makes that plan stale, and the transaction fails once (PreparingClient); it runs again,
    // prepared afresh, rather than leaving the round to wait for its claim to expire.
    return once().catch((error: unknown) => {
      if (!isStalePlan(error)) throw error;
      return once();
    });
  }

  /**
   * Deletes finished rounds (done, failed, canceled) and admitted message ids older than `days`: an id
   * only guards against the same event admitted twice, which can happen minutes after, not days.
   */
  async purgeFinished(days: number): Promise<{ rounds: number; inputs: number }> {
    const count = async (sql: string) => Number(((await this.db.query(sql, [days])) as Array<{ n: string }>)[0].n);
    return {
      rounds: await count(
        `WITH gone AS (DELETE FROM chatbot_rounds WHERE status IN ('done', 'failed', 'canceled') AND updated_at < now() - $1 * interval '1 day' RETURNING 1)
         SELECT count(*) AS n FROM gone`,
      ),
      inputs: await count(
        `WITH gone AS (DELETE FROM chatbot_inputs WHERE created_at < now() - $1 * interval '1 day' RETURNING 1) SELECT count(*) AS n FROM gone`,
      ),
    };
  }

  /** A round as it is now. */
  async round(roundId: string): Promise<ChatbotRoundRow | null> {
    const rows: Raw[] = await this.db.query(`SELECT * FROM chatbot_rounds WHERE id = $1`, [roundId]);
    return rows.length ? toRoundRow(rows[0]) : null;
  }

  /** The chat's recent messages for the model's context, newest first (readChatHistory, chatbot-history.ts). */
  history(instanceId: string, jids: string[], options: ChatHistoryOptions): Promise<ChatHistoryRow[]> {
    return readChatHistory(this.db, instanceId, jids, options);
  }
}
