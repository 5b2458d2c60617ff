/**
 * Recording a batch of successes and claiming, in the same statement, the next run of each lane they
 * moved on (bench/webhooks, issue #38). A lane can be claimed again only once its results are written:
 * before this, each flush of results was followed by a claim statement that walked every lane with
 * pending rows (200 index probes in the bench) to find the few that had moved on, a round trip and a
 * pass gap later. Here the lanes are known (the rows just delivered), so each costs one index probe.
 */

/** The row of a claim, as both claim statements return it. */
/**
 * The payload comes as its JSON text (`payload_json`), not parsed: the relay sends it as text, so parsing
 * it here and serialising it again there cost every delivery both for nothing (issue #38).
 */
export const CLAIM_COLUMNS = `c.id, c.webhook_id, c.attempts, c.head_id, c.position, o.id AS event_id, o.instance_id, o.event_type, o.chat_id, o.payload::text AS payload_json, o.traceparent`;

/**
 * The end both claim statements share, after their `runs` CTE: the first `limit` rows by position (every
 * lane's head first), each claimed for `claimMs` if still free as it is updated, returned with its event.
 * `limit` and `claimMs` name the statement's parameters (`$4`…).
 *
 * Each claimed row finds its head and position in `picks`' arrays (`array_position`), not by joining
 * `picked` again: the planner guesses one row for a CTE and joined the two by a nested loop, every claimed
 * row against every picked one (211,140 comparisons, 20 of the statement's 27 ms for a run of 460 rows;
 * EXPLAIN ANALYZE on a bench schema, issue #38). A search of an array of ids costs next to nothing per row.
 */
export function claimRunsSql(limit: string, claimMs: string): string {
  return `picked AS (
     SELECT id, head_id, position FROM runs ORDER BY position, head_event LIMIT ${limit}),
   picks AS (
     SELECT array_agg(id) AS ids, array_agg(head_id) AS heads, array_agg(position) AS positions FROM picked),
   claimed AS (
     UPDATE webhook_deliveries d SET claimed_until = now() + (${claimMs} || ' milliseconds')::interval
     FROM picks
     WHERE d.id = ANY(picks.ids) AND d.status = 'pending' AND (d.claimed_until IS NULL OR d.claimed_until < now())
     RETURNING d.id, d.webhook_id, d.attempts, d.event_id,
       picks.heads[array_position(picks.ids, d.id)] AS head_id, picks.positions[array_position(picks.ids, d.id)] AS position)
   SELECT ${CLAIM_COLUMNS}
   FROM claimed c JOIN outbox_events o ON o.id = c.event_id
   ORDER BY c.head_id, c.position`;
}

/**
 * $1 ids, $2 status codes, $3 latencies (as markDelivered); $4 most rows claimed, $5 claim ms, $6 webhooks
 * whose lanes are left alone (their receiver has enough queued), $7 most rows per lane, $8 whether each
 * success ended its run (only those lanes are claimed on: behind any other, the run is still claimed
 * here, and the probe would find nothing; bench/webhooks: 87-95 % of flushes claimed nothing without it).
 *
 * - `done`: the successes, as markDelivered records them (each row's code, latency and run end looked up in
 *   the arrays by its id's position: joined with `unnest` they were a nested loop of every id against every
 *   row); `healed`: their webhooks no longer failing.
 * - `runs`: for each lane a success moved on, the lane read from its start (the statement's snapshot
 *   still shows the rows delivered here as pending: they are skipped by id), so a row made pending
 *   again by a replay, older than the ones delivered, is its head and goes first. As in claimDue, the
 *   run is read as a range of the lanes index from the lane's start (an equality on the lane let the
 *   planner read a lane's whole backlog and sort it), and ends at the first row that is not free
 *   (claimed, due later, or of the next lane): nothing is claimed behind a row someone holds.
 * - `claimed`: checked again as each row is updated; a row claimed meanwhile by another relay leaves a
 *   gap, and the relay cuts the run there (positions must follow 1, 2, …) as it does for claimDue.
 */
export const MARK_DELIVERED_CLAIM_NEXT = `WITH done AS (
     UPDATE webhook_deliveries d
     SET status = 'delivered', attempts = d.attempts + 1, last_status_code = ($2::int[])[array_position($1::bigint[], d.id)], claimed_until = NULL,
       finished_at = now(), latency_ms = ($3::int[])[array_position($1::bigint[], d.id)], first_attempt_at = COALESCE(d.first_attempt_at, now()),
       last_attempt_at = now()
     WHERE d.id = ANY(ARRAY(SELECT unnest($1::bigint[]))) AND d.status = 'pending'
     RETURNING d.webhook_id, d.instance_id, d.chat_id, ($8::bool[])[array_position($1::bigint[], d.id)] AS ends),
   healed AS (
     UPDATE webhooks SET failing_since = NULL WHERE failing_since IS NOT NULL AND id IN (SELECT webhook_id FROM done)),
   lanes AS (
     SELECT DISTINCT webhook_id, instance_id, chat_id FROM done WHERE ends AND NOT (webhook_id = ANY($6::text[]))),
   runs AS (
     SELECT q.id, q.head_id, q.head_event, q.position FROM lanes l CROSS JOIN LATERAL (
       SELECT p.id, first_value(p.id) OVER lane AS head_id, first_value(p.event_id) OVER lane AS head_event,
         row_number() OVER lane AS position, bool_and(p.free) OVER lane AS unbroken
       FROM (
         SELECT d.id, d.webhook_id, d.instance_id, d.chat_id, d.event_id,
           (d.webhook_id = l.webhook_id AND d.instance_id = l.instance_id AND d.chat_id = l.chat_id
            AND d.next_attempt_at <= now() AND (d.claimed_until IS NULL OR d.claimed_until < now())) AS free
         FROM webhook_deliveries d
         WHERE d.status = 'pending' AND NOT (d.id = ANY($1::bigint[]))
           AND (d.webhook_id, d.instance_id, d.chat_id) >= (l.webhook_id, l.instance_id, l.chat_id)
         ORDER BY d.webhook_id, d.instance_id, d.chat_id, d.event_id LIMIT $7) p
       WINDOW lane AS (ORDER BY p.webhook_id, p.instance_id, p.chat_id, p.event_id)) q
     WHERE q.unbroken),
   ${claimRunsSql('$4', '$5')}`;
