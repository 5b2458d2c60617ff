import type { WebhookEventPayload } from '@gw/contracts';
import { pipelinedTransaction } from '../pipelined-transaction';
import { claimRunsSql, MARK_DELIVERED_CLAIM_NEXT } from './delivery-continuation';
import { OutboxRepository } from './outbox.repository';
import { maskUrlCredentials, type SinkKind, type WebhookRow } from './webhook.repository';
import { RepositoryBase } from './repository-base';

export interface OutboxEvent {
  id: string;
  instanceId: string;
  eventType: string;
  chatId: string;
  payload: Record<string, unknown>;
  /**
   * Claims only: the payload's JSON text as Postgres renders it (`{"a": 1, "b": [2, 3]}`), which the relay
   * sends as it is; `payload` is parsed from it when first read.
   */
  payloadJson?: string;
  /** The W3C `traceparent` the event was written under (tracing on), which its delivery span continues; claims only. */
  traceparent?: string | null;
}

/** What fan-out reads of an enabled target: what its filters and its lanes need. */
export type FanOutTarget = Pick<WebhookRow, 'id' | 'instanceId' | 'kind' | 'events' | 'excludeMessages'>;

/** A delivery fan-out is about to make, offered for claiming at its insert (DirectFanOut). */
export interface FanOutCandidate {
  webhookId: string;
  event: OutboxEvent;
  /** The lane's chat: the event's for a webhook, '' for a broker sink (one lane per instance). */
  laneChatId: string;
}

/**
 * A fan-out that claims the deliveries it makes for lanes its relay may send at once, so they go out without
 * a claim statement (and without the claim's row write): a lane with nothing pending, or one whose pending
 * rows are all this relay's, in a run it is sending (issue #38, ADR 0046).
 */
export interface DirectFanOut {
  claimMs: number;
  /**
   * Inside the fan-out's transaction, after matching: for each candidate, the last event id of its lane this
   * relay holds ('0' when none), or null to leave it pending. The write claims a row only if its lane has no
   * other pending row after that id.
   */
  plan(candidates: FanOutCandidate[]): Promise<Array<string | null>> | Array<string | null>;
}

export interface FanOutResult {
  /** Events taken. */
  events: number;
  /** Deliveries made (claimed or not). */
  deliveries: number;
  /** Their webhooks. */
  webhookIds: Set<string>;
  /** Webhooks with deliveries left pending: for the claims. */
  pendingWebhookIds: Set<string>;
  /** With `direct`: the deliveries offered for claiming and left pending all the same (their lane had another pending row). */
  leftPending: FanOutCandidate[];
  /** The deliveries claimed at their insert (DirectFanOut), in event order, each with its event's payload text. */
  claims: DeliveryClaim[];
}

export interface DeliveryClaim {
  deliveryId: string;
  /** The attempt this claim is for (1 = first). Attempts are counted when their result is recorded. */
  attempt: number;
  event: OutboxEvent;
  webhookId: string;
  /** The lane head this delivery was claimed behind (its own id for the head itself). */
  headId: string;
  /** 1 for the lane head, 2 for the delivery after it, … */
  position: number;
}

export interface ClaimOptions {
  /** Lanes whose webhook is one of these are left alone (their receiver has enough queued). */
  excludeWebhooks?: string[];
  /** At most this many deliveries of one lane, head first, in lane order. */
  perLane?: number;
  /** At most this many lanes (default: `limit`). */
  lanes?: number;
}

export interface DeliveredResult {
  deliveryId: string;
  statusCode: number;
  /** How long the attempt took (the delivery log's latency); not recorded when not given. */
  latencyMs?: number;
  /**
   * The last delivery of the run it was claimed in: only such lanes are claimed on by
   * markDeliveredAndClaimNext (behind any other, the rest of the run is still claimed). Not given: true.
   */
  endsRun?: boolean;
}

export interface DeliveryErrorRecord {
  webhookId: string;
  /** The target's kind (a webhook when not given): each route lists the errors of its own kind. */
  kind?: SinkKind;
  instanceId: string | null;
  global: boolean;
  url: string;
  event: string;
  messageType: string;
  statusCode: number | null;
  attempts: number;
  error: string;
  payload: Record<string, unknown>;
}

/** The relay's statements (each run from more than one place: its method, and warmUp's EXPLAIN). */
/**
 * What fan-out reads of an event's payload: the fields the webhooks' filters read (`message`'s
 * `wasSentByApi`, `fromMe`, `isGroup`: relay webhookWants), not the payload. The claim reads the payload
 * to send it; reading it here too cost every event a conversion to text in Postgres and a JSON parse
 * in the relay for nothing (bench/webhooks, issue #38). A `message` that is an object or an array
 * keeps its kind's meaning (an array has none of the fields); any other is left out.
 */
