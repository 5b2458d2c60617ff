import { PREPARED } from '../preparing-client';
import { OutboxRepository, type NewOutboxEvent } from './outbox.repository';
import { chatFieldSql, chatSearchCondition, SqlParameters, type ChatSearch } from './chat-search';
import {
  observationSql,
  observationValues,
  toChatRow,
  type ChatIdentity,
  type ChatObservation,
  type ChatRow,
  type ChatState,
  type ChatTotals,
  type Raw,
} from './chat-row';
import { RepositoryBase, type Executor } from './repository-base';

/**
 * Chats. A user conversation is one row whether it was seen by phone-number JID, by LID, or both:
 * an observation carrying both merges two rows that had each seen only one (guarantee 4).
 */
export class ChatRepository extends RepositoryBase {
  private readonly outbox = new OutboxRepository(this.dataSource);

  async observe(instanceId: string, observation: ChatObservation, newId: () => string): Promise<{ chat: ChatRow; created: boolean; merged: boolean }> {
    const manager = this.db;
    const pn = observation.waChatId ?? '';
    const lid = observation.waChatLid ?? '';
    if (!pn && !lid) throw new Error('a chat needs a JID or a LID');
    // Most observations are of a chat that is stored with exactly these identifiers: nothing to create,
    // merge or learn, so nothing another writer could race on. One statement, no instance lock.
    const known = await ChatRepository.updateChat(manager, instanceId, { pn, lid, knownOnly: true }, observation);
    if (known) return { chat: known, created: false, merged: false };
    return this.observeUnknown(instanceId, observation, newId);
  }

  /**
   * The chats of these observations that no row holds yet by either identifier, created in one
   * statement (a history chunk's chats: issue #38) as observeUnknown() creates one (a name the
   * address book saved before is its name); observe() then finds each stored with exactly its
   * identifiers. A chat stored under one of them is left out (merge and learn stay observe's).
   * Takes the instance's chats lock, as observeUnknown() does.
   *
   * Each input is looked up by `chats_chatid` / `chats_chatlid`, whose predicates the statement names
   * (`c.wa_chatid <> ''`…), and an empty identifier as NULL (it matches nothing): with `u.pn <> ''` only,
   * Postgres compared every input with every chat of the instance (a 400-chat chunk against 3,000 chats:
   * 432,199 comparisons, 154 ms against 11 ms; EXPLAIN ANALYZE on a seeded schema), and the name's
   * lookup read every contact without a LID for each input without one.
   */
  async createMissing(instanceId: string, chats: ReadonlyArray<{ pn: string; lid: string; isGroup: boolean }>, newId: () => string): Promise<number> {
    const manager = this.db;
    const input = chats.filter((chat) => chat.pn || chat.lid);
    if (input.length === 0) return 0;
    await manager.query(`SELECT pg_advisory_xact_lock(hashtext('chats:' || $1))`, [instanceId]);
    const rows: Array<{ n: number }> = await manager.query(
      `${PREPARED} WITH inserted AS (
         INSERT INTO chats (instance_id, id, wa_chatid, wa_chatlid, is_group, wa_contact_name)
         SELECT $1, u.id, u.pn, u.lid, u.is_group, COALESCE((
           SELECT contact_name FROM contacts
           WHERE instance_id = $1 AND contact_name <> '' AND (jid = NULLIF(u.pn, '') OR jid = NULLIF(u.lid, '') OR lid = NULLIF(u.lid, ''))
           ORDER BY jid = u.pn DESC LIMIT 1), '')
         FROM unnest((SELECT $2::text[]), (SELECT $3::text[]), (SELECT $4::text[]), (SELECT $5::boolean[])) AS u(id, pn, lid, is_group)
         WHERE NOT EXISTS (
           SELECT 1 FROM chats c WHERE c.instance_id = $1
             AND ((c.wa_chatid = NULLIF(u.pn, '') AND c.wa_chatid <> '') OR (c.wa_chatlid = NULLIF(u.lid, '') AND c.wa_chatlid <> '')))
         ON CONFLICT DO NOTHING
         RETURNING 1)
       SELECT count(*)::int AS n FROM inserted`,
      [instanceId, input.map(() => newId()), input.map((chat) => chat.pn), input.map((chat) => chat.lid), input.map((chat) => chat.isGroup)],
    );
    return Number(rows[0]?.n ?? 0);
  }

