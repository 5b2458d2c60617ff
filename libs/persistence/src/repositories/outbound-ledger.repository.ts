// The send path's fenced writes (reserve, settle, relayed marks, acks) against the messages table.
import type { Lease } from './lease.repository';
import { PREPARED } from '../preparing-client';
import { RepositoryBase } from './repository-base';
import {
  COLUMNS,
  FINAL_SQL,
  insertParts,
  messageDocument,
  RANK_SQL,
  REFRESH_SQL,
  recordColumnsSql,
  RELAYABLE_SQL,
  STATUS_RANK,
  toRecordRow,
  type NewMessage,
  type Raw,
  type RecordRow,
} from './message-row';
import { fenceCte, fenceManyCte, fenceManyParams, fenceParams } from './lease-fence';

/** A reserve meeting a row of the same message: sent again by the API, as long as the row may still be relayed (reserve, reserveMany). */
const RESERVE_CONFLICT_SQL = `ON CONFLICT (instance_id, message_id) DO UPDATE SET
  ${REFRESH_SQL},
  status = 'Pending', was_sent_by_api = true, send_function = EXCLUDED.send_function, send_payload = EXCLUDED.send_payload,
  track_source = EXCLUDED.track_source, track_id = EXCLUDED.track_id, send_folder_id = EXCLUDED.send_folder_id,
  relayed_at = EXCLUDED.relayed_at, updated_at = now()
WHERE ${RELAYABLE_SQL}`;

/**
 * The final SELECT of a group statement (fenceManyCte): the rows of CTE `cte`, and `held_instances`,
 * the instances whose lease held, on one row only (the array of every instance of the group repeated
 * on each row was most of the bytes such a statement returned: ~1 KB per row at 50 instances). Read
 * back with heldInstances().
 */
function selectWithHeldInstances(cte: string): string {
  return `SELECT CASE WHEN row_number() OVER () = 1 THEN held.held_instances END AS held_instances, ${cte}.*
       FROM (SELECT coalesce(array_agg(instance_id), '{}') AS held_instances FROM lease) AS held LEFT JOIN ${cte} ON true`;
}

/** The instances whose lease held, from a statement ending in selectWithHeldInstances(). */
function heldInstances(rows: Raw[]): Set<string> {
  const row = rows.find((raw) => raw.held_instances !== null && raw.held_instances !== undefined);
  return new Set<string>((row?.held_instances as string[] | undefined) ?? []);
}

/** A reserve's answer: whether the lease held, and whether the id was reserved (false: relayed before). */
export interface Reserved {
  held: boolean;
  reserved: boolean;
}

/**
 * The send path's writes, each one fenced statement (see fenceCte): a send costs two
 * round trips to the store, not three transactions.
 */
export class OutboundLedgerRepository extends RepositoryBase {
  /**
   * Reserves a message id for a send: the row is stored `Pending` (a row queued earlier keeps its id
   * and takes the send's fields), and with `relay` it is marked relayed in the same statement. Nothing
   * changes when the id was relayed before (a send cut off is taken over apart: reclaimCutOff): `reserved` is then false (the caller answers from the
   * store). The row itself is not read back: the send answers with the row its result writes.
   */
  async reserve(lease: Lease, message: NewMessage, relay: boolean): Promise<Reserved> {
    const { names, placeholders, values } = insertParts(message, 5);
    const rows: Raw[] = await this.db.query(
      `WITH ${fenceCte(1)},
       reserved AS (
         INSERT INTO messages (${names.join(', ')}, relayed_at)
         SELECT ${placeholders.join(', ')}, CASE WHEN $4::boolean THEN now() END WHERE EXISTS (SELECT 1 FROM lease)
         ${RESERVE_CONFLICT_SQL}
         RETURNING message_id)
       SELECT held.held, reserved.message_id FROM (SELECT (SELECT count(*) FROM lease)::int AS held) AS held LEFT JOIN reserved ON true`,
      [...fenceParams(lease), relay, ...values],
    );
    const first = rows[0];
    return { held: Boolean(first?.held), reserved: Boolean(first?.message_id) };
  }