const FILTER_FIELDS = `CASE WHEN jsonb_typeof(payload -> 'message') IN ('object', 'array') THEN jsonb_build_object('message', jsonb_build_object(
         'wasSentByApi', payload #> '{message,wasSentByApi}', 'fromMe', payload #> '{message,fromMe}', 'isGroup', payload #> '{message,isGroup}'))
       ELSE '{}'::jsonb END`;

/**
 * Fan-out's read: the undispatched events (locked) and, as rows of their own after them (`target` set),
 * the enabled targets they may go to — the global ones and their instances' — with what `match` reads.
 * One statement: the targets were a second round trip of every fan-out, each reading every column of
 * every target row (its dates and arrays parsed in the relay; bench/webhooks, issue #38).
 */
function fanOutRead(claiming: boolean): string {
  // Claiming (DirectFanOut): the events also come with what a claim returns of them (the payload's JSON text, the
  // traceparent), so the deliveries fan-out claims go out without a claim statement.
  const sent = claiming ? ', payload::text AS payload_json, traceparent' : '';
  return `WITH events AS (
       SELECT id, instance_id, event_type, chat_id, ${FILTER_FIELDS} AS payload${sent} FROM outbox_events
       WHERE dispatched_at IS NULL ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED)
     SELECT id, instance_id, event_type, chat_id, payload${claiming ? ', payload_json, traceparent' : ''}, NULL::jsonb AS target FROM events
     UNION ALL
     SELECT NULL, NULL, NULL, NULL, NULL${claiming ? ', NULL, NULL' : ''}, jsonb_build_object('id', w.id, 'instanceId', w.instance_id, 'kind', w.kind,
         'events', to_jsonb(w.events), 'excludeMessages', to_jsonb(w.exclude_messages))
     FROM webhooks w
     WHERE w.enabled AND (w.instance_id IS NULL OR w.instance_id IN (SELECT instance_id FROM events)) AND EXISTS (SELECT FROM events)`;
}
const FAN_OUT_READ = fanOutRead(false);
const FAN_OUT_READ_DIRECT = fanOutRead(true);

/**
 * Fan-outs are one at a time across every relay (a transaction-level advisory lock, taken before the events are
 * read): whether a lane may be claimed at its insert is judged from the rows committed before, so two fan-outs
 * side by side could each find a lane empty and claim it twice, or one insert a lane's earlier row while the other
 * claims its later one, and their deliveries would race. A fan-out is a few milliseconds; the others wait that
 * long (ADR 0046). Its key is this lock's own (any bigint, fixed).
 */
const FAN_OUT_LOCK_KEY = '7310402615520714001';

/**
 * The longest a fan-out's transaction may sit idle (between its statements: the relay matching and planning, a
 * few ms) before Postgres ends its session. Held with the fan-out lock, a frozen relay's transaction would stop
 * every relay's fan-out.
 */
const FAN_OUT_IDLE_LIMIT = '5s';

/** The deliveries and the dispatched mark in one statement (a data-modifying CTE always runs), with the COMMIT. */
const FAN_OUT_WRITE = `WITH deliveries AS (
         INSERT INTO webhook_deliveries (webhook_id, event_id, instance_id, chat_id, event_type)
         SELECT w, e, i, c, t FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[]) AS u(w, e, i, c, t)
         ON CONFLICT (webhook_id, event_id) DO NOTHING)
       UPDATE outbox_events SET dispatched_at = now() WHERE id = ANY($6::bigint[])`;

/**
 * FAN_OUT_WRITE for a fan-out that claims (DirectFanOut): $6 is each row's `after` (the last event id of the
 * lane this relay holds, 0 when it holds none; NULL: not to be claimed), $7 the claim ms, $8 the events.
 * A row is inserted claimed when its lane has no pending row after `after` in the statement's snapshot (which
 * does not show this statement's own rows, so every row of a lane in the batch is judged alike): the lane is
 * empty, or holds only this relay's rows, which it sends in order. Any other pending row (a retrying head,
 * a backlog, another relay's rows) leaves the new rows pending behind it, for the claims. Answers the rows
 * claimed (a row that already existed, a fan-out repeated after a crash, is left as it was).
 */
