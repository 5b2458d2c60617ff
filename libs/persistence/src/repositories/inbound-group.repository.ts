import { PREPARED } from '../preparing-client';
import { compareKeys } from '../group-commit';
import { ChatRepository } from './chat.repository';
import { ContactRepository, type ContactRow } from './contact.repository';
import {
  CHAT_COLUMNS,
  observationAssignments,
  observationSql,
  observationValues,
  toChatRow,
  type ChatObservation,
  type ChatRow,
  type ObservationExpressions,
} from './chat-row';
import {
  ADVANCE_STATUS_SQL,
  COLUMNS,
  FINAL_SQL,
  messageDocument,
  RANK_SQL,
  REFRESH_SQL,
  STATUS_RANK,
  toMessageRow,
  type MessageRow,
  type NewMessage,
  type Raw,
  type StatusChange,
} from './message-row';
import { RepositoryBase } from './repository-base';

/** A copy of our own message as stored: null when a copy was stored already (nothing changed). */
export type OwnCopy = { row: MessageRow; created: boolean; advanced: boolean } | null;

/** The hot inbound writes of one round of a group transaction, at most one of each instance (see write). */
export interface InboundGroupWrites {
  /** Receipts: these messages move forward to `status` (never back; Failed, Canceled and Deleted are final). */
  statuses?: ReadonlyArray<{ instanceId: string; messageIds: string[]; status: string }>;
  /** Copies of messages, received or our own (storeOwnCopy each); `advanced` is read for our own only. */
  copies?: ReadonlyArray<NewMessage>;
  /** Chats' last-message updates (ChatRepository.observe each). */
  chats?: ReadonlyArray<{ instanceId: string; observation: ChatObservation; newId: () => string }>;
  /** Received messages' authors as their push names show them (ContactRepository.observe each). */
  senders?: ReadonlyArray<{ instanceId: string; pn: string; lid: string; pushName: string }>;
}

export interface InboundGroupResults {
  /** The messages whose status changed, with what a receipt's event reads of them. */
  statuses: StatusChange[];
  /** In the order of `copies`. */
  copies: OwnCopy[];
  /** In the order of `chats`: each chat's row afterwards. */
  chats: ChatRow[];
  /** In the order of `senders`: each sender's contact afterwards, and whether this observation changed it. */
  senders: Array<{ contact: ContactRow; changed: boolean }>;
}

/** A round's kinds, as the bits of the statement that writes them (one text per combination). */
const KIND = { status: 1, copy: 2, chat: 4 } as const;
const names = COLUMNS.map(([, column]) => column);
/** The columns of a copy in the statement's answer (toMessageRow reads them). */
const MESSAGE_COLUMNS = [...names, 'created_at', 'updated_at'];
/** What a receipt's status change answers (StatusChange). */
const STATUS_COLUMNS = ['instance_id', 'message_id', 'chat_id', 'chat_lid', 'from_me', 'is_group', 'status'];
/** A chat's columns carry this prefix in the answer (they share names with the message's). */
const CHAT = 'h_';

/** Each kind's CTEs, its parameters from `$first` on (how many: `parameters`), and its branch of the answer. */
interface KindSql {
  parameters: number;
  /** `gate`: a condition its writes wait for (the round's row locks, see statementFor), or null. */
  ctes: (first: number, gate: string | null) => string;
  /** The answer's columns for this kind's rows; `columns` are the answer's (every kind of the round's). */
  select: (columns: AnswerColumns) => string;
}

/** The answer's columns beyond `kind`: a message's (the copy's all, or a receipt's few), a copy's two, a chat's ordinal and columns. */
interface AnswerColumns {
  message: string[];
  copy: boolean;
  chat: boolean;
}

/**
 * One branch of the UNION: `kind`, then every answer column, NULL (of the column's own type) where
 * this kind has no value, so the branches line up.
 */
function branch(
  kind: number,
  columns: AnswerColumns,
  values: { message?: (column: string) => string | null; created?: string; prior?: string; ord?: string; chat?: string },
): string {
  const list = [`${kind} AS kind`];
  for (const column of columns.message) list.push(`${values.message?.(column) ?? `(NULL::messages).${column}`} AS ${column}`);
  if (columns.copy) list.push(`${values.created ?? 'NULL::boolean'} AS created`, `${values.prior ?? 'NULL::text'} AS prior_status`);
  if (columns.chat) {
    list.push(`${values.ord ?? 'NULL::bigint'} AS ord`);
    for (const column of CHAT_COLUMNS) list.push(`${values.chat ? `${values.chat}.${column}` : `(NULL::chats).${column}`} AS ${CHAT}${column}`);
  }
  return `SELECT ${list.join(', ')}`;
}