  /**
   * observe's path when the chat is not stored with exactly these identifiers: create, merge or
   * learn, under the instance's lock (also InboundGroupRepository's, after its statement).
   */
  async observeUnknown(instanceId: string, observation: ChatObservation, newId: () => string): Promise<{ chat: ChatRow; created: boolean; merged: boolean }> {
    const manager = this.db;
    const pn = observation.waChatId ?? '';
    const lid = observation.waChatLid ?? '';
    // Chats of one instance change one at a time, so two observations cannot both create a row.
    await manager.query(`SELECT pg_advisory_xact_lock(hashtext('chats:' || $1))`, [instanceId]);
    const found: Raw[] = await manager.query(
      `SELECT * FROM chats WHERE instance_id = $1 AND ((wa_chatid = $2 AND $2 <> '') OR (wa_chatlid = $3 AND $3 <> '')) ORDER BY created_at, id`,
      [instanceId, pn, lid],
    );
    let merged = false;
    let row: ChatRow;
    let created = false;
    if (found.length === 0) {
      const inserted: Raw[] = await manager.query(
        // A name saved in the address book before the chat existed (`/contact/add`, the phone's sync) is its name from the start.
        `INSERT INTO chats (instance_id, id, wa_chatid, wa_chatlid, is_group, wa_contact_name)
         VALUES ($1, $2, $3, $4, $5, COALESCE((
           SELECT contact_name FROM contacts
           WHERE instance_id = $1 AND contact_name <> '' AND ((jid = $3 AND $3 <> '') OR (jid = $4 AND $4 <> '') OR (lid = $4 AND $4 <> ''))
           ORDER BY jid = $3 DESC LIMIT 1), ''))
         RETURNING *`,
        [instanceId, newId(), pn, lid, observation.isGroup ?? false],
      );
      row = toChatRow(inserted[0]);
      created = true;
    } else {
      row = toChatRow(found[0]);
      if (found.length > 1) {
        // Keep the older row; take over what only the other one knew, then drop it.
        const other = toChatRow(found[1]);
        await manager.query(`DELETE FROM chats WHERE instance_id = $1 AND id = $2`, [instanceId, other.id]);
        await manager.query(
          `UPDATE chats SET
             wa_name = CASE WHEN wa_name = '' THEN $3 ELSE wa_name END,
             wa_contact_name = CASE WHEN wa_contact_name = '' THEN $4 ELSE wa_contact_name END,
             unread_count = unread_count + $5,
             lead = $6::jsonb || lead,
             labels = ARRAY(SELECT DISTINCT unnest(labels || $7::text[]))
           WHERE instance_id = $1 AND id = $2`,
          [instanceId, row.id, other.waName, other.waContactName, other.unreadCount, JSON.stringify(other.lead), other.labels],
        );
        merged = true;
      }
    }
    const chat = await ChatRepository.updateChat(manager, instanceId, { pn, lid, id: row.id }, observation);
    return { chat: chat!, created, merged };
  }

  /**
   * Applies an observation to one chat: the row `id`, or with `knownOnly` the single row already
   * stored under exactly these identifiers (null when there is none, or two, or one that would learn
   * a new identifier from this observation).
   */
  private static async updateChat(
    manager: Executor,
    instanceId: string,
    target: { pn: string; lid: string } & ({ id: string } | { knownOnly: true }),
    observation: ChatObservation,
  ): Promise<ChatRow | null> {
    // Known only: the one row matching either identifier, already holding every identifier given.
    const matching =
      'id' in target
        ? `SELECT $12::text AS id`
        : // The column's own <> '' lets the prepared (generic) plan use the partial unique indexes.
          `SELECT id FROM chats WHERE instance_id = $1 AND ((wa_chatid = $2 AND wa_chatid <> '' AND $2 <> '') OR (wa_chatlid = $3 AND wa_chatlid <> '' AND $3 <> ''))`;
    const knownOnly = 'id' in target ? '' : `AND (SELECT count(*) FROM matching) = 1 AND (wa_chatid = $2 OR $2 = '') AND (wa_chatlid = $3 OR $3 = '')`;
    const updated: Raw[] = await manager.query(
      `${PREPARED} WITH matching AS (${matching}),
       changed AS (
         UPDATE chats SET ${observationSql({
           pn: '$2',
           lid: '$3',
           name: '$4',
           contact: '$5',
           ts: '$6::bigint',
           type: '$7',
           text: '$8',
           sender: '$9',
           incoming: '$10',
           ephemeral: '$11',
         })}
         WHERE instance_id = $1 AND id IN (SELECT id FROM matching) ${knownOnly} RETURNING *)
       SELECT * FROM changed`,
      [instanceId, target.pn, target.lid, ...observationValues(observation), ...('id' in target ? [target.id] : [])],
    );
    return updated.length ? toChatRow(updated[0]) : null;
  }