  /**
   * reserve() for many sends of any instances of this worker in ONE statement (group commit, ADR 0012):
   * one round trip and one commit for the group. The fence holds per instance: the `lease` CTE locks
   * the lease row of every instance whose lease (worker, fencing token) is still live FOR KEY SHARE, and
   * only their rows are written; the others answer `held: false`. The rows travel as one JSON document
   * read with the table's own row type (no 40 parameters per send). Callers never put the same message
   * twice in one group (a multi-row upsert may not touch a row twice; the statement would fail).
   * Answers in the order of `items`.
   */
  async reserveMany(items: ReadonlyArray<{ lease: Lease; message: NewMessage; relay: boolean }>): Promise<Reserved[]> {
    const names = COLUMNS.map(([, column]) => column);
    const messages = items.map(({ message }) => messageDocument(message));
    const relay = items.filter((item) => item.relay);
    const rows: Raw[] = await this.db.query(
      `${PREPARED} WITH ${fenceManyCte()},
       reserved AS (
         INSERT INTO messages (${names.join(', ')}, relayed_at)
         SELECT ${names.map((column) => `input.${column}`).join(', ')},
           CASE WHEN (input.instance_id, input.message_id) IN (SELECT * FROM unnest($5::text[], $6::text[])) THEN now() END
         FROM jsonb_populate_recordset(NULL::messages, $4::jsonb) AS input
         WHERE input.instance_id IN (SELECT instance_id FROM lease)
         ORDER BY input.instance_id, input.message_id
         ${RESERVE_CONFLICT_SQL}
         RETURNING instance_id, message_id)
       ${selectWithHeldInstances('reserved')}`,
      [
        ...fenceManyParams(items.map((item) => item.lease)),
        JSON.stringify(messages),
        relay.map((item) => item.message.instanceId),
        relay.map((item) => item.message.messageId),
      ],
    );
    const held = heldInstances(rows);
    const reserved = new Set(rows.filter((raw) => raw.message_id).map((raw) => `${String(raw.instance_id)}\u0000${String(raw.message_id)}`));
    return items.map(({ message }) => ({
      held: held.has(message.instanceId),
      reserved: reserved.has(`${message.instanceId}\u0000${message.messageId}`),
    }));
  }

  /**
   * settle() for many sends of any instances in ONE statement (group commit), fenced per instance as
   * reserveMany(). A message further along already (a receipt came first) is read back in a second
   * statement, as settle() does, only when there is one.
   *
   * It never waits for a row lock: the rows it can lock at once (`SKIP LOCKED`) are settled together, a
   * row another transaction holds is settled alone afterwards by settle(), which holds no other row while
   * it waits. The inbound group transaction writes a send's copy and receipts in several rounds, so its
   * row locks come in no one order; a group of results waiting on one of them while holding another
   * deadlocked with it (bench/send: 40P01, a send waiting out the 1 s deadlock_timeout).
   */
  async settleMany(
    items: ReadonlyArray<{ lease: Lease; messageId: string; outcome: { status: 'Sent' } | { status: 'Failed'; error: string } }>,
  ): Promise<Array<{ held: boolean; row: RecordRow | null }>> {
    const rows: Raw[] = await this.db.query(
      `${PREPARED} WITH ${fenceManyCte()},
       input AS (SELECT * FROM unnest($4::text[], $5::text[], $6::text[], $7::text[]) AS u(instance_id, message_id, status, error)),
       target AS (
         SELECT m.instance_id, m.message_id FROM messages m
         JOIN input ON m.instance_id = input.instance_id AND m.message_id = input.message_id
         WHERE input.instance_id IN (SELECT instance_id FROM lease)
         FOR UPDATE OF m SKIP LOCKED),
       changed AS (
         UPDATE messages SET status = input.status, error = CASE WHEN input.status = 'Failed' THEN input.error ELSE messages.error END, updated_at = now()
         FROM input JOIN target ON target.instance_id = input.instance_id AND target.message_id = input.message_id
         WHERE messages.instance_id = input.instance_id AND messages.message_id = input.message_id AND ${FINAL_SQL}
           AND CASE WHEN input.status = 'Sent' THEN ${RANK_SQL} < ${STATUS_RANK.Sent} ELSE ${RANK_SQL} <= ${STATUS_RANK.Sent} END
         RETURNING ${recordColumnsSql('messages')})
       SELECT CASE WHEN row_number() OVER () = 1 THEN held.held_instances END AS held_instances,
              CASE WHEN row_number() OVER () = 1 THEN held.locked END AS locked, changed.*
       FROM (SELECT (SELECT coalesce(array_agg(instance_id), '{}') FROM lease) AS held_instances,
                    (SELECT coalesce(json_agg(json_build_array(instance_id, message_id)), '[]') FROM target) AS locked) AS held
       LEFT JOIN changed ON true`,
      [
        ...fenceManyParams(items.map((item) => item.lease)),
        items.map((item) => item.lease.instanceId),
        items.map((item) => item.messageId),
        items.map((item) => item.outcome.status),
        items.map((item) => (item.outcome.status === 'Failed' ? item.outcome.error : '')),
      ],
    );
    const held = heldInstances(rows);
    const key = (instanceId: string, messageId: string) => `${instanceId}\u0000${messageId}`;
    const lockedRow = rows.find((raw) => raw.locked !== null && raw.locked !== undefined);
    const locked = new Set(((lockedRow?.locked as Array<[string, string]> | undefined) ?? []).map(([instanceId, messageId]) => key(instanceId, messageId)));
    const byKey = new Map(rows.filter((raw) => raw.message_id).map((raw) => [key(String(raw.instance_id), String(raw.message_id)), toRecordRow(raw)]));
    // Unchanged (further along already): read in a statement of its own, whose snapshot sees the write
    // this one may have waited for (see settle()).
    const unchanged = items.filter(
      (item) =>
        held.has(item.lease.instanceId) && locked.has(key(item.lease.instanceId, item.messageId)) && !byKey.has(key(item.lease.instanceId, item.messageId)),
    );
    if (unchanged.length) {
      const current: Raw[] = await this.db.query(
        `SELECT ${recordColumnsSql('m')} FROM messages m JOIN unnest($1::text[], $2::text[]) AS k(instance_id, message_id) ON m.instance_id = k.instance_id AND m.message_id = k.message_id`,
        [unchanged.map((item) => item.lease.instanceId), unchanged.map((item) => item.messageId)],
      );
      for (const raw of current) byKey.set(key(String(raw.instance_id), String(raw.message_id)), toRecordRow(raw));
    }
    // Skipped (held by another transaction, or no row): each alone, waiting for nothing else meanwhile.
    const results = new Map<string, { held: boolean; row: RecordRow | null }>();
    for (const item of items) {
      const k = key(item.lease.instanceId, item.messageId);
      if (held.has(item.lease.instanceId) && !locked.has(k)) results.set(k, await this.settle(item.lease, item.messageId, item.outcome));
    }
    return items.map((item) => {
      const k = key(item.lease.instanceId, item.messageId);
      return results.get(k) ?? { held: held.has(item.lease.instanceId), row: byKey.get(k) ?? null };
    });
  }