const FAN_OUT_WRITE_DIRECT = `WITH candidates AS (
         SELECT w, e, i, c, t, a FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::bigint[]) AS u(w, e, i, c, t, a)),
       deliveries AS (
         INSERT INTO webhook_deliveries (webhook_id, event_id, instance_id, chat_id, event_type, claimed_until)
         SELECT r.w, r.e, r.i, r.c, r.t,
           CASE WHEN r.a IS NOT NULL AND NOT EXISTS (
               SELECT FROM webhook_deliveries d
               WHERE d.status = 'pending' AND d.webhook_id = r.w AND d.instance_id = r.i AND d.chat_id = r.c AND d.event_id > r.a)
             THEN now() + ($7 || ' milliseconds')::interval END
         FROM candidates r
         ON CONFLICT (webhook_id, event_id) DO NOTHING
         RETURNING id, webhook_id, event_id, claimed_until IS NOT NULL AS claimed),
       dispatched AS (
         UPDATE outbox_events SET dispatched_at = now() WHERE id = ANY($8::bigint[]))
     SELECT id, webhook_id, event_id FROM deliveries WHERE claimed`;

const CLAIM_DUE = `WITH RECURSIVE heads AS (
     (SELECT d.id, d.webhook_id, d.instance_id, d.chat_id, d.event_id, d.claimed_until, d.next_attempt_at
      FROM webhook_deliveries d WHERE d.status = 'pending'
      ORDER BY d.webhook_id, d.instance_id, d.chat_id, d.event_id LIMIT 1)
     UNION ALL
     SELECT n.* FROM heads h CROSS JOIN LATERAL (
       SELECT d.id, d.webhook_id, d.instance_id, d.chat_id, d.event_id, d.claimed_until, d.next_attempt_at
       FROM webhook_deliveries d
       WHERE d.status = 'pending' AND (d.webhook_id, d.instance_id, d.chat_id) > (h.webhook_id, h.instance_id, h.chat_id)
       ORDER BY d.webhook_id, d.instance_id, d.chat_id, d.event_id LIMIT 1) n),
   free AS (
     SELECT id FROM heads
     WHERE next_attempt_at <= now() AND (claimed_until IS NULL OR claimed_until < now()) AND NOT (webhook_id = ANY($3::text[]))
     ORDER BY event_id LIMIT $4),
   locked AS (
     SELECT d.id, d.webhook_id, d.instance_id, d.chat_id, d.event_id FROM webhook_deliveries d
     WHERE d.id IN (SELECT id FROM free)
       AND d.status = 'pending' AND d.next_attempt_at <= now() AND (d.claimed_until IS NULL OR d.claimed_until < now())
     FOR UPDATE SKIP LOCKED),
   runs AS (
     SELECT r.id, l.id AS head_id, l.event_id AS head_event, r.position FROM locked l CROSS JOIN LATERAL (
       SELECT q.id, q.position FROM (
         SELECT p.id, row_number() OVER lane AS position, bool_and(p.free) OVER lane AS unbroken
         FROM (
           SELECT d.id, d.webhook_id, d.instance_id, d.chat_id, d.event_id,
             (d.webhook_id = l.webhook_id AND d.instance_id = l.instance_id AND d.chat_id = l.chat_id
              AND d.next_attempt_at <= now() AND (d.claimed_until IS NULL OR d.claimed_until < now())) AS free
           FROM webhook_deliveries d
           WHERE d.status = 'pending'
             AND (d.webhook_id, d.instance_id, d.chat_id, d.event_id) >= (l.webhook_id, l.instance_id, l.chat_id, l.event_id)
           ORDER BY d.webhook_id, d.instance_id, d.chat_id, d.event_id LIMIT LEAST($5, (SELECT ceil($1::numeric / GREATEST(count(*), 1)) FROM locked))) p
         WINDOW lane AS (ORDER BY p.webhook_id, p.instance_id, p.chat_id, p.event_id)) q
       WHERE q.unbroken) r),
   ${claimRunsSql('$1', '$2')}`;

const MARK_DELIVERED = `WITH done AS (
     UPDATE webhook_deliveries d
     SET status = 'delivered', attempts = d.attempts + 1, last_status_code = ($2::int[])[array_position($1::bigint[], d.id)], claimed_until = NULL,
       finished_at = now(), latency_ms = ($3::int[])[array_position($1::bigint[], d.id)], first_attempt_at = COALESCE(d.first_attempt_at, now()),
       last_attempt_at = now()
     WHERE d.id = ANY(ARRAY(SELECT unnest($1::bigint[]))) AND d.status = 'pending'
     RETURNING d.webhook_id)
   UPDATE webhooks SET failing_since = NULL WHERE failing_since IS NOT NULL AND id IN (SELECT webhook_id FROM done)`;

