import { PREPARED } from '../preparing-client';
import { RepositoryBase, type Executor } from './repository-base';

/** A contact of an instance: keyed by its phone-number JID, or by its LID while the number is unknown. */
export interface ContactRow {
  instanceId: string;
  jid: string;
  lid: string;
  contactName: string;
  pushName: string;
  verifiedName: string;
  inAddressBook: boolean;
  updatedAt: Date;
}

/** What a message or a sync tells about a contact; empty or absent fields are left as they are. */
export interface ContactObservation {
  /** Phone-number JID (`5511…@s.whatsapp.net`). */
  jid?: string;
  /** LID (`123…@lid`). */
  lid?: string;
  /** Name saved in the address book. */
  contactName?: string;
  /** Profile (push) name. */
  pushName?: string;
  verifiedName?: string;
  inAddressBook?: boolean;
}

type Raw = Record<string, unknown>;

/** Which contacts a listing returns (uazapi's `contactScope`). */
export type ContactScope = 'address_book' | 'outside_address_book' | 'all';

function toContactRow(raw: Raw): ContactRow {
  return {
    instanceId: raw.instance_id as string,
    jid: raw.jid as string,
    lid: raw.lid as string,
    contactName: raw.contact_name as string,
    pushName: raw.push_name as string,
    verifiedName: raw.verified_name as string,
    inAddressBook: raw.in_address_book as boolean,
    updatedAt: raw.updated_at as Date,
  };
}

/** ContactRepository.knownSenders: each sender's only row found, when it holds the number, the LID and the push name given. */
const KNOWN_SENDERS_SQL = `${PREPARED} WITH k_input AS (
    SELECT * FROM unnest((SELECT $1::text[]), (SELECT $2::text[]), (SELECT $3::text[]), (SELECT $4::text[]))
      WITH ORDINALITY AS u(k_instance, k_pn, k_lid, k_push, k_ord)),
  k_found AS (
    SELECT u.k_ord, u.k_pn, u.k_lid, u.k_push, c.*, count(*) OVER (PARTITION BY u.k_ord) AS k_rows
    FROM k_input u
    JOIN LATERAL (
      SELECT * FROM contacts
      WHERE instance_id = u.k_instance AND ((jid = u.k_pn AND u.k_pn <> '') OR (jid = u.k_lid AND u.k_lid <> '') OR (lid = NULLIF(u.k_lid, '') AND u.k_lid <> ''))
      OFFSET 0) c ON true)
  SELECT * FROM k_found
  WHERE k_rows = 1 AND (jid = k_pn OR k_pn = '') AND (lid = k_lid OR k_lid = '') AND (push_name = k_push OR k_push = '')`;

/**
 * Contacts. A contact first seen only by LID is keyed by the LID; once its phone number is known the
 * row moves to the phone-number JID, so one person never has two rows (guarantee 4).
 */
export class ContactRepository extends RepositoryBase {
  /** The names the instance knows for a contact stored under any of `jids` (PN or LID); null when none is. */
  async knownNames(instanceId: string, jids: string[]): Promise<{ contactName: string; pushName: string; verifiedName: string } | null> {
    const manager = this.db;
    if (jids.length === 0) return null;
    const rows: Array<{ contact_name: string; push_name: string; verified_name: string }> = await manager.query(
      `SELECT contact_name, push_name, verified_name FROM contacts WHERE instance_id = $1 AND (jid = ANY($2::text[]) OR lid = ANY($2::text[])) LIMIT 1`,
      [instanceId, jids],
    );
    const row = rows[0];
    return row ? { contactName: row.contact_name, pushName: row.push_name, verifiedName: row.verified_name } : null;
  }