const STATUS_SQL: KindSql = {
  parameters: 4,
  ctes: (p, gate) => `s_input AS (
    SELECT * FROM unnest((SELECT $${p}::text[]), (SELECT $${p + 1}::text[]), (SELECT $${p + 2}::text[]), (SELECT $${p + 3}::int[])) AS u(i_instance, i_message, i_status, i_rank)),
  s_changed AS (
    UPDATE messages SET status = s_input.i_status, updated_at = now() FROM s_input
    WHERE messages.instance_id = s_input.i_instance AND messages.message_id = s_input.i_message AND ${RANK_SQL} < s_input.i_rank AND ${FINAL_SQL}${gate ? ` AND ${gate}` : ''}
    RETURNING ${STATUS_COLUMNS.map((column) => `messages.${column}`).join(', ')})`,
  select: (columns) =>
    `${branch(KIND.status, columns, { message: (column) => (STATUS_COLUMNS.includes(column) ? `s_changed.${column}` : null) })} FROM s_changed`,
};

const COPY_SQL: KindSql = {
  parameters: 3,
  // The prior status of our own messages' copies (the keys given: a received message has no reserved row
  // to advance), one lookup by key each. A join of the keys with `messages` let the generic plan, made
  // while the table was empty, read the whole table for every round (bench/inbound: 4.9 million buffers
  // in 129 rounds); on a near-empty table any index led by instance_id ties with the key's, so a lookup
  // may still read an instance's messages until the table is analyzed, but only for our own copies.
  ctes: (p, gate) => `c_prior AS (
    SELECT k.instance_id, k.message_id, m.status
    FROM unnest((SELECT $${p}::text[]), (SELECT $${p + 1}::text[])) AS k(instance_id, message_id)
    JOIN LATERAL (SELECT m.status FROM messages m WHERE m.instance_id = k.instance_id AND m.message_id = k.message_id LIMIT 1) m ON true),
  c_upserted AS (
    -- The copies travel as one JSON document read with the table's own row type: the same text for any number.
    INSERT INTO messages (${names.join(', ')})
    SELECT ${names.map((column) => `input.${column}`).join(', ')} FROM jsonb_populate_recordset(NULL::messages, $${p + 2}::jsonb) AS input${gate ? ` WHERE ${gate}` : ''}
    ON CONFLICT (instance_id, message_id) DO UPDATE SET
      ${REFRESH_SQL},
      ${ADVANCE_STATUS_SQL},
      updated_at = now()
    WHERE messages.raw IS NULL
    RETURNING *, (xmax = 0) AS created)`,
  select: (columns) =>
    `${branch(KIND.copy, columns, { message: (column) => `c_upserted.${column}`, created: 'c_upserted.created', prior: 'c_prior.status' })}
    FROM c_upserted LEFT JOIN c_prior ON c_prior.instance_id = c_upserted.instance_id AND c_prior.message_id = c_upserted.message_id`,
};

/** The types of h_input's columns, one parameter (an array) each: instance, pn, lid, then observationValues(). */
const H_INPUT_TYPES = ['text', 'text', 'text', 'text', 'text', 'bigint', 'text', 'text', 'text', 'int', 'int'];

/** An observation's fields as the columns of an h_input row (`u`: h_input itself, or h_seq, which carries them). */
const INPUT_FIELDS: ObservationExpressions = {
  pn: 'u.i_pn',
  lid: 'u.i_lid',
  name: 'u.i_name',
  contact: 'u.i_contact',
  ts: 'u.i_ts',
  type: 'u.i_type',
  text: 'u.i_text',
  sender: 'u.i_sender',
  incoming: 'u.i_incoming',
  ephemeral: 'u.i_ephemeral',
};

/** What an observation of h_input does to a chat: its assignments over the columns of h_seq (`u`). */
const FOLD_ASSIGNMENTS = new Map(observationAssignments(INPUT_FIELDS).map(([column, type, value]) => [column, { type, value }]));
/** A step of h_fold: the columns answered, and every column an observation reads or sets. */
const FOLD_COLUMNS = [...new Set([...CHAT_COLUMNS, ...FOLD_ASSIGNMENTS.keys()])];