  async findByJid(instanceId: string, jid: string): Promise<ChatRow | null> {
    const rows: Raw[] = await this.db.query(`SELECT * FROM chats WHERE instance_id = $1 AND (wa_chatid = $2 OR wa_chatlid = $2) LIMIT 1`, [instanceId, jid]);
    return rows.length ? toChatRow(rows[0]) : null;
  }

  /** The picture of the first chat stored under any of `jids` (PN or LID) that has one; '' when none does. */
  async imagePreview(instanceId: string, jids: string[]): Promise<string> {
    const manager = this.db;
    if (jids.length === 0) return '';
    const rows: Array<{ image_preview: string }> = await manager.query(
      `SELECT image_preview FROM chats WHERE instance_id = $1 AND (wa_chatid = ANY($2::text[]) OR wa_chatlid = ANY($2::text[])) AND image_preview <> '' LIMIT 1`,
      [instanceId, jids],
    );
    return rows[0]?.image_preview ?? '';
  }

  /**
   * A label put on (`add`) or taken off a chat, in its `labels` (each label once). Returns the chat's
   * labels afterwards; null when no such chat is stored.
   */
  async applyLabel(instanceId: string, jid: string, labelId: string, action: string): Promise<string[] | null> {
    const manager = this.db;
    const rows: Array<{ labels: string[] }> = await manager.query(
      `WITH changed AS (
         UPDATE chats SET labels = CASE WHEN $4 = 'add' THEN ARRAY(SELECT DISTINCT unnest(array_append(labels, $3::text))) ELSE array_remove(labels, $3::text) END,
           updated_at = now()
         WHERE instance_id = $1 AND (wa_chatid = $2 OR wa_chatlid = $2) RETURNING wa_chatid, wa_chatlid, labels)
       SELECT * FROM changed`,
      [instanceId, jid, labelId, action],
    );
    return rows[0]?.labels ?? null;
  }

  /**
   * Settings of a conversation changed (app state from the phone, group metadata): absent fields are
   * left as they are; group flags are merged. Null when no such chat is stored or nothing changed
   * (so callers announce only real changes).
   */
  async applyState(instanceId: string, jid: string, state: ChatState): Promise<ChatRow | null> {
    const manager = this.db;
    const rows: Raw[] = await manager.query(
      `WITH changed AS (
         UPDATE chats SET
           archived = COALESCE($3, archived),
           pinned = COALESCE($4, pinned),
           mute_end_time = COALESCE($5, mute_end_time),
           unread_count = CASE WHEN $10 THEN GREATEST(unread_count, 1) ELSE COALESCE($6, unread_count) END,
           marked_unread = CASE WHEN $10 THEN marked_unread OR unread_count < 1 WHEN $6 IS NOT NULL THEN false ELSE marked_unread END,
           ephemeral_expiration = COALESCE($11, ephemeral_expiration),
           notes = COALESCE($12, notes),
           image = COALESCE($13, image),
           image_preview = COALESCE($14, image_preview),
           wa_name = COALESCE($7, wa_name),
           wa_contact_name = COALESCE($9, wa_contact_name),
           name = COALESCE(NULLIF($9, ''), NULLIF(wa_contact_name, ''), NULLIF($7, ''), name),
           group_flags = group_flags || COALESCE($8::jsonb, '{}'::jsonb),
           updated_at = now()
         WHERE instance_id = $1 AND (wa_chatid = $2 OR wa_chatlid = $2) AND (
           archived IS DISTINCT FROM COALESCE($3, archived) OR pinned IS DISTINCT FROM COALESCE($4, pinned)
           OR mute_end_time IS DISTINCT FROM COALESCE($5, mute_end_time) OR unread_count IS DISTINCT FROM COALESCE($6, unread_count)
           OR wa_name IS DISTINCT FROM COALESCE($7, wa_name) OR wa_contact_name IS DISTINCT FROM COALESCE($9, wa_contact_name)
           OR NOT group_flags @> COALESCE($8::jsonb, '{}'::jsonb)
           OR ($10 AND unread_count < 1) OR ephemeral_expiration IS DISTINCT FROM COALESCE($11, ephemeral_expiration)
           OR notes IS DISTINCT FROM COALESCE($12, notes) OR image IS DISTINCT FROM COALESCE($13, image)
           OR image_preview IS DISTINCT FROM COALESCE($14, image_preview))
         RETURNING *)
       SELECT * FROM changed`,
      [
        instanceId,
        jid,
        state.archived ?? null,
        state.pinned ?? null,
        state.muteEndTime ?? null,
        state.unreadCount ?? null,
        state.waName ?? null,
        state.groupFlags ? JSON.stringify(state.groupFlags) : null,
        state.waContactName ?? null,
        state.markedUnread === true,
        state.ephemeralExpiration ?? null,
        state.notes ?? null,
        state.image ?? null,
        state.imagePreview ?? null,
      ],
    );
    return rows.length ? toChatRow(rows[0]) : null;
  }