  /**
   * Marks a reserved message relayed (a send with a typing delay reserves first, relays after): `relayed`
   * for the one request that marks it, `already` when another request with the same id marked it first
   * (it relays the message; this one must not), `fenced` when the lease is gone.
   */
  async markRelayed(lease: Lease, messageId: string): Promise<'relayed' | 'already' | 'fenced'> {
    const rows: Array<{ held: number; marked: number }> = await this.db.query(
      `WITH ${fenceCte(1)},
       marked AS (UPDATE messages SET relayed_at = now()
                  WHERE instance_id = $1 AND message_id = $4 AND relayed_at IS NULL AND EXISTS (SELECT 1 FROM lease) RETURNING 1)
       SELECT (SELECT count(*) FROM lease)::int AS held, (SELECT count(*) FROM marked)::int AS marked`,
      [...fenceParams(lease), messageId],
    );
    if (!rows[0]?.held) return 'fenced';
    return rows[0].marked ? 'relayed' : 'already';
  }

  /**
   * Takes over a message whose send was cut off after it marked the id relayed and before its copy or
   * its result was stored (its worker died: the request came back through a takeover or the queue's
   * retry): still Pending, relayed, no copy. It is marked relayed again now (the unacked sweep counts
   * from here). 'fenced' when the lease is gone; 'not' when it is no longer such a message.
   */
  async reclaimCutOff(lease: Lease, messageId: string): Promise<'reclaimed' | 'not' | 'fenced'> {
    const rows: Array<{ held: number; changed: number }> = await this.db.query(
      `WITH ${fenceCte(1)},
       changed AS (UPDATE messages SET relayed_at = now(), updated_at = now()
                   WHERE instance_id = $1 AND message_id = $4 AND status = 'Pending' AND raw IS NULL AND relayed_at IS NOT NULL
                     AND EXISTS (SELECT 1 FROM lease) RETURNING 1)
       SELECT (SELECT count(*) FROM lease)::int AS held, (SELECT count(*) FROM changed)::int AS changed`,
      [...fenceParams(lease), messageId],
    );
    if (!rows[0]?.held) return 'fenced';
    return rows[0].changed ? 'reclaimed' : 'not';
  }