const CHAT_SQL: KindSql = {
  parameters: H_INPUT_TYPES.length,
  ctes: (p) => `h_input AS (
    SELECT * FROM unnest(${H_INPUT_TYPES.map((type, n) => `(SELECT $${p + n}::${type}[])`).join(', ')})
      WITH ORDINALITY AS u(i_instance, i_pn, i_lid, i_name, i_contact, i_ts, i_type, i_text, i_sender, i_incoming, i_ephemeral, i_ord)),
  h_target AS (
    -- Known only: the one row matching either identifier, already holding every identifier given.
    -- A lookup per observation by the partial unique indexes (the column's own <> '' lets a generic
    -- plan use them; OFFSET 0 keeps the planner from turning it into a hash join over every chat).
    SELECT u.i_ord, (array_agg(c.id))[1] AS id FROM h_input u
    JOIN LATERAL (
      SELECT id, wa_chatid, wa_chatlid FROM chats
      WHERE instance_id = u.i_instance
        AND ((wa_chatid = u.i_pn AND wa_chatid <> '' AND u.i_pn <> '') OR (wa_chatlid = u.i_lid AND wa_chatlid <> '' AND u.i_lid <> ''))
      OFFSET 0) c ON true
    GROUP BY u.i_ord
    HAVING count(*) = 1 AND bool_and((c.wa_chatid = u.i_pn OR u.i_pn = '') AND (c.wa_chatlid = u.i_lid OR u.i_lid = ''))),
  h_single AS (
    -- A chat two observations of the round found (a busy chat's messages, or one chat named by its JID
    -- in one and its LID in the other) is left to h_fold, which applies them in order and writes it once:
    -- a row changed twice in one statement would keep only one change.
    SELECT t.i_ord, t.id FROM h_target t WHERE t.id IN (SELECT id FROM h_target GROUP BY id HAVING count(*) = 1)),
  h_changed AS (
    UPDATE chats SET ${observationSql(INPUT_FIELDS)}
    FROM h_single t JOIN h_input u ON u.i_ord = t.i_ord
    WHERE chats.instance_id = u.i_instance AND chats.id = t.id
      AND (chats.wa_chatid = u.i_pn OR u.i_pn = '') AND (chats.wa_chatlid = u.i_lid OR u.i_lid = '')
    RETURNING t.i_ord AS batch_ord, chats.*),
  h_shared AS (
    -- The observations h_single left out: each found its chat, stored with exactly its identifiers, as
    -- another observation of the round did (a busy chat's messages in one wave).
    SELECT t.i_ord, t.id FROM h_target t WHERE NOT EXISTS (SELECT 1 FROM h_single s WHERE s.i_ord = t.i_ord)),
  h_seq AS (
    -- Each shared chat's observations numbered 1, 2, … in the round's order.
    SELECT u.*, s.id AS i_chat, row_number() OVER (PARTITION BY u.i_instance, s.id ORDER BY s.i_ord) AS i_seq
    FROM h_shared s JOIN h_input u ON u.i_ord = s.i_ord),
  h_locked AS (
    -- Locked first, so the fold starts from the row as it is now (a change committed since the
    -- statement's snapshot included), as an UPDATE of it would.
    SELECT * FROM chats WHERE (instance_id, id) IN (SELECT i_instance, i_chat FROM h_seq) FOR UPDATE),
  h_fold AS (
    -- Step n is the row after the chat's n-th observation: each applied to the row the one before left,
    -- what one UPDATE per observation, in order, would have answered.
    SELECT 0::bigint AS i_seq, NULL::bigint AS i_ord, ${FOLD_COLUMNS.join(', ')} FROM h_locked
    UNION ALL
    SELECT u.i_seq, u.i_ord, ${FOLD_COLUMNS.map((column) => {
      const assigned = FOLD_ASSIGNMENTS.get(column);
      return assigned ? `(${assigned.value})::${assigned.type} AS ${column}` : `f.${column}`;
    }).join(', ')}
    FROM h_fold f JOIN h_seq u ON u.i_instance = f.instance_id AND u.i_chat = f.id AND u.i_seq = f.i_seq + 1),
  h_folded AS (
    -- Each shared chat takes its last step in one write.
    UPDATE chats SET ${[...FOLD_ASSIGNMENTS.keys()].map((column) => `${column} = l.${column}`).join(', ')}
    FROM (SELECT DISTINCT ON (instance_id, id) * FROM h_fold ORDER BY instance_id, id, i_seq DESC) l
    WHERE chats.instance_id = l.instance_id AND chats.id = l.id AND l.i_seq > 0
    RETURNING 1)`,
  select: (columns) =>
    `${branch(KIND.chat, columns, { ord: 'h_changed.batch_ord', chat: 'h_changed' })} FROM h_changed
  UNION ALL
  ${branch(KIND.chat, columns, { ord: 'h_fold.i_ord', chat: 'h_fold' })} FROM h_fold WHERE h_fold.i_seq > 0`,
};