const RELEASE = `UPDATE webhook_deliveries SET claimed_until = NULL WHERE id = ANY($1::bigint[]) AND status = 'pending'`;

/**
 * What warmUp plans on each connection, with values of the right types: the statements the relay runs
 * all the time. Planning them reads the catalog entries of their tables, indexes, operators and
 * functions into the backend's caches, which a fresh connection does on its first statement of each.
 */
const WARM_STATEMENTS: Array<[string, unknown[]]> = [
  [FAN_OUT_READ, [1]],
  [FAN_OUT_WRITE, [[], [], [], [], [], []]],
  [FAN_OUT_READ_DIRECT, [1]],
  [FAN_OUT_WRITE_DIRECT, [[], [], [], [], [], [], '1', []]],
  [CLAIM_DUE, [1, '1', [], 1, 1]],
  [MARK_DELIVERED, [[], [], []]],
  [MARK_DELIVERED_CLAIM_NEXT, [[], [], [], 1, '1', [], 1, []]],
  [RELEASE, [[]]],
];

/** The most connections warmUp opens: the relay's concurrency (fan-out, claim, results, a few failures) is below it. */
const WARM_CONNECTIONS = 16;

type Raw = Record<string, unknown>;

/**
 * Durable webhook deliveries.
 *
 * - Fan-out: each undispatched outbox event gets one delivery row per matching webhook, and is marked
 *   dispatched, in one transaction (`SKIP LOCKED` lets several relays fan out side by side). A crash
 *   before commit leaves the event undispatched: it is fanned out again, and `UNIQUE (webhook_id,
 *   event_id)` absorbs a repeat.
 * - Lanes: deliveries of one (webhook, instance, chat) go out in outbox (`event_id`) order. Only a
 *   lane's head, its oldest pending delivery, can be claimed, so a retrying head holds its lane back
 *   and nothing overtakes it. Whoever claims the head may claim the deliveries right behind it too
 *   (a "run"), to send them one after the other, never two of a lane at once.
 * - Claims: a claim sets `claimed_until`; a relay that dies mid-request leaves the claim to lapse and
 *   the delivery is sent again (same `webhook-id`, so receivers can deduplicate).
 * - Results are recorded in batches: one statement for many delivered rows.
 */
export class DeliveryRepository extends RepositoryBase {
  private readonly outbox = new OutboxRepository(this.dataSource);

  /**
   * Opens the pool's connections (WARM_CONNECTIONS at most) and plans the relay's statements on each (EXPLAIN: nothing
   * runs), so that the relay's first second is not spent on it. A fresh connection costs its first
   * statement of each kind 10-50 ms of planning (the catalog read into that backend's caches; the
   * claim: 50 ms cold, 1 ms warm, EXPLAIN ANALYZE on a bench schema), and the relay's statements land
   * on its 12 connections one after the other as its concurrency grows: bench/webhooks measured
   * p99 370-630 ms over its first 1.5 s, ~40 ms after. Answers how many connections it warmed.
   */
  async warmUp(): Promise<number> {
    const pool = (this.dataSource.driver as unknown as { master?: { options?: { max?: number } } }).master;
    // At most WARM_CONNECTIONS: a pool sized far beyond the relay's needs (DATABASE_POOL_SIZE) would
    // otherwise take that many of the server's connections at once, which lazily it never reaches.
    const size = Math.min(pool?.options?.max ?? 10, WARM_CONNECTIONS);
    const runners = Array.from({ length: size }, () => this.dataSource.createQueryRunner());
    try {
      // All held at once: each is a connection of its own.
      await Promise.all(runners.map((runner) => runner.connect()));
      await Promise.all(
        runners.map(async (runner) => {
          for (const [text, values] of WARM_STATEMENTS) await runner.query(`EXPLAIN ${text}`, values);
        }),
      );
    } finally {
      await Promise.all(runners.map((runner) => runner.release()));
    }
    return size;
  }