  /**
   * Keeps the copy of a message as it went out (`raw`, BufferJSON), when none is stored: the unacked
   * sweep resends it from there. False when the lease is gone.
   */
  async keepCopy(lease: Lease, messageId: string, raw: string): Promise<boolean> {
    const rows: Array<{ held: number }> = await this.db.query(
      `WITH ${fenceCte(1)},
       changed AS (UPDATE messages SET raw = $5 WHERE instance_id = $1 AND message_id = $4 AND raw IS NULL AND EXISTS (SELECT 1 FROM lease) RETURNING 1)
       SELECT (SELECT count(*) FROM lease)::int AS held`,
      [...fenceParams(lease), messageId, raw],
    );
    return Boolean(rows[0]?.held);
  }

  /**
   * Undoes markRelayed() for a message that never reached WhatsApp (the connection went away before
   * the relay finished): the queue's next attempt with the same id relays it. Only while it is
   * still Pending; false when the lease is gone.
   */
  async unrelay(lease: Lease, messageId: string): Promise<boolean> {
    const rows: Array<{ held: number }> = await this.db.query(
      `WITH ${fenceCte(1)},
       changed AS (UPDATE messages SET relayed_at = NULL, updated_at = now()
                   WHERE instance_id = $1 AND message_id = $4 AND status = 'Pending' AND EXISTS (SELECT 1 FROM lease) RETURNING 1)
       SELECT (SELECT count(*) FROM lease)::int AS held`,
      [...fenceParams(lease), messageId],
    );
    return Boolean(rows[0]?.held);
  }

  /**
   * The server's answer to a send: Sent (only forward: a receipt may have come first) or Failed with
   * its error (unless it was delivered already). Returns the row as it is afterwards.
   */
  async settle(
    lease: Lease,
    messageId: string,
    outcome: { status: 'Sent' } | { status: 'Failed'; error: string },
  ): Promise<{ held: boolean; row: RecordRow | null }> {
    const change =
      outcome.status === 'Sent'
        ? `SET status = 'Sent', updated_at = now() WHERE ${RANK_SQL} < ${STATUS_RANK.Sent} AND ${FINAL_SQL}`
        : `SET status = 'Failed', error = $5, updated_at = now() WHERE ${RANK_SQL} <= ${STATUS_RANK.Sent} AND ${FINAL_SQL}`;
    const rows: Raw[] = await this.db.query(
      `WITH ${fenceCte(1)},
       changed AS (
         UPDATE messages ${change} AND instance_id = $1 AND message_id = $4 AND EXISTS (SELECT 1 FROM lease)
         RETURNING ${recordColumnsSql('messages')})
       SELECT held.held, changed.* FROM (SELECT (SELECT count(*) FROM lease)::int AS held) AS held LEFT JOIN changed ON true`,
      [...fenceParams(lease), messageId, ...(outcome.status === 'Failed' ? [outcome.error] : [])],
    );
    const first = rows[0];
    if (!first?.held || first.message_id) return { held: Boolean(first?.held), row: first?.message_id ? toRecordRow(first) : null };
    // Nothing changed: the row is further along already. Read it in a statement of its own: this
    // statement's snapshot predates a write it may have waited for (a receipt), and would show the row
    // as it was before that.
    const current: Raw[] = await this.db.query(`SELECT ${recordColumnsSql('messages')} FROM messages WHERE instance_id = $1 AND message_id = $2`, [
      lease.instanceId,
      messageId,
    ]);
    return { held: true, row: current.length ? toRecordRow(current[0]) : null };
  }

  /** The server acked messages we sent: Sent, if nothing further along was recorded. */
  async acked(lease: Lease, messageIds: string[]): Promise<boolean> {
    const rows: Array<{ held: number }> = await this.db.query(
      `WITH ${fenceCte(1)},
       changed AS (
         UPDATE messages SET status = 'Sent', updated_at = now()
         WHERE instance_id = $1 AND message_id = ANY($4::text[]) AND from_me AND ${RANK_SQL} < ${STATUS_RANK.Sent} AND ${FINAL_SQL}
           AND EXISTS (SELECT 1 FROM lease))
       SELECT (SELECT count(*) FROM lease)::int AS held`,
      [...fenceParams(lease), messageIds],
    );
    return Boolean(rows[0]?.held);
  }
}