const statements = new Map<number, string>();

/**
 * The statement of a round holding `kinds` (bits of KIND): each kind present as data-modifying CTEs
 * over arrays, its parameters after the previous kind's, the answer a UNION of their rows. A kind
 * that is absent is not in the text (its empty CTEs would still be set up and run on every round),
 * so there are at most seven texts, each prepared once per connection. No two CTEs touch one row (a
 * row changed twice in one statement would keep only one change): a round holds one instance's writes
 * of different messages only (InboundStore's waves), and a chat found by two observations is left out
 * (h_single).
 *
 * The arrays are read through scalar subqueries, `unnest((SELECT $1::text[]))`: unnest of a known array
 * estimates its real length, so a plan made for each round's sizes always looked cheaper than the
 * generic one, and Postgres planned every round again (~1 ms of its CPU each). Behind a subquery every
 * plan estimates the same rows, and the generic plan is kept after the first five.
 */
function statementFor(kinds: number): string {
  let text = statements.get(kinds);
  if (text) return text;
  const present = [
    [KIND.status, STATUS_SQL],
    [KIND.copy, COPY_SQL],
    [KIND.chat, CHAT_SQL],
  ].filter(([bit]) => kinds & (bit as number)) as Array<[number, KindSql]>;
  const columns: AnswerColumns = {
    message: kinds & KIND.copy ? MESSAGE_COLUMNS : kinds & KIND.status ? STATUS_COLUMNS : [],
    copy: Boolean(kinds & KIND.copy),
    chat: Boolean(kinds & KIND.chat),
  };
  const firsts: number[] = [];
  let next = 1;
  for (const [, sql] of present) {
    firsts.push(next);
    next += sql.parameters;
  }
  // Receipts and copies in one round update message rows in two scans, each in key order but one after the
  // other, while the send ledger's results lock theirs in one key order (GroupCommit): a receipt's row after a
  // copy's could deadlock with them (bench/send: 40P01, a send waiting out the 1 s deadlock_timeout). So a
  // round with both first locks every existing row it touches in that one order (C collation: the code-unit
  // order of the ledger's keys), and both writes wait for it.
  const both = (kinds & KIND.status) !== 0 && (kinds & KIND.copy) !== 0;
  const statusAt = firsts[present.findIndex(([bit]) => bit === KIND.status)];
  const copyAt = firsts[present.findIndex(([bit]) => bit === KIND.copy)];
  const lock = both
    ? `g_lock AS (
    SELECT m.instance_id FROM messages m
    JOIN (SELECT * FROM unnest((SELECT $${statusAt}::text[]), (SELECT $${statusAt + 1}::text[]))
          UNION SELECT * FROM unnest((SELECT $${copyAt}::text[]), (SELECT $${copyAt + 1}::text[]))) AS k(instance_id, message_id)
      ON m.instance_id = k.instance_id AND m.message_id = k.message_id
    ORDER BY m.instance_id COLLATE "C", m.message_id COLLATE "C"
    FOR UPDATE OF m)`
    : null;
  const gate = both ? '(SELECT count(*) FROM g_lock) >= 0' : null;
  const ctes = [...(lock ? [lock] : []), ...present.map(([, sql], index) => sql.ctes(firsts[index], gate))];
  // RECURSIVE for h_fold (a chat's observations applied one after the other).
  text = `${PREPARED} WITH ${kinds & KIND.chat ? 'RECURSIVE ' : ''}${ctes.join(',\n  ')}\n  ${present.map(([, sql]) => sql.select(columns)).join('\n  UNION ALL\n  ')}`;
  statements.set(kinds, text);
  return text;
}