  /**
   * Fans out up to `limit` undispatched outbox events in one transaction of two round trips: the
   * events and the targets they may go to (with the START TRANSACTION: FAN_OUT_READ), then the
   * deliveries and the dispatched mark (with the COMMIT). Answers how many events it took, how many deliveries it made, and their webhooks.
   * `match` sees each event with only the payload fields the filters read (FILTER_FIELDS).
   *
   * One fan-out at a time across the relays (FAN_OUT_LOCK_KEY). With `direct`, fan-out also claims what its relay
   * may send at once (DirectFanOut, ADR 0046): the events read with their payloads' text, and the claimed rows
   * answered as claims, each with its event as a claim statement would return it.
   *
   * The events are read by a plain index scan in id order, which stops after `limit` rows and marks
   * the dead entries it passes (bitmap scans off for the transaction): the planner chose a bitmap scan
   * of the whole partial index, which read every heap page of the events dispatched since the table's
   * last vacuum, on every fan-out, and sorted them (20 ms against 0.5 ms with 10,000 dispatched events
   * waiting for a vacuum), so a fan-out cost more the longer the relay ran.
   */
  async fanOut(limit: number, match: (event: OutboxEvent, webhooks: FanOutTarget[]) => FanOutTarget[], direct?: DirectFanOut): Promise<FanOutResult> {
    let result: FanOutResult = { events: 0, deliveries: 0, webhookIds: new Set<string>(), pendingWebhookIds: new Set<string>(), leftPending: [], claims: [] };
    /** The events read, as rows: a claimed delivery's event is made from its row (claimedEvent). */
    const rowsById = new Map<string, Raw>();
    await pipelinedTransaction(
      this.dataSource,
      // Every fan-out takes the lock, claiming or not: a relay with WEBHOOK_DIRECT=false beside claiming ones must
      // not insert a lane's earlier rows while one of them judges the lane. A relay that stops answering inside it
      // (frozen, cut off from Postgres) loses its session after FAN_OUT_IDLE_LIMIT, and with it the lock: the other
      // relays' fan-outs wait that long at most.
      () =>
        `START TRANSACTION; SET LOCAL enable_bitmapscan = off; SET LOCAL lock_timeout = '10s'; ` +
        `SET LOCAL idle_in_transaction_session_timeout = '${FAN_OUT_IDLE_LIMIT}'; SELECT pg_advisory_xact_lock(${FAN_OUT_LOCK_KEY})`,
      async (manager) => {
        const raw: Raw[] = await manager.query(direct ? FAN_OUT_READ_DIRECT : FAN_OUT_READ, [limit]);
        const events: OutboxEvent[] = [];
        const webhooks: FanOutTarget[] = [];
        for (const row of raw) {
          if (row.target) webhooks.push(row.target as FanOutTarget);
          else {
            events.push(toEvent(row));
            if (direct) rowsById.set(String(row.id), row);
          }
        }
        if (events.length === 0) return null;
        const columns = { webhook: [] as string[], event: [] as string[], instance: [] as string[], chat: [] as string[], type: [] as string[] };
        const candidates: FanOutCandidate[] = [];
        // Each event is matched against the global targets and its own instance's, not every target of the
        // batch: with a webhook per instance, a batch of 500 events from as many instances compared each
        // event with ~500 targets (bench/webhooks with 2,000 webhooks, issue #38).
        const byInstance = new Map<string | null, FanOutTarget[]>();
        for (const webhook of webhooks) {
          const own = byInstance.get(webhook.instanceId);
          if (own) own.push(webhook);
          else byInstance.set(webhook.instanceId, [webhook]);
        }
        const globals = byInstance.get(null) ?? [];
        for (const event of events) {
          const own = byInstance.get(event.instanceId) ?? [];
          const targets = own.length === 0 ? globals : globals.length === 0 ? own : [...globals, ...own];
          if (targets.length === 0) continue;
          for (const webhook of match(event, targets)) {
            // A webhook's lanes are per chat; a broker sink keeps one lane per instance, so its
            // consumers (and Kafka's partition by instance) see each instance's events in order.
            const laneChatId = webhook.kind === 'webhook' || !webhook.kind ? event.chatId : '';
            columns.webhook.push(webhook.id);
            columns.event.push(event.id);
            columns.instance.push(event.instanceId);
            columns.chat.push(laneChatId);
            columns.type.push(event.eventType);
            candidates.push({ webhookId: webhook.id, event, laneChatId });
          }
        }
        // Each candidate's `after`, null where it is not offered for claiming (every one without `direct`).
        const offers = direct && candidates.length > 0 ? await direct.plan(candidates) : [];
        const after = candidates.map((_, index) => offers[index] ?? null);
        const pendingWebhookIds = new Set<string>();
        candidates.forEach((candidate, index) => {
          if (after[index] === null) pendingWebhookIds.add(candidate.webhookId);
        });
        result = {
          events: events.length,
          deliveries: columns.webhook.length,
          webhookIds: new Set(columns.webhook),
          pendingWebhookIds,
          leftPending: [],
          claims: [],
        };
        return { columns, after, candidates, ids: events.map((event) => event.id) };
      },
      // The deliveries and the dispatched mark in one statement (a data-modifying CTE always runs), with the COMMIT.
      (read) =>
        read &&
        (direct
          ? {
              text: FAN_OUT_WRITE_DIRECT,
              values: [
                read.columns.webhook,
                read.columns.event,
                read.columns.instance,
                read.columns.chat,
                read.columns.type,
                read.after,
                String(direct.claimMs),
                read.ids,
              ],
              rows: (rows) => {
                const claimed = rows as Raw[];
                result.claims = claimed.map((row) => {
                  const deliveryId = String(row.id);
                  const event = claimedEvent({ ...rowsById.get(String(row.event_id)), event_id: row.event_id });
                  return { deliveryId, attempt: 1, event, webhookId: row.webhook_id as string, headId: deliveryId, position: 1 };
                });
                // A lane's rows that were not claimed (another pending row found in the statement) are pending: for the claims.
                const offered = read.after.filter((after) => after !== null).length;
                // Every offered row claimed (the usual case): none left pending to look for.
                if (claimed.length === offered) return;
                const claimedIds = new Set(claimed.map((row) => `${row.webhook_id as string} ${String(row.event_id)}`));
                read.candidates.forEach((candidate, index) => {
                  if (read.after[index] !== null && !claimedIds.has(`${candidate.webhookId} ${candidate.event.id}`)) {
                    result.pendingWebhookIds.add(candidate.webhookId);
                    result.leftPending.push(candidate);
                  }
                });
              },
            }
          : {
              text: FAN_OUT_WRITE,
              values: [read.columns.webhook, read.columns.event, read.columns.instance, read.columns.chat, read.columns.type, read.ids],
            }),
    );
    // In event order (the rows come back in insert order, which follows the candidates'), each lane's in its own order.
    result.claims.sort((a, b) => compareIds(a.event.id, b.event.id));
    return result;
  }