  /**
   * Records what is known about a contact. `changed` is false when the row already said all of it
   * (no event is worth sending then).
   */
  async observe(instanceId: string, observation: ContactObservation): Promise<{ contact: ContactRow; changed: boolean }> {
    const manager = this.db;
    const pn = observation.jid ?? '';
    const lid = observation.lid ?? '';
    if (!pn && !lid) throw new Error('a contact needs a JID or a LID');
    // Most observations repeat what the row says already (every message carries its sender's push
    // name): nothing to write, so nothing another writer could race on, and the answer below would be
    // `changed: false` with that row. One statement, no instance lock.
    const known = await ContactRepository.knownOrLock(manager, instanceId, pn, lid, observation);
    if (known) return { contact: known, changed: false };
    // Otherwise contacts of one instance change one at a time (a LID row may move to its phone number):
    // the lock is held now, and the rows are read again in a statement that starts after it.
    const found = (
      (await manager.query(
        `SELECT * FROM contacts WHERE instance_id = $1 AND ((jid = $2 AND $2 <> '') OR (jid = $3 AND $3 <> '') OR (lid = NULLIF($3, '') AND $3 <> ''))`,
        [instanceId, pn, lid],
      )) as Raw[]
    ).map(toContactRow);
    const target = pn || found.find((row) => row.lid === lid || row.jid === lid)?.jid || lid;
    const current = found.find((row) => row.jid === target);
    const others = found.filter((row) => row.jid !== target);
    const pick = (value: string | undefined, field: 'contactName' | 'pushName' | 'verifiedName') =>
      value || current?.[field] || others.find((row) => row[field])?.[field] || '';
    const next = {
      lid: lid || current?.lid || others.find((row) => row.lid)?.lid || '',
      contactName: pick(observation.contactName, 'contactName'),
      pushName: pick(observation.pushName, 'pushName'),
      verifiedName: pick(observation.verifiedName, 'verifiedName'),
      inAddressBook: observation.inAddressBook ?? current?.inAddressBook ?? others.some((row) => row.inAddressBook),
    };
    const changed =
      !current ||
      others.length > 0 ||
      current.lid !== next.lid ||
      current.contactName !== next.contactName ||
      current.pushName !== next.pushName ||
      current.verifiedName !== next.verifiedName ||
      current.inAddressBook !== next.inAddressBook;
    if (!changed) return { contact: current, changed: false };
    if (others.length) {
      await manager.query(`DELETE FROM contacts WHERE instance_id = $1 AND jid = ANY($2::text[])`, [instanceId, others.map((row) => row.jid)]);
    }
    const rows: Raw[] = await manager.query(
      `INSERT INTO contacts (instance_id, jid, lid, contact_name, push_name, verified_name, in_address_book, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, now())
       ON CONFLICT (instance_id, jid) DO UPDATE SET
         lid = EXCLUDED.lid, contact_name = EXCLUDED.contact_name, push_name = EXCLUDED.push_name,
         verified_name = EXCLUDED.verified_name, in_address_book = EXCLUDED.in_address_book, updated_at = now()
       RETURNING *`,
      [instanceId, target, next.lid, next.contactName, next.pushName, next.verifiedName, next.inAddressBook],
    );
    return { contact: toContactRow(rows[0]), changed: true };
  }

  /**
   * For each sender observed (a received message's author: its phone number, LID and push name), the
   * row that already says all of it, as observe() would answer it `changed: false` without a write;
   * null for any other (a contact to create, move, merge or rename: observe()'s locked path is its
   * way). One statement for a round's senders, read from its snapshot without a lock (it writes
   * nothing, so a writer in flight is simply ordered after it: knownOrLock's reasoning). Each sender is
   * looked up by the primary key and `contacts_lid` (OFFSET 0 keeps the planner from joining every
   * contact of the instance), and the arrays come through scalar subqueries so that the statement
   * keeps its generic plan (ADR 0055).
   */
  async knownSenders(senders: ReadonlyArray<{ instanceId: string; pn: string; lid: string; pushName: string }>): Promise<Array<ContactRow | null>> {
    if (senders.length === 0) return [];
    for (const sender of senders) if (!sender.pn && !sender.lid) throw new Error('a contact needs a JID or a LID');
    const rows: Array<Raw & { k_ord: string }> = await this.db.query(KNOWN_SENDERS_SQL, [
      senders.map((sender) => sender.instanceId),
      senders.map((sender) => sender.pn),
      senders.map((sender) => sender.lid),
      senders.map((sender) => sender.pushName),
    ]);
    const known: Array<ContactRow | null> = senders.map(() => null);
    for (const row of rows) known[Number(row.k_ord) - 1] = toContactRow(row);
    return known;
  }

  /**
   * The contacts of these observations that no row knows yet by either identifier, created in one
   * statement (a history chunk's senders: issue #38), keyed as observe() keys a new one (the
   * phone number, else the LID); each is what observe() would have answered `changed` with.
   * Observations of a stored contact are left out: observe() is their path. Takes the
   * instance's contacts lock, as observe()'s create does. An empty identifier is looked up as NULL (it
   * matches nothing): as `lid = u.lid AND u.lid <> ''` it read every contact without a LID for each
   * observation without one (400 observations against 3,000 contacts: 47 ms against 9 ms).
   */
  async createMissing(instanceId: string, observations: ReadonlyArray<{ jid?: string; lid?: string; pushName?: string }>): Promise<ContactRow[]> {
    const manager = this.db;
    const input = observations.filter((observation) => observation.jid || observation.lid);
    if (input.length === 0) return [];
    await manager.query(`SELECT pg_advisory_xact_lock(hashtext('contacts:' || $1))`, [instanceId]);
    const rows: Raw[] = await manager.query(
      `${PREPARED} WITH inserted AS (
         INSERT INTO contacts (instance_id, jid, lid, contact_name, push_name, verified_name, in_address_book, updated_at)
         SELECT $1, CASE WHEN u.pn <> '' THEN u.pn ELSE u.lid END, u.lid, '', u.push_name, '', false, now()
         FROM unnest((SELECT $2::text[]), (SELECT $3::text[]), (SELECT $4::text[])) AS u(pn, lid, push_name)
         WHERE NOT EXISTS (
           SELECT 1 FROM contacts c WHERE c.instance_id = $1 AND (c.jid = NULLIF(u.pn, '') OR c.jid = NULLIF(u.lid, '') OR c.lid = NULLIF(u.lid, '')))
         ON CONFLICT DO NOTHING
         RETURNING *)
       SELECT * FROM inserted`,
      [instanceId, input.map((item) => item.jid ?? ''), input.map((item) => item.lid ?? ''), input.map((item) => item.pushName ?? '')],
    );
    return rows.map(toContactRow);
  }