/**
 * The inbound group transaction's hot writes (ADR 0013, 0017, 0019): a round of receipts, own copies
 * and chat updates of many instances in ONE statement, one round trip to Postgres instead of one per
 * kind.
 */
export class InboundGroupRepository extends RepositoryBase {
  private readonly chats = new ChatRepository(this.dataSource);
  private readonly contacts = new ContactRepository(this.dataSource);

  /**
   * Writes one round. Each kind's rows are those of its own statement before (the same SQL, CTEs
   * now): a status only moves forward; a copy is stored once (null when it was: Baileys emits some
   * messages twice) and moves the row the send reserved forward to its status (`advanced` when it
   * changed); a chat stored with exactly the observation's identifiers takes its update in the
   * statement, any other (create, merge, learn a LID) then goes through ChatRepository's locked path
   * on its own, as does a second chat of one instance (it must see the first one's change).
   */
  async write(writes: InboundGroupWrites): Promise<InboundGroupResults> {
    const manager = this.db;
    const chatsHere = this.alongside(this.chats);
    const statuses = (writes.statuses ?? []).flatMap((item) =>
      STATUS_RANK[item.status] === undefined ? [] : item.messageIds.map((messageId) => ({ ...item, messageId, rank: STATUS_RANK[item.status] })),
    );
    const copies = writes.copies ?? [];
    const chats = writes.chats ?? [];
    const chatResults: Array<ChatRow | null> = chats.map(() => null);
    // Every chat goes in the statement (one instance's writes of different chats share a round: InboundStore's
    // waves); one the statement could not change alone (unknown, or found twice) is observed alone after it, in order.
    const first: number[] = [];
    chats.forEach((item, index) => {
      if (!item.observation.waChatId && !item.observation.waChatLid) throw new Error('a chat needs a JID or a LID');
      first.push(index);
    });
    const senders = writes.senders ?? [];
    const contactsHere = this.alongside(this.contacts);
    // The senders in a statement of their own, sent with the round's on the same connection (one round
    // trip): in the round's statement they cost Postgres more than they saved (ADR 0052, withdrawn).
    const knownSenders = contactsHere.knownSenders(senders);
    // Settled below whatever happens to the round's statement (the transaction fails as a whole then).
    knownSenders.catch(() => undefined);
    const results: InboundGroupResults = { statuses: [], copies: copies.map(() => null), chats: [], senders: [] };
    if (statuses.length > 0 || copies.length > 0 || first.length > 0) {
      const input = first.map((index) => chats[index]);
      const kinds = (statuses.length > 0 ? KIND.status : 0) | (copies.length > 0 ? KIND.copy : 0) | (input.length > 0 ? KIND.chat : 0);
      const parameters: unknown[] = [];
      // Rows in key order, as the send ledger's group commits lock theirs: two statements that touch the
      // same messages lock them in one order and cannot deadlock each other (bench/send met one: 40P01).
      if (kinds & KIND.status) {
        const ordered = inKeyOrder(
          statuses,
          (item) => item.instanceId,
          (item) => item.messageId,
        );
        parameters.push(
          ordered.map((item) => item.instanceId),
          ordered.map((item) => item.messageId),
          ordered.map((item) => item.status),
          ordered.map((item) => item.rank),
        );
      }
      if (kinds & KIND.copy) {
        const ordered = inKeyOrder(
          copies,
          (message) => message.instanceId,
          (message) => message.messageId,
        );
        const ours = ordered.filter((message) => message.fromMe === true);
        parameters.push(
          ours.map((message) => message.instanceId),
          ours.map((message) => message.messageId),
          JSON.stringify(ordered.map(messageDocument)),
        );
      }
      if (kinds & KIND.chat) {
        // One array per column of h_input: the observations' rows, transposed.
        const values = input.map(({ instanceId, observation }) => [
          instanceId,
          observation.waChatId ?? '',
          observation.waChatLid ?? '',
          ...observationValues(observation),
        ]);
        parameters.push(...H_INPUT_TYPES.map((_, column) => values.map((row) => row[column])));
      }
      const rows: Raw[] = await manager.query(statementFor(kinds), parameters);
      const copyIndex = new Map(copies.map((message, index) => [`${message.instanceId}\u0000${message.messageId}`, index]));
      for (const raw of rows) {
        const kind = Number(raw.kind);
        if (kind === KIND.status) results.statuses.push(toStatusChange(raw));
        else if (kind === KIND.copy) {
          const index = copyIndex.get(`${String(raw.instance_id)}\u0000${String(raw.message_id)}`);
          if (index === undefined) continue;
          const row = toMessageRow(raw);
          const created = Boolean(raw.created);
          const priorStatus = (raw.prior_status as string | null | undefined) ?? null;
          // Only our own copies' prior status is read (c_prior): another copy never advances a send.
          results.copies[index] = { row, created, advanced: copies[index].fromMe === true && !created && priorStatus !== row.status };
        } else {
          const chat: Raw = {};
          for (const column of CHAT_COLUMNS) chat[column] = raw[`${CHAT}${column}`];
          chatResults[first[Number(raw.ord) - 1]] = toChatRow(chat);
        }
      }
      await this.observeSenders(contactsHere, senders, await knownSenders, results);
      for (const index of first) {
        if (!chatResults[index])
          chatResults[index] = (await chatsHere.observeUnknown(chats[index].instanceId, chats[index].observation, chats[index].newId)).chat;
      }
    }
    if (results.senders.length < senders.length) await this.observeSenders(contactsHere, senders, await knownSenders, results);
    for (let index = 0; index < chats.length; index++) {
      if (!chatResults[index]) chatResults[index] = (await chatsHere.observe(chats[index].instanceId, chats[index].observation, chats[index].newId)).chat;
    }
    results.chats = chatResults as ChatRow[];
    return results;
  }