  /**
   * Claims, in one statement, the heads of up to `options.lanes` lanes that are due and not claimed,
   * and behind each head up to `perLane` deliveries of its lane in order (at most `limit` in all,
   * taken breadth first so every lane keeps an unbroken prefix). The claimer must send a lane's
   * deliveries one after the other and stop at the first failure.
   *
   * The lane heads come from walking `webhook_deliveries_lanes` one lane at a time (a recursive CTE:
   * one index probe per lane), so the cost follows the number of lanes, not the backlog behind them.
   * A run reads the index from its head onwards as a range (the rows after the lane's last one belong
   * to the next lane and end the run): an equality on the lane let the planner, which cannot see that
   * a webhook belongs to one instance, read a lane's whole backlog and sort it (240 vs 83 ms for 500
   * rows out of 50k pending). Heads are locked `FOR UPDATE SKIP LOCKED`: two relays claiming at once
   * take different lanes. A run reads no further than the claim can use when every lane gets its share
   * (`limit` over the lanes locked): 200 lanes with a run of 20 read 4,000 rows for a claim of 500, and
   * the claim touched 15-20 % more buffers for it (EXPLAIN on a bench schema).
   *
   * The rows picked are updated by id through the primary key (`= ANY(ARRAY(SELECT …))`, whose size the
   * planner cannot guess): joined with the picked rows, the planner hashed them against a sequential scan
   * of every pending delivery, 7-10 ms of a 25 ms claim of 500 with 20,000 pending (EXPLAIN ANALYZE on a
   * bench schema), growing with the backlog.
   */
  async claimDue(limit: number, claimMs: number, options: ClaimOptions = {}): Promise<DeliveryClaim[]> {
    const rows: Raw[] = await this.db.query(CLAIM_DUE, [
      limit,
      String(claimMs),
      options.excludeWebhooks ?? [],
      Math.max(1, options.lanes ?? limit),
      Math.max(1, options.perLane ?? 1),
    ]);
    return rows.map(toClaim);
  }

  /**
   * Records many successful deliveries in one statement: each is done (its attempt counted, with the
   * delivery log's latency and attempt times: columns of the row it updates anyway, none indexed; the
   * update is not HOT all the same, because `status` is in `webhook_deliveries_lanes`' predicate: ADR
   * 0044), and their webhooks are no longer failing (only written when one was).
   * The rows are found by the primary key (`= ANY(ARRAY(SELECT …))`): with only the join on the ids,
   * a batch of a few hundred was hashed against a sequential scan of every pending delivery (12 ms of
   * the statement for 500 rows with 20,000 pending, against 1 ms); with the ids as a visible array, the
   * planner combined the primary key with the lanes index and read all of that index. Each row's code and
   * latency are looked up by its id's position in the arrays (a join with `unnest` compared every id with every row).
   */
  async markDelivered(results: DeliveredResult[]): Promise<void> {
    if (results.length === 0) return;
    await this.db.query(MARK_DELIVERED, [
      results.map((result) => result.deliveryId),
      results.map((result) => result.statusCode),
      results.map((result) => (result.latencyMs === undefined ? null : Math.round(result.latencyMs))),
    ]);
  }