  /**
   * The stored row when it already says everything `observation` says, so that observe() would
   * answer it with `changed: false`: the only row found under either identifier, keyed by the phone
   * number when one is given, holding the LID when one is given, and every non-empty name and the
   * address-book flag as given. Read from the statement's snapshot without a lock: it writes nothing,
   * so a writer in flight is simply ordered after it. Otherwise (a row to create, move, merge or
   * change) null, and the same statement has taken the instance's contacts lock: the locked path costs
   * no statement more than before this check.
   */
  private static async knownOrLock(
    manager: Executor,
    instanceId: string,
    pn: string,
    lid: string,
    observation: ContactObservation,
  ): Promise<ContactRow | null> {
    const rows: Raw[] = await manager.query(
      `${PREPARED} WITH found AS (
         SELECT * FROM contacts WHERE instance_id = $1 AND ((jid = $2 AND $2 <> '') OR (jid = $3 AND $3 <> '') OR (lid = NULLIF($3, '') AND $3 <> ''))),
       known AS (
         SELECT * FROM found
         WHERE (SELECT count(*) FROM found) = 1 AND (jid = $2 OR $2 = '') AND (lid = $3 OR $3 = '')
           AND (contact_name = $4 OR $4 = '') AND (push_name = $5 OR $5 = '') AND (verified_name = $6 OR $6 = '')
           AND (in_address_book = $7 OR $7::boolean IS NULL)),
       locked AS (SELECT pg_advisory_xact_lock(hashtext('contacts:' || $1)) WHERE NOT EXISTS (SELECT 1 FROM known))
       SELECT known.* FROM (SELECT count(*) FROM locked) AS taken LEFT JOIN known ON true`,
      [instanceId, pn, lid, observation.contactName ?? '', observation.pushName ?? '', observation.verifiedName ?? '', observation.inAddressBook ?? null],
    );
    return rows[0]?.jid ? toContactRow(rows[0]) : null;
  }

  /**
   * The phone saved (`name`) or removed (null) a contact in its address book. Returns the row when it
   * changed (a contacts event is due), null otherwise.
   */
  async setAddressBook(instanceId: string, jid: string, name: string | null): Promise<ContactRow | null> {
    const manager = this.db;
    if (name !== null) {
      const { contact, changed } = await this.observe(instanceId, { jid, contactName: name, inAddressBook: true });
      return changed ? contact : null;
    }
    const rows: Raw[] = await manager.query(
      // An UPDATE's own RETURNING comes back from TypeORM as [rows, count]; a CTE answers rows.
      `WITH changed AS (
         UPDATE contacts SET contact_name = '', in_address_book = false, updated_at = now()
         WHERE instance_id = $1 AND jid = $2 AND (contact_name <> '' OR in_address_book) RETURNING *
       ) SELECT * FROM changed`,
      [instanceId, jid],
    );
    return rows.length ? toContactRow(rows[0]) : null;
  }

  /**
   * A page of the instance's contacts, by JID: `address_book` (saved on the phone: a name from its
   * address book), `outside_address_book` (only seen: push names, senders) or `all`.
   */
  async page(instanceId: string, scope: ContactScope, limit: number | null, offset: number): Promise<{ rows: ContactRow[]; total: number; totalAll: number }> {
    const saved = `(in_address_book OR contact_name <> '')`;
    const where = scope === 'all' ? 'TRUE' : scope === 'address_book' ? saved : `NOT ${saved}`;
    const [counts]: Array<{ total: string; total_all: string }> = await this.db.query(
      `SELECT count(*) FILTER (WHERE ${where}) AS total, count(*) AS total_all FROM contacts WHERE instance_id = $1`,
      [instanceId],
    );
    const rows: Raw[] = await this.db.query(`SELECT * FROM contacts WHERE instance_id = $1 AND ${where} ORDER BY jid LIMIT $2 OFFSET $3`, [
      instanceId,
      limit,
      offset,
    ]);
    return { rows: rows.map(toContactRow), total: Number(counts?.total ?? 0), totalAll: Number(counts?.total_all ?? 0) };
  }

  /** Every contact of an instance, by JID (a status' audience is drawn from them). */
  async listAll(instanceId: string): Promise<ContactRow[]> {
    const rows: Raw[] = await this.db.query(`SELECT * FROM contacts WHERE instance_id = $1 ORDER BY jid`, [instanceId]);
    return rows.map(toContactRow);
  }

  /** A contact by its phone-number JID or its LID. */
  async find(instanceId: string, jidOrLid: string): Promise<ContactRow | null> {
    const rows: Raw[] = await this.db.query(`SELECT * FROM contacts WHERE instance_id = $1 AND (jid = $2 OR lid = $2) LIMIT 1`, [instanceId, jidOrLid]);
    return rows.length ? toContactRow(rows[0]) : null;
  }
}