  /**
   * Each sender's answer, in order: the row its statement found as given, unchanged; any other is
   * observed alone by ContactRepository.observe's locked path (created, moved, merged or renamed), before
   * the chats the round could not change alone, as a message's sender was observed before its chat.
   * Senders with no identifier in common go at once, their statements pipelined on the connection, as
   * each write's own observation went before (a wave's new senders cost a few round trips, not a few
   * each); one that shares an identifier with an earlier one of its instance waits for it, so two alike
   * in one round are observed one after the other and the second finds the first's row unchanged.
   */
  private async observeSenders(
    contacts: ContactRepository,
    senders: NonNullable<InboundGroupWrites['senders']>,
    known: Array<ContactRow | null>,
    results: InboundGroupResults,
  ): Promise<void> {
    const lastOf = new Map<string, Promise<unknown>>();
    const answers = senders.map((sender, index) => {
      const row = known[index];
      if (row) return Promise.resolve({ contact: row, changed: false });
      const { instanceId, pn, lid, pushName } = sender;
      const identifiers = [pn, lid].filter(Boolean).map((identifier) => `${instanceId}\u0000${identifier}`);
      const earlier = identifiers.flatMap((identifier) => lastOf.get(identifier) ?? []);
      const answer = (earlier.length ? Promise.all(earlier) : Promise.resolve()).then(() => contacts.observe(instanceId, { jid: pn, lid, pushName }));
      const settled = answer.catch(() => undefined);
      for (const identifier of identifiers) lastOf.set(identifier, settled);
      return answer;
    });
    // Every one settled before any failure is thrown: none may send a statement after the caller's rollback.
    const settled = await Promise.allSettled(answers);
    const failed = settled.find((outcome) => outcome.status === 'rejected');
    if (failed) throw failed.reason;
    for (const outcome of settled) if (outcome.status === 'fulfilled') results.senders.push(outcome.value);
  }
}

/** The items sorted by the key the send ledger's group commits sort theirs by (instance, NUL, message id). */
function inKeyOrder<T>(items: readonly T[], instanceId: (item: T) => string, messageId: (item: T) => string): T[] {
  if (items.length < 2) return [...items];
  const key = (item: T) => `${instanceId(item)}\u0000${messageId(item)}`;
  return items
    .map((item) => ({ item, k: key(item) }))
    .sort((a, b) => compareKeys(a.k, b.k))
    .map(({ item }) => item);
}

/**
 * Only what a receipt's event and bookkeeping read: every column of a message (its content and its
 * stored WAMessage) was ~1 KB per receipt for pg to parse, on every send.
 */
function toStatusChange(raw: Raw): StatusChange {
  return {
    instanceId: String(raw.instance_id),
    messageId: String(raw.message_id),
    chatId: String(raw.chat_id),
    chatLid: String(raw.chat_lid),
    fromMe: Boolean(raw.from_me),
    isGroup: Boolean(raw.is_group),
    status: String(raw.status),
  };
}