  /**
   * markDelivered, and in the same statement the next run of each lane those successes moved on (up to
   * `options.perLane` a lane, `limit` in all, lanes of `options.excludeWebhooks` left alone), claimed as
   * claimDue claims: from the lane's head, unbroken, each row checked again as it is updated. One
   * statement for what took two, and the claim probes only these lanes instead of walking every lane
   * with pending rows (see delivery-continuation.ts).
   */
  async markDeliveredAndClaimNext(results: DeliveredResult[], limit: number, claimMs: number, options: ClaimOptions = {}): Promise<DeliveryClaim[]> {
    if (results.length === 0) return [];
    const rows: Raw[] = await this.db.query(MARK_DELIVERED_CLAIM_NEXT, [
      results.map((result) => result.deliveryId),
      results.map((result) => result.statusCode),
      results.map((result) => (result.latencyMs === undefined ? null : Math.round(result.latencyMs))),
      Math.max(0, limit),
      String(claimMs),
      options.excludeWebhooks ?? [],
      Math.max(1, options.perLane ?? 1),
      results.map((result) => result.endsRun !== false),
    ]);
    return rows.map(toClaim);
  }

  /**
   * A failed attempt (counted): retried at `retryAt`, or finally failed when null, with the delivery
   * log's latency (when given) and attempt times. Returns when the webhook started failing (kept
   * across attempts until a success).
   */
  async markAttemptFailed(
    deliveryId: string,
    webhookId: string,
    statusCode: number | null,
    error: string,
    retryAt: Date | null,
    latencyMs?: number,
  ): Promise<Date> {
    const rows: Raw[] = await this.db.query(
      `WITH attempt AS (
         UPDATE webhook_deliveries SET status = $2, attempts = attempts + 1, last_status_code = $3, last_error = $4, claimed_until = NULL,
           next_attempt_at = COALESCE($5, next_attempt_at), finished_at = CASE WHEN $5::timestamptz IS NULL THEN now() END,
           latency_ms = $7, first_attempt_at = COALESCE(first_attempt_at, now()), last_attempt_at = now()
         WHERE id = $1 AND status = 'pending'),
       webhook AS (
         UPDATE webhooks SET failing_since = COALESCE(failing_since, now()) WHERE id = $6 RETURNING failing_since)
       SELECT failing_since FROM webhook`,
      [
        deliveryId,
        retryAt ? 'pending' : 'failed',
        statusCode,
        error.slice(0, 1000),
        retryAt,
        webhookId,
        latencyMs === undefined ? null : Math.round(latencyMs),
      ],
    );
    return (rows[0]?.failing_since as Date) ?? new Date();
  }

  /**
   * Stops a webhook (410 Gone, or failing too long) and gives up its pending deliveries. With `announce`
   * (the relay disabling it on its own), a `webhook` `Disabled` event is written in the same transaction
   * (contracts WebhookEventPayload), once: only by the call that turned it off. Returns that event's
   * outbox id and instance (to announce on the bus), or null.
   */
  async disableWebhook(webhookId: string, reason: string, announce?: { failingSince: Date | null }): Promise<{ instanceId: string; lastId: string } | null> {
    return this.transaction(async (manager) => {
      let event: { instanceId: string; lastId: string } | null = null;
      if (announce) {
        const turnedOff: Raw[] = await manager.query(
          `WITH off AS (UPDATE webhooks SET enabled = false, disabled_reason = $2, updated = now() WHERE id = $1 AND enabled RETURNING url, instance_id)
           SELECT off.url, off.instance_id, i.name AS instance_name, i.owner FROM off LEFT JOIN instances i ON i.id = off.instance_id`,
          [webhookId, reason],
        );
        if (turnedOff.length) {
          const row = turnedOff[0];
          const instanceId = (row.instance_id as string | null) ?? '';
          const payload: WebhookEventPayload = {
            EventType: 'webhook',
            type: 'Disabled',
            webhook: {
              id: webhookId,
              url: maskUrlCredentials(row.url as string),
              global: row.instance_id === null,
              reason,
              failingSince: announce.failingSince ? announce.failingSince.toISOString() : null,
            },
            instanceName: (row.instance_name as string | null) ?? '',
            owner: (row.owner as string | null) ?? '',
          };
          const lastId = await this.outbox.within(manager).insert(instanceId, [{ eventType: 'webhook', payload }]);
          if (lastId) event = { instanceId, lastId };
        }
      } else {
        await manager.query(`UPDATE webhooks SET enabled = false, disabled_reason = $2, updated = now() WHERE id = $1`, [webhookId, reason]);
      }
      await manager.query(
        `UPDATE webhook_deliveries SET status = 'discarded', claimed_until = NULL, finished_at = now() WHERE webhook_id = $1 AND status = 'pending'`,
        [webhookId],
      );
      return event;
    });
  }

