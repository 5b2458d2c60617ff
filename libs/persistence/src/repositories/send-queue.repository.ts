import { messagesUpdatePayload } from '@gw/contracts';
import { toMessageRow, type MessageRow, type NewMessage } from './message-row';
import { OutboxRepository } from './outbox.repository';
import { RepositoryBase } from './repository-base';

type Raw = Record<string, unknown>;

/** TypeORM answers UPDATE and DELETE with `[rows, affected]`, INSERT and SELECT with the rows. */
function rowsOf(result: unknown): Raw[] {
  if (Array.isArray(result) && result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number') return result[0] as Raw[];
  return result as Raw[];
}

const JSON_MESSAGE_COLUMNS = new Set(['content', 'send_payload']);

/**
 * Whether every messages value of the group reads back the same from JSON as from a parameter: the
 * JSON columns, and elsewhere strings, finite numbers, booleans and nulls only (a Date, Buffer or
 * array is sent by pg in its own text form, which JSON would change).
 */
function plainColumnsOnly(items: ReadonlyArray<{ message: NewMessage }>, fields: Array<keyof NewMessage>, columns: string[]): boolean {
  for (const { message } of items) {
    for (let index = 0; index < fields.length; index++) {
      if (JSON_MESSAGE_COLUMNS.has(columns[index])) continue;
      const value = message[fields[index]] as unknown;
      const kind = typeof value;
      if (value === null || value === undefined || kind === 'string' || kind === 'boolean') continue;
      if (kind === 'number' && Number.isFinite(value)) continue;
      return false;
    }
  }
  return true;
}

/** One queued send: the request as accepted (`request` is a SendRequest; persistence knows no contracts). */
export interface QueuedSend {
  id: string;
  instanceId: string;
  messageId: string;
  request: Record<string, unknown>;
  attempts: number;
  /**
   * Whether WhatsApp limited the instance's new chats (a send_limits row in force) when the head was taken, read in
   * the same statement; absent where not read. False spares the dispatcher reading the limits before the send.
   */
  limited?: boolean;
}

/** A lane claim: this dispatcher may send for the instance until the claim lapses. */
export interface LaneClaim {
  instanceId: string;
  claimId: string;
}

/** A lane just claimed, with its head already marked in flight under the claim (null: none could go now). */
export interface ClaimedLane extends LaneClaim {
  head: QueuedSend | null;
}

/** A finished head's lane: the gap that now applies, and the next head when the lane went on under the claim. */
export interface CompletedHead {
  gapMs: number;
  /** The lane's next head, marked in flight under the same claim; null: the lane was released. */
  next: QueuedSend | null;
}

/**
 * The head a lane may send now (`$lane` is the instance id's SQL, `skip` a queue id not to take): its oldest
 * send that is not held, and not behind a held send to the same chat (a chat's sends keep their order).
 */
function laneHead(lane: string, skip?: string): string {
  const skipped = skip ? ` AND q.id <> ${skip}` : '';
  return `SELECT q.id, q.instance_id, q.message_id, q.request, q.attempts,
           EXISTS (SELECT 1 FROM send_limits s WHERE s.instance_id = q.instance_id AND s.until > now()) AS limited
         FROM send_queue q WHERE q.instance_id = ${lane}${skipped}
           AND (q.held_until IS NULL OR q.held_until <= now())
           AND NOT EXISTS (SELECT 1 FROM send_queue e WHERE e.instance_id = ${lane} AND e.id < q.id AND e.held_until > now()
                             AND e.request->>'chatJid' = q.request->>'chatJid')
         ORDER BY q.id LIMIT 1`;
}

/** A head as the dispatcher sends it, from a row with the head's columns (null when the row has none). */
function queuedSend(row: Raw | undefined): QueuedSend | null {
  if (!row || row.id === null || row.id === undefined) return null;
  return {
    id: String(row.id),
    instanceId: row.instance_id as string,
    messageId: row.message_id as string,
    request: row.request as Record<string, unknown>,
    attempts: Number(row.attempts),
    limited: Boolean(row.limited),
  };
}

export interface QueueStatusRow {
  pending: number;
  processingNow: boolean;
  resetting: boolean;
}

export interface QueueClearResult {
  /** send_queue rows deleted. */
  deleted: number;
  /** Of those, rows that had been handed over before and were waiting (session down, backoff). */
  waitingDeleted: number;
  /** messages rows moved to Canceled. */
  canceled: number;
  /** send_queue.id of the send in flight that was left to finish, or null. */
  inFlightId: string | null;
}

/**
 * The async send queue's SQL (tables in migration 1763810000000-send-queue). Invariants:
 *
 * 1. A send is durable once enqueue commits: the messages row (`Queued`) and the queue row are
 *    written in the same transaction, before the HTTP 200.
 * 2. Per instance, at most one dispatcher sends at a time: it must hold the lane claim
 *    (claimed_by = its claim id, claimed_until in the future). Claims are leases: a dispatcher that
 *    dies holds nothing once claimed_until passes; its work is redone by the next claimant.
 * 3. Order: a claimant only ever sends the head (lowest id) of its lane, and deletes it only after the
 *    worker answered; so the next head is never sent before the previous one completed.
 * 4. No duplicate: a redone head is sent with the same SendRequest (same messageId); the worker
 *    answers an id that has `relayed_at` from its store instead of relaying it again.
 */
export class SendQueueRepository extends RepositoryBase {
  private readonly outbox = new OutboxRepository(this.dataSource);

  /**
   * Appends one request to the instance's lane (creating the lane on first use). The caller runs it
   * in the transaction that inserts the `Queued` messages row. One statement: the lane insert is a
   * no-op after the first send (ON CONFLICT DO NOTHING takes no row lock, so enqueues do not wait on
   * a dispatcher holding the lane row).
   */
  async appendToLane(instanceId: string, messageId: string, request: unknown): Promise<string> {
    const manager = this.db;
    const rows = rowsOf(
      await manager.query(
        `WITH lane AS (INSERT INTO send_lanes (instance_id) VALUES ($1) ON CONFLICT (instance_id) DO NOTHING)
       INSERT INTO send_queue (instance_id, message_id, request) VALUES ($1, $2, $3::jsonb) RETURNING id`,
        [instanceId, messageId, JSON.stringify(request)],
      ),
    );
    return String(rows[0].id);
  }

  /**
   * The accept path in ONE statement (atomic without an explicit transaction, one round trip): the
   * `Queued` messages row (the NewMessage fields, as MessageRepository.upsert writes them; a record
   * id already taken in the instance is replaced by the table, ADR 0040: the row answered carries the
   * stored one), the lane on first use, and the queue row with the request. This is
   * what makes ≥ 3,000 enqueues/s possible; appendToLane is the lane's part for callers with a transaction.
   * Crash: before commit nothing exists (the client got no 200); after it, the send is durable.
   */
  async enqueue(message: NewMessage, request: unknown): Promise<MessageRow> {
    const entries = Object.entries(message);
    const columns = entries.map(([field]) => field.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`));
    const values = entries.map(([, value], index) =>
      JSON_MESSAGE_COLUMNS.has(columns[index]) ? (value === undefined || value === null ? null : JSON.stringify(value)) : value,
    );
    const placeholders = columns.map((column, index) => (JSON_MESSAGE_COLUMNS.has(column) ? `$${index + 1}::jsonb` : `$${index + 1}`));
    const n = values.length;
    const rows = rowsOf(
      await this.db.query(
        `WITH m AS (INSERT INTO messages (${columns.join(', ')}) VALUES (${placeholders.join(', ')}) RETURNING *),
         lane AS (INSERT INTO send_lanes (instance_id) VALUES ($${n + 1}) ON CONFLICT (instance_id) DO NOTHING),
         q AS (INSERT INTO send_queue (instance_id, message_id, request) VALUES ($${n + 1}, $${n + 2}, $${n + 3}::jsonb))
         SELECT * FROM m`,
        [...values, message.instanceId, message.messageId, JSON.stringify(request)],
      ),
    );
    return toMessageRow(rows[0]);
  }

  /**
   * Many accepts in ONE statement, so one commit (one WAL flush) covers them all: the `Queued`
   * messages rows, the lanes on first use, and the queue rows in the order given (send_queue ids are
   * drawn in VALUES order, so a caller's earlier accept gets the lower id). All or nothing: any bad
   * row fails the whole statement (the caller then retries the items one by one). Lanes are inserted
   * sorted, so two batches creating the same lanes cannot deadlock on each other.
   * Returns the rows in the order of `items`.
   */
  async enqueueMany(items: ReadonlyArray<{ message: NewMessage; request: unknown }>): Promise<MessageRow[]> {
    if (items.length === 0) return [];
    const fields = Object.keys(items[0].message) as Array<keyof NewMessage>;
    const columns = fields.map((field) => String(field).replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`));
    const rows = plainColumnsOnly(items, fields, columns)
      ? await this.enqueueManyAsJson(items, fields, columns)
      : await this.enqueueManyAsParameters(items, fields, columns);
    // The rows are what was given plus what Postgres set (no need to read the wide rows back): the
    // timestamps, and the record id, a fresh one when the given id was taken in the instance (ADR 0040).
    const byKey = new Map(rows.map((row) => [`${String(row.instance_id)}\u0000${String(row.message_id)}`, row]));
    return items.map(({ message }) => {
      const row = byKey.get(`${message.instanceId}\u0000${message.messageId}`);
      if (!row) throw new Error(`enqueueMany: no row returned for ${message.messageId}`);
      return {
        ...message,
        id: String(row.id),
        messageTimestamp: Number(message.messageTimestamp),
        createdAt: row.created_at as Date,
        updatedAt: row.updated_at as Date,
      };
    });
  }

  /**
   * The group as two JSON documents: the messages rows (keys = column names, read with the table's
   * own row type) and the queue rows in order. Writing ~40 parameters per send cost the accept path
   * more CPU (building the placeholders, encoding each parameter) than the rest of the statement.
   * Queue ids are drawn in the given order (ORDER BY the ordinality).
   */
  private async enqueueManyAsJson(
    items: ReadonlyArray<{ message: NewMessage; request: unknown }>,
    fields: Array<keyof NewMessage>,
    columns: string[],
  ): Promise<Raw[]> {
    const messages = items.map(({ message }) => {
      const row: Raw = {};
      for (let index = 0; index < fields.length; index++) row[columns[index]] = message[fields[index]] ?? null;
      return row;
    });
    const queue = items.map(({ message, request }) => [message.instanceId, message.messageId, request]);
    const lanes = [...new Set(items.map(({ message }) => message.instanceId))].sort();
    const list = columns.join(', ');
    return rowsOf(
      await this.db.query(
        `WITH m AS (INSERT INTO messages (${list}) SELECT ${list} FROM jsonb_populate_recordset(NULL::messages, $1::jsonb) RETURNING instance_id, id, message_id, created_at, updated_at),
         lane AS (INSERT INTO send_lanes (instance_id) SELECT id FROM unnest($3::text[]) AS lanes(id) ORDER BY id ON CONFLICT (instance_id) DO NOTHING),
         q AS (INSERT INTO send_queue (instance_id, message_id, request)
               SELECT e.item->>0, e.item->>1, e.item->2 FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS e(item, position) ORDER BY e.position)
         SELECT * FROM m`,
        [JSON.stringify(messages), JSON.stringify(queue), lanes],
      ),
    );
  }

  /** The same statement with one parameter per value, for rows holding values JSON would not carry as they are. */
  private async enqueueManyAsParameters(
    items: ReadonlyArray<{ message: NewMessage; request: unknown }>,
    fields: Array<keyof NewMessage>,
    columns: string[],
  ): Promise<Raw[]> {
    const params: unknown[] = [];
    const add = (value: unknown, cast = ''): string => {
      params.push(value);
      return `$${params.length}${cast}`;
    };
    const messageValues = items.map(({ message }) => {
      const cells = fields.map((field, index) => {
        const value = message[field];
        return JSON_MESSAGE_COLUMNS.has(columns[index]) ? add(value === undefined || value === null ? null : JSON.stringify(value), '::jsonb') : add(value);
      });
      return `(${cells.join(', ')})`;
    });
    const queueValues = items.map(
      ({ message, request }) => `(${add(message.instanceId)}, ${add(message.messageId)}, ${add(JSON.stringify(request), '::jsonb')})`,
    );
    const lanes = add([...new Set(items.map(({ message }) => message.instanceId))].sort());
    return rowsOf(
      await this.db.query(
        `WITH m AS (INSERT INTO messages (${columns.join(', ')}) VALUES ${messageValues.join(', ')} RETURNING instance_id, id, message_id, created_at, updated_at),
         lane AS (INSERT INTO send_lanes (instance_id) SELECT id FROM unnest(${lanes}::text[]) AS lanes(id) ORDER BY id ON CONFLICT (instance_id) DO NOTHING),
         q AS (INSERT INTO send_queue (instance_id, message_id, request) VALUES ${queueValues.join(', ')})
         SELECT * FROM m`,
        params,
      ),
    );
  }

  /**
   * Claims up to `limit` lanes that are due: no live claim, not resetting, retry wait over, pacing
   * gap over, and something queued. The gap is computed here from the instance's current
   * msg_delay_min/max and the lane's random fraction, so a settings change applies to queued sends.
   *
   * FOR UPDATE OF l SKIP LOCKED: dispatchers scanning at the same moment lock disjoint lanes and
   * never wait on each other; the UPDATE in the same statement makes the claim visible at commit.
   * Each lane comes with its head marked in flight (as takeHead would, in the same statement: a send
   * costs no second round trip and no second commit), or none when every queued send waits behind a
   * hold. A stale in_flight_id (its claimant died mid-send) is replaced: the head is resent by the new
   * claimant with the same ids. Crash right after this statement: the lane is claimed but idle
   * until claimed_until passes, then claimable again; nothing was sent.
   */
  async claimLanes(claimPrefix: string, limit: number, claimMs: number): Promise<ClaimedLane[]> {
    const rows = rowsOf(
      await this.db.query(
        `WITH due AS (
         SELECT l.instance_id FROM send_lanes l JOIN instances i ON i.id = l.instance_id
         WHERE (l.claimed_until IS NULL OR l.claimed_until < now())
           AND (l.resetting_until IS NULL OR l.resetting_until < now())
           AND l.retry_at <= now()
           AND (l.last_sent_at IS NULL
                OR l.last_sent_at + make_interval(secs => GREATEST(i.msg_delay_min, 0) + l.gap_fraction * GREATEST(i.msg_delay_max - i.msg_delay_min, 0)) <= now())
           AND EXISTS (SELECT 1 FROM send_queue q WHERE q.instance_id = l.instance_id AND (q.held_until IS NULL OR q.held_until <= now()))
         ORDER BY l.updated_at
         LIMIT $2
         FOR UPDATE OF l SKIP LOCKED),
       heads AS (
         SELECT h.* FROM due CROSS JOIN LATERAL (${laneHead('due.instance_id')}) h),
       claimed AS (
         UPDATE send_lanes l SET claimed_by = $1 || ':' || l.instance_id || ':' || md5(random()::text),
           claimed_until = now() + make_interval(secs => $3::double precision / 1000), in_flight_id = heads.id, updated_at = now()
         FROM due LEFT JOIN heads ON heads.instance_id = due.instance_id
         WHERE l.instance_id = due.instance_id
         RETURNING l.instance_id, l.claimed_by, l.in_flight_id)
       SELECT c.instance_id, c.claimed_by, h.id, h.message_id, h.request, h.attempts, h.limited
       FROM claimed c LEFT JOIN heads h ON h.id = c.in_flight_id`,
        [claimPrefix, limit, claimMs],
      ),
    );
    return rows.map((row) => ({ instanceId: row.instance_id as string, claimId: row.claimed_by as string, head: queuedSend(row) }));
  }

  /**
   * The lane's head (oldest accepted send), marked as going to the worker now under the claim (which
   * is renewed), in one round trip; null when the lane is empty, the claim was lost or a reset began:
   * the caller then does not send. The lane row's conditions are re-checked after any wait on its
   * lock, so this serialises with clear(): either the send is marked in flight first (clear lets it
   * finish and counts it drained) or clear comes first (this sees resetting_until and refuses).
   * Crash after it: the claim lapses; the next claimant resends the same request (no duplicate).
   */
  async takeHead(claim: LaneClaim, claimMs: number): Promise<QueuedSend | null> {
    const rows = rowsOf(
      await this.db.query(
        `WITH head AS (${laneHead('$1')}),
       lane AS (
         UPDATE send_lanes l SET in_flight_id = head.id, claimed_until = now() + make_interval(secs => $3::double precision / 1000), updated_at = now()
         FROM head
         WHERE l.instance_id = $1 AND l.claimed_by = $2 AND l.claimed_until > now()
           AND (l.resetting_until IS NULL OR l.resetting_until < now())
         RETURNING l.in_flight_id)
       SELECT head.* FROM head JOIN lane ON lane.in_flight_id = head.id`,
        [claim.instanceId, claim.claimId, claimMs],
      ),
    );
    return queuedSend(rows[0]);
  }

  /**
   * The head would open a new chat while WhatsApp limits that (see SendLimitRepository): it waits
   * until `until`, its attempts untouched, and the lane goes on with the sends behind it (takeHead
   * skips a held send and every later send to its chat, so a chat's sends keep their order). The
   * claim is kept. Crash before it: the head is tried again (and held again).
   */
  async hold(claim: LaneClaim, queueId: string, until: Date, reason: string): Promise<void> {
    await this.db.query(
      `WITH head AS (UPDATE send_queue SET held_until = $4, last_error = $5 WHERE id = $3)
       UPDATE send_lanes SET in_flight_id = NULL, updated_at = now() WHERE instance_id = $1 AND claimed_by = $2`,
      [claim.instanceId, claim.claimId, queueId, until, reason],
    );
  }

  /** Heartbeat while a send is in flight; false when the claim was lost (lapsed and taken). */
  async renew(claim: LaneClaim, claimMs: number): Promise<boolean> {
    const rows = rowsOf(
      await this.db.query(
        `UPDATE send_lanes SET claimed_until = now() + make_interval(secs => $3::double precision / 1000)
       WHERE instance_id = $1 AND claimed_by = $2 RETURNING instance_id`,
        [claim.instanceId, claim.claimId, claimMs],
      ),
    );
    return rows.length > 0;
  }

  /**
   * The worker answered (Sent or Failed, already stored by it): the head is done. Deletes it whatever
   * the claim (the answer is the worker's, not ours), and under our claim starts the pacing gap
   * (completion time + a fresh random fraction). Returns the gap in ms that now applies.
   *
   * With `goOn`, an instance without a gap (msg_delay 0..0) that has a next head that may go now keeps
   * the claim (renewed) with that head marked in flight, in the same statement, and it is returned
   * (`next`): its dispatcher sends it without a claim round. Otherwise, or while a reset runs, the lane is
   * released. The lane row is re-read after any wait on its lock (a reset's clear holds it), so a reset
   * that began meanwhile is seen and nothing more is taken. The next head is read in the statement's
   * snapshot, where the deleted head is still visible: it is skipped by id.
   * Crash before it: the head is resent, the worker answers from its store.
   */
  async complete(claim: LaneClaim, queueId: string, goOn?: { claimMs: number }): Promise<CompletedHead> {
    // Read on the lane row as the UPDATE finds it, after any wait on its lock.
    const keep = `(w.wanted AND (l.resetting_until IS NULL OR l.resetting_until < now()))`;
    const rows = rowsOf(
      await this.db.query(
        `WITH done AS (DELETE FROM send_queue WHERE id = $3),
       inst AS (SELECT msg_delay_min, msg_delay_max, (msg_delay_min <= 0 AND msg_delay_max <= 0) AS no_gap FROM instances WHERE id = $1),
       next AS (${laneHead('$1', '$3')}),
       lane AS (
         UPDATE send_lanes l SET last_sent_at = now(), gap_fraction = random(),
           in_flight_id = CASE WHEN ${keep} THEN (SELECT id FROM next) END,
           claimed_by = CASE WHEN ${keep} THEN l.claimed_by END,
           claimed_until = CASE WHEN ${keep} THEN now() + make_interval(secs => $5::double precision / 1000) END,
           retry_at = '-infinity', updated_at = now()
         FROM (SELECT $4 AND (SELECT no_gap FROM inst) AND EXISTS (SELECT 1 FROM next) AS wanted) w
         WHERE l.instance_id = $1 AND l.claimed_by = $2
         RETURNING l.gap_fraction, l.in_flight_id)
       SELECT (GREATEST(i.msg_delay_min, 0) + lane.gap_fraction * GREATEST(i.msg_delay_max - i.msg_delay_min, 0)) * 1000 AS gap_ms,
         next.id, next.instance_id, next.message_id, next.request, next.attempts, next.limited
       FROM lane CROSS JOIN inst i LEFT JOIN next ON next.id = lane.in_flight_id`,
        [claim.instanceId, claim.claimId, queueId, goOn !== undefined, goOn?.claimMs ?? 0],
      ),
    );
    return rows.length ? { gapMs: Number(rows[0].gap_ms), next: queuedSend(rows[0]) } : { gapMs: 0, next: null };
  }

  /**
   * The head could not be handed over (session down, timeout, error): it stays the head, the lane
   * waits `waitMs` and is released. `countAttempt` adds to the head's attempts (a disconnected session
   * does not count). Crash before it: the claim lapses and the head is retried sooner; harmless.
   */
  async retryLater(claim: LaneClaim, queueId: string, waitMs: number, countAttempt: boolean, error: string): Promise<void> {
    await this.db.query(
      `WITH head AS (
         UPDATE send_queue SET attempts = attempts + CASE WHEN $4 THEN 1 ELSE 0 END, last_error = $5 WHERE id = $3)
       UPDATE send_lanes SET retry_at = now() + make_interval(secs => $6::double precision / 1000), in_flight_id = NULL,
         claimed_by = NULL, claimed_until = NULL, updated_at = now()
       WHERE instance_id = $1 AND claimed_by = $2`,
      [claim.instanceId, claim.claimId, queueId, countAttempt, error, waitMs],
    );
  }

  /**
   * Retries exhausted: the head is dropped and its message marked Failed with its `messages_update`
   * event, unless the worker already relayed it (then the worker's status stands: it went out, and a
   * Failed the worker wrote was announced by it). One transaction; crash before commit leaves the head
   * to be retried once more. Returns the id of the event written (null: none).
   */
  async fail(claim: LaneClaim, queueId: string, messageId: string, error: string): Promise<string | null> {
    return this.transaction(async (manager) => {
      const failed = rowsOf(
        await manager.query(
          `UPDATE messages m SET status = 'Failed', error = $3, updated_at = now()
           FROM instances i
           WHERE m.instance_id = $1 AND m.message_id = $2 AND m.relayed_at IS NULL AND m.status IN ('Queued', 'Pending') AND i.id = m.instance_id
           RETURNING m.chat_id, m.chat_lid, m.is_group, i.name AS instance_name, i.owner`,
          [claim.instanceId, messageId, error],
        ),
      );
      let eventId: string | null = null;
      if (failed.length) {
        const row = failed[0];
        const chat = String(row.chat_id || row.chat_lid);
        const isGroup = Boolean(row.is_group);
        const payload = messagesUpdatePayload({
          messageIds: [messageId],
          chat,
          // The chat's party as addressed (the queue knows no more of it).
          sender: { jid: chat, pn: !isGroup && chat.endsWith('@s.whatsapp.net') ? chat : '', lid: chat.endsWith('@lid') ? chat : '' },
          fromMe: true,
          isGroup,
          type: 'Failed',
          state: 'Failed',
          timestamp: Date.now() / 1000,
          error,
          instanceName: String(row.instance_name ?? ''),
          owner: String(row.owner ?? ''),
        });
        eventId = await this.outbox.within(manager).insert(claim.instanceId, [{ eventType: 'messages_update', chatId: chat, payload }]);
      }
      await manager.query(`DELETE FROM send_queue WHERE id = $1`, [queueId]);
      await manager.query(
        `UPDATE send_lanes SET last_sent_at = now(), gap_fraction = random(), in_flight_id = NULL, claimed_by = NULL, claimed_until = NULL,
           retry_at = '-infinity', updated_at = now()
         WHERE instance_id = $1 AND claimed_by = $2`,
        [claim.instanceId, claim.claimId],
      );
      return eventId;
    });
  }

  /** Gives the lane back without sending (shutdown, head gone, reset began). */
  async release(claim: LaneClaim): Promise<void> {
    await this.db.query(
      `UPDATE send_lanes SET claimed_by = NULL, claimed_until = NULL, in_flight_id = NULL, updated_at = now() WHERE instance_id = $1 AND claimed_by = $2`,
      [claim.instanceId, claim.claimId],
    );
  }

  /**
   * Starts a reset (DELETE /message/async): no new send starts on this lane until endReset or until
   * `holdMs` passes (a gateway that dies mid-reset does not block the lane for ever). False when a
   * reset is already running.
   */
  async beginReset(instanceId: string, holdMs: number): Promise<boolean> {
    const rows = rowsOf(
      await this.db.query(
        `INSERT INTO send_lanes (instance_id, resetting_until) VALUES ($1, now() + make_interval(secs => $2::double precision / 1000))
       ON CONFLICT (instance_id) DO UPDATE SET resetting_until = EXCLUDED.resetting_until, updated_at = now()
         WHERE send_lanes.resetting_until IS NULL OR send_lanes.resetting_until < now()
       RETURNING instance_id`,
        [instanceId, holdMs],
      ),
    );
    return rows.length > 0;
  }

  /**
   * Cancels everything queued for the instance except the send in flight under a live claim, in one
   * transaction: the lane row is locked first (serialising with takeHead), the queue rows are
   * deleted, and their messages still `Queued` (or `Pending` but never relayed: a worker reserved
   * them and failed before the network) become `Canceled`. Sent messages are untouched. Crash before
   * commit: nothing canceled, the reset marker lapses by itself.
   */
  async clear(instanceId: string): Promise<QueueClearResult> {
    return this.transaction(async (manager) => {
      const lanes: Raw[] = await manager.query(
        `SELECT CASE WHEN claimed_until > now() THEN in_flight_id END AS in_flight_id FROM send_lanes WHERE instance_id = $1 FOR UPDATE`,
        [instanceId],
      );
      const inFlightId = lanes.length && lanes[0].in_flight_id !== null ? String(lanes[0].in_flight_id) : null;
      const rows = rowsOf(
        await manager.query(
          `WITH deleted AS (
           DELETE FROM send_queue WHERE instance_id = $1 AND id IS DISTINCT FROM $2::bigint RETURNING message_id, last_error),
         canceled AS (
           UPDATE messages m SET status = 'Canceled', updated_at = now() FROM deleted d
           WHERE m.instance_id = $1 AND m.message_id = d.message_id AND m.relayed_at IS NULL AND m.status IN ('Queued', 'Pending')
           RETURNING 1)
         SELECT (SELECT count(*) FROM deleted) AS deleted, (SELECT count(*) FROM deleted WHERE last_error <> '') AS waiting,
                (SELECT count(*) FROM canceled) AS canceled`,
          [instanceId, inFlightId],
        ),
      );
      return { deleted: Number(rows[0].deleted), waitingDeleted: Number(rows[0].waiting), canceled: Number(rows[0].canceled), inFlightId };
    });
  }

  /** True while the send `queueId` is still in flight under a live claim. */
  async stillInFlight(instanceId: string, queueId: string): Promise<boolean> {
    const rows = rowsOf(
      await this.db.query(`SELECT 1 FROM send_lanes WHERE instance_id = $1 AND in_flight_id = $2 AND claimed_until > now()`, [instanceId, queueId]),
    );
    return rows.length > 0;
  }

  async endReset(instanceId: string): Promise<void> {
    await this.db.query(`UPDATE send_lanes SET resetting_until = NULL, updated_at = now() WHERE instance_id = $1`, [instanceId]);
  }

  async status(instanceId: string): Promise<QueueStatusRow> {
    const rows = rowsOf(
      await this.db.query(
        `SELECT (SELECT count(*) FROM send_queue WHERE instance_id = $1) AS pending,
              COALESCE(l.in_flight_id IS NOT NULL AND l.claimed_until > now(), false) AS processing,
              COALESCE(l.resetting_until > now(), false) AS resetting
       FROM (SELECT 1) one LEFT JOIN send_lanes l ON l.instance_id = $1`,
        [instanceId],
      ),
    );
    return { pending: Number(rows[0].pending), processingNow: Boolean(rows[0].processing), resetting: Boolean(rows[0].resetting) };
  }
}