  async findById(instanceId: string, id: string): Promise<ChatRow | null> {
    const rows: Raw[] = await this.db.query(`SELECT * FROM chats WHERE instance_id = $1 AND id = $2`, [instanceId, id]);
    return rows.length ? toChatRow(rows[0]) : null;
  }

  /**
   * The chat whose number (the user part of its phone JID, or of its LID when it has no phone JID, or
   * its group id) is `number`: what a `wa_fastid` names after its owner.
   */
  async findByNumber(instanceId: string, number: string): Promise<ChatRow | null> {
    const rows: Raw[] = await this.db.query(
      `SELECT * FROM chats WHERE instance_id = $1
         AND split_part(CASE WHEN wa_chatid <> '' THEN wa_chatid ELSE wa_chatlid END, '@', 1) = $2
       ORDER BY created_at, id LIMIT 1`,
      [instanceId, number],
    );
    return rows.length ? toChatRow(rows[0]) : null;
  }

  /**
   * Writes lead fields (and `chatbot_disableUntil`) of a conversation, over what it had: fields absent
   * from `lead` stay. The chat is created when the contact has none yet (a lead may come before any
   * message), and a phone-number row and a LID row of the same contact become one, as a message
   * carrying both would make them. `announce` makes the event of the written chat, stored with it in
   * the outbox (`lastEventId`: the relays are to be woken).
   */
  async writeLead(
    instanceId: string,
    identity: ChatIdentity,
    lead: Record<string, unknown>,
    newId: () => string,
    announce?: (chat: ChatRow) => NewOutboxEvent,
  ): Promise<{ chat: ChatRow; lastEventId: string | null }> {
    return this.transaction(async (manager) => {
      const { chat } = await this.within(manager).observe(instanceId, { waChatId: identity.pn, waChatLid: identity.lid, isGroup: identity.isGroup }, newId);
      // (Wrapped in a SELECT: TypeORM answers a bare UPDATE … RETURNING as [rows, count].)
      const rows: Raw[] = await manager.query(
        `WITH changed AS (UPDATE chats SET lead = lead || $3::jsonb, updated_at = now() WHERE instance_id = $1 AND id = $2 RETURNING *) SELECT * FROM changed`,
        [instanceId, chat.id, JSON.stringify(lead)],
      );
      const written = toChatRow(rows[0]);
      const lastEventId = announce ? await this.outbox.within(manager).insert(instanceId, [announce(written)]) : null;
      return { chat: written, lastEventId };
    });
  }