  /** Lets go of claims not sent (relay stopping, a lane's run cut short): another pass takes them again. */
  async release(deliveryIds: string[]): Promise<void> {
    if (deliveryIds.length === 0) return;
    await this.db.query(RELEASE, [deliveryIds]);
  }

  async logError(record: DeliveryErrorRecord): Promise<void> {
    await this.db.query(
      `INSERT INTO webhook_errors (webhook_id, instance_id, global, url, event, message_type, status_code, attempts, error, payload, kind)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [
        record.webhookId,
        record.instanceId,
        record.global,
        record.url,
        record.event,
        record.messageType,
        record.statusCode,
        record.attempts,
        record.error.slice(0, 1000),
        JSON.stringify(record.payload),
        record.kind ?? 'webhook',
      ],
    );
  }

  /** The newest delivery errors of an instance's webhooks (or sinks of `kind`), or of the global ones. */
  async recentErrors(
    scope: { instanceId: string } | { global: true },
    limit = 20,
    kind: SinkKind = 'webhook',
  ): Promise<Array<DeliveryErrorRecord & { created: Date }>> {
    const rows: Raw[] =
      'global' in scope
        ? await this.db.query(`SELECT * FROM webhook_errors WHERE global AND kind = $2 ORDER BY id DESC LIMIT $1`, [limit, kind])
        : await this.db.query(`SELECT * FROM webhook_errors WHERE NOT global AND instance_id = $1 AND kind = $3 ORDER BY id DESC LIMIT $2`, [
            scope.instanceId,
            limit,
            kind,
          ]);
    return rows.map((row) => ({
      webhookId: row.webhook_id as string,
      kind: ((row.kind as SinkKind | undefined) ?? 'webhook') as SinkKind,
      instanceId: (row.instance_id as string | null) ?? null,
      global: row.global as boolean,
      url: row.url as string,
      event: row.event as string,
      messageType: row.message_type as string,
      statusCode: (row.status_code as number | null) ?? null,
      attempts: Number(row.attempts),
      error: row.error as string,
      payload: row.payload as Record<string, unknown>,
      created: row.created as Date,
    }));
  }

  async countByStatus(): Promise<Record<string, number>> {
    const rows: Raw[] = await this.db.query(`SELECT status, count(*)::int AS n FROM webhook_deliveries GROUP BY status`);
    return Object.fromEntries(rows.map((row) => [row.status as string, Number(row.n)]));
  }
}

/** A row of a claim statement (CLAIM_COLUMNS). */
function toClaim(row: Raw): DeliveryClaim {
  return {
    deliveryId: String(row.id),
    webhookId: row.webhook_id as string,
    attempt: Number(row.attempts) + 1,
    headId: String(row.head_id),
    position: Number(row.position),
    event: claimedEvent(row),
  };
}

/** A claimed event: its payload's JSON text, and `payload` parsed from it on first read only (most deliveries never read it). */
function claimedEvent(row: Raw): OutboxEvent {
  const payloadJson = row.payload_json as string;
  let payload: Record<string, unknown> | undefined;
  const event = {
    id: String(row.event_id),
    instanceId: row.instance_id as string,
    eventType: row.event_type as string,
    chatId: (row.chat_id as string) ?? '',
    payloadJson,
    traceparent: (row.traceparent as string | null) ?? null,
  } as OutboxEvent;
  Object.defineProperty(event, 'payload', {
    enumerable: true,
    get: () => (payload ??= JSON.parse(payloadJson) as Record<string, unknown>),
  });
  return event;
}

/** Bigint ids as text, in numeric order. */
function compareIds(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}

function toEvent(row: Raw): OutboxEvent {
  return {
    id: String(row.id),
    instanceId: row.instance_id as string,
    eventType: row.event_type as string,
    chatId: (row.chat_id as string) ?? '',
    payload: row.payload as Record<string, unknown>,
  };
}