  /**
   * A setting of one conversation the API changed (disappearing messages, its note), applied to the chat
   * of `identity` (created first when `create` gives it an id, as a message would create it) and
   * announced with `announce` when it changed, in one transaction. Null when the chat is not stored
   * (and not to be created).
   */
  async writeState(
    instanceId: string,
    identity: ChatIdentity,
    state: ChatState,
    options: { create?: () => string; announce: (chat: ChatRow) => NewOutboxEvent },
  ): Promise<{ chat: ChatRow; lastEventId: string | null } | null> {
    return this.transaction(async (manager) => {
      const chats = this.within(manager);
      let chat: ChatRow | null = null;
      let created = false;
      if (options.create)
        ({ chat, created } = await chats.observe(instanceId, { waChatId: identity.pn, waChatLid: identity.lid, isGroup: identity.isGroup }, options.create));
      else
        chat = (identity.pn ? await chats.findByJid(instanceId, identity.pn) : null) ?? (identity.lid ? await chats.findByJid(instanceId, identity.lid) : null);
      if (!chat) return null;
      const changed = await chats.applyState(instanceId, chat.waChatId || chat.waChatLid, state);
      // Nothing changed: maybe because a concurrent writer (the worker following WhatsApp) stored the same a moment
      // ago, after `chat` was read; the row as it is now, not that older copy.
      const written = changed ?? (await chats.findByJid(instanceId, chat.waChatId || chat.waChatLid)) ?? chat;
      const lastEventId = changed || created ? await this.outbox.within(manager).insert(instanceId, [options.announce(written)]) : null;
      return { chat: written, lastEventId };
    });
  }

  /**
   * One page of an instance's chats matching the search, the number that match, and counts over all its
   * chats. Ties of the sort are broken by id, so pages never repeat or skip a chat.
   */
  async search(instanceId: string, owner: string, search: ChatSearch): Promise<{ rows: ChatRow[]; totalRecords: number; totals: ChatTotals }> {
    const page = new SqlParameters(owner);
    page.bind(instanceId);
    const pageWhere = chatSearchCondition(search, page);
    const order = `${chatFieldSql(search.sort.field, page)} ${search.sort.descending ? 'DESC' : 'ASC'}`;
    const limit = page.bind(search.limit);
    const offset = page.bind(search.offset);
    const rows: Raw[] = await this.db.query(
      `SELECT * FROM chats WHERE instance_id = $1 AND ${pageWhere} ORDER BY ${order}, id ${search.sort.descending ? 'DESC' : 'ASC'} LIMIT ${limit} OFFSET ${offset}`,
      page.values,
    );
    const counts = new SqlParameters(owner);
    counts.bind(instanceId);
    const countWhere = chatSearchCondition(search, counts);
    const [totals]: Array<ChatTotals & { matched: number }> = await this.db.query(
      `SELECT count(*) FILTER (WHERE ${countWhere})::int AS matched,
         count(*)::int AS total_chats,
         count(*) FILTER (WHERE unread_count > 0)::int AS unread_chats,
         count(*) FILTER (WHERE archived)::int AS archived_chats,
         count(*) FILTER (WHERE pinned)::int AS pinned_chats,
         count(*) FILTER (WHERE blocked)::int AS blocked_chats,
         count(*) FILTER (WHERE is_group)::int AS groups,
         count(*) FILTER (WHERE is_group AND COALESCE((group_flags->>'admin')::boolean, false))::int AS groups_admin,
         count(*) FILTER (WHERE is_group AND COALESCE((group_flags->>'announce')::boolean, false))::int AS groups_announce,
         count(*) FILTER (WHERE is_group AND COALESCE((group_flags->>'member')::boolean, false))::int AS groups_member
       FROM chats WHERE instance_id = $1`,
      counts.values,
    );
    const { matched, ...stats } = totals;
    return { rows: rows.map(toChatRow), totalRecords: matched, totals: stats };
  }

  async countFor(instanceId: string): Promise<number> {
    const rows: Array<{ n: number }> = await this.db.query(`SELECT count(*)::int AS n FROM chats WHERE instance_id = $1`, [instanceId]);
    return rows[0].n;
  }

  async markRead(instanceId: string, jid: string): Promise<void> {
    await this.db.query(`UPDATE chats SET unread_count = 0, marked_unread = false WHERE instance_id = $1 AND (wa_chatid = $2 OR wa_chatlid = $2)`, [
      instanceId,
      jid,
    ]);
  }

  /** `/chat/delete` deleteChatDB: removes the chat stored under any of these JIDs (its number and LID); whether one was. */
  async deleteByJids(instanceId: string, jids: string[]): Promise<boolean> {
    const rows: Array<{ n: number }> = await this.db.query(
      `WITH gone AS (DELETE FROM chats WHERE instance_id = $1 AND (wa_chatid = ANY($2::text[]) OR wa_chatlid = ANY($2::text[])) RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
      [instanceId, jids],
    );
    return Number(rows[0].n) > 0;
  }
}
