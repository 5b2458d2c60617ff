import { EntityNotFoundError } from 'typeorm';
import { InstanceEntity } from '../entities/instance.entity';
import { FencedOutError } from './auth-state.repository';
import type { Lease } from './lease.repository';
import { OutboxCursorRepository } from './outbox-cursor.repository';
import { OutboxRepository, type NewOutboxEvent } from './outbox.repository';
import { PREPARED } from '../preparing-client';
import { RepositoryBase } from './repository-base';
import { fenceCte, fenceManyCte, fenceManyParams, fenceParams } from './lease-fence';
import { GroupCommit } from '../group-commit';

export type InstancePatch = Partial<Omit<InstanceEntity, 'id' | 'token' | 'created' | 'updated'>>;

/** A session holder's change of its instance (applySessionChange). */
interface SessionChange {
  lease: Lease;
  patch: InstancePatch;
  events: NewOutboxEvent[];
}

/** Whether the lease held, the row as stored (null: no such instance), the last event's id. */
interface SessionChangeResult {
  held: boolean;
  entity: InstanceEntity | null;
  lastEventId: string | null;
}

/** How long a kept device list lives at most (Baileys' device cache, five minutes): an older row is not read. */
const DEVICE_LISTS_LIFETIME_S = 300;

export class InstanceRepository extends RepositoryBase {
  private readonly cursors = new OutboxCursorRepository(this.dataSource);
  private readonly outbox = new OutboxRepository(this.dataSource);

  private get repo() {
    return this.db.getRepository(InstanceEntity);
  }

  async create(values: Pick<InstanceEntity, 'id' | 'token' | 'name'> & InstancePatch): Promise<InstanceEntity> {
    const entity = this.repo.create(values);
    return this.repo.save(entity);
  }

  findById(id: string): Promise<InstanceEntity | null> {
    return this.repo.findOneBy({ id });
  }

  /**
   * The instances' rows and their stored credentials (null when none are stored) in one statement: what a worker
   * reads right after it claimed a batch of orphans' leases (issue #38: one round trip for the batch, where it was
   * findById and then the auth state's readCreds per adoption). Only after the claim: before it, another holder
   * may still write the credentials. Instances that do not exist are absent.
   */
  async findManyWithCreds(ids: string[]): Promise<Map<string, { entity: InstanceEntity; creds: string | null; deviceLists: unknown[] }>> {
    if (ids.length === 0) return new Map();
    // The device lists the last holder kept (keepDeviceLists) come along: no statement more per adoption.
    // A row older than the lists' lifetime holds only expired ones: not read.
    const rows: Array<Record<string, unknown>> = await this.db.query(
      `${PREPARED} SELECT i.*, c.value AS "creds?", d.lists AS "device_lists?" FROM instances i
         LEFT JOIN auth_creds c ON c.instance_id = i.id
         LEFT JOIN instance_device_lists d ON d.instance_id = i.id AND d.written_at > now() - interval '${DEVICE_LISTS_LIFETIME_S} seconds'
        WHERE i.id = ANY($1::text[])`,
      [ids],
    );
    return new Map(
      rows.map((row) => {
        const lists = row['device_lists?'];
        return [
          row.id as string,
          { entity: this.hydrate(row), creds: (row['creds?'] as string | null) ?? null, deviceLists: Array.isArray(lists) ? lists : [] },
        ];
      }),
    );
  }

  /**
   * The device lists an instance's holder had cached, as it hands the instance over (a drain, a move, a
   * shutdown): its heir starts from them (findManyWithCreds). Replaces what an earlier holder kept; an
   * empty list removes the row. Not fenced: the lists are what WhatsApp answers anyone, each with its expiry.
   */
  async keepDeviceLists(instanceId: string, lists: unknown[]): Promise<void> {
    if (lists.length === 0) {
      await this.db.query(`DELETE FROM instance_device_lists WHERE instance_id = $1`, [instanceId]);
      return;
    }
    await this.db.query(
      `INSERT INTO instance_device_lists (instance_id, lists) SELECT id, $2::jsonb FROM instances WHERE id = $1
       ON CONFLICT (instance_id) DO UPDATE SET lists = EXCLUDED.lists, written_at = now()`,
      [instanceId, JSON.stringify(lists)],
    );
  }

  findByToken(token: string): Promise<InstanceEntity | null> {
    return this.repo.findOneBy({ token });
  }

  /** The instance's token alone (the relay puts it in payloads); null when the instance does not exist. */
  async findToken(id: string): Promise<string | null> {
    const rows: Array<{ token: string }> = await this.db.query(`SELECT token FROM instances WHERE id = $1`, [id]);
    return rows[0]?.token ?? null;
  }

  list(): Promise<InstanceEntity[]> {
    return this.repo.find({ order: { created: 'ASC' } });
  }

  /** Applies a patch and returns the row as stored, or null when the instance does not exist. */
  async update(id: string, patch: InstancePatch): Promise<InstanceEntity | null> {
    if (Object.keys(patch).length) await this.repo.update({ id }, patch);
    return this.findById(id);
  }

  /**
   * Applies the chatbot settings' patch; when it turns the chatbot on, `consumer`'s outbox cursor starts
   * in the same transaction (afresh when the chatbot was off): a message received after the answer is
   * answered however soon, none from before is. Null when the instance does not exist.
   */
  async updateChatbotSettings(id: string, patch: InstancePatch, consumer: string): Promise<InstanceEntity | null> {
    return this.transaction(async (manager) => {
      const [current]: Array<{ chatbot_enabled: boolean }> = await manager.query(`SELECT chatbot_enabled FROM instances WHERE id = $1 FOR UPDATE`, [id]);
      if (!current) return null;
      if (Object.keys(patch).length) await manager.getRepository(InstanceEntity).update({ id }, patch);
      if (patch.chatbotEnabled === true) await this.cursors.within(manager).start(consumer, id, !current.chatbot_enabled);
      return manager.getRepository(InstanceEntity).findOneBy({ id });
    });
  }

  async delete(id: string): Promise<boolean> {
    const result = await this.repo.delete({ id });
    return (result.affected ?? 0) > 0;
  }

  /**
   * A state change made by the session holder, with the events it causes, in one transaction that
   * first proves the lease is still held (a fenced-out worker changes nothing). On the pool, the
   * changes of every instance of this worker that arrive while one such statement is in flight go
   * together in the next one (GroupCommit, one change per instance per statement, an instance's changes in the order asked):
   * every login writes two (`connecting`, then `connected` with the profile), so a storm of logins (a
   * restart, a takeover) was two statements and two commits per instance (issue #38).
   */
  async applySessionChange(lease: Lease, patch: InstancePatch, events: NewOutboxEvent[] = []): Promise<{ entity: InstanceEntity; lastEventId: string | null }> {
    const change = { lease, patch, events };
    const result = this.db === this.dataSource ? await this.sessionChanges.write(change) : await this.applySessionChangeOne(change);
    if (!result.held) throw new FencedOutError(lease.instanceId);
    if (!result.entity) throw new EntityNotFoundError(InstanceEntity, { id: lease.instanceId });
    return { entity: result.entity, lastEventId: result.lastEventId };
  }

  private readonly sessionChanges = new GroupCommit<SessionChange, SessionChangeResult>(
    (changes) => this.applySessionChangeMany(changes),
    (change) => this.applySessionChangeOne(change),
    // Two statements in flight: one waiting on a row lock (an instance being deleted, its cascade holding
    // the row) holds back only its own instances; an instance's next change waits for its statement.
    { maxBatch: 100, maxInFlight: 2, key: (change) => change.lease.instanceId },
  );

  /** The patch's columns by database name, each value as the driver would send it (jsonb columns as the value itself, for a JSON document). */
  private patchColumns(patch: InstancePatch): Array<{ name: string; value: unknown; json: unknown }> {
    const metadata = this.dataSource.getMetadata(InstanceEntity);
    const driver = this.dataSource.driver;
    const columns: Array<{ name: string; value: unknown; json: unknown }> = [];
    // As TypeORM's update() does: undefined values are skipped.
    for (const [property, value] of Object.entries(patch)) {
      if (value === undefined) continue;
      const column = metadata.findColumnWithPropertyName(property);
      if (!column) throw new Error(`instances has no column ${property}`);
      const prepared: unknown = driver.preparePersistentValue(value, column);
      const isJson = column.type === 'jsonb' || column.type === 'json';
      columns.push({
        name: column.databaseName,
        value: prepared,
        json: isJson ? (value ?? null) : prepared instanceof Date ? prepared.toISOString() : prepared,
      });
    }
    return columns;
  }

  /** One change in one statement (alone, inside a transaction, and a group's fallback). */
  private async applySessionChangeOne({ lease, patch, events }: SessionChange): Promise<SessionChangeResult> {
    // One statement (its own transaction): the lease proof (fenceCte, the lease row
    // locked FOR KEY SHARE until it commits), the row's change gated by it and answered as stored
    // (RETURNING), and the events' insert gated by the change. It replaces BEGIN, the proof, the
    // UPDATE, a re-read of the row, the insert and COMMIT: six round trips per status change.
    const driver = this.dataSource.driver;
    const values: unknown[] = [...fenceParams(lease)];
    const param = (value: unknown) => `$${values.push(value)}`;
    const sets = this.patchColumns(patch).map((column) => `${driver.escape(column.name)} = ${param(column.value)}`);
    const updated = this.dataSource.getMetadata(InstanceEntity).updateDateColumn;
    if (updated) sets.push(`${driver.escape(updated.databaseName)} = CURRENT_TIMESTAMP`);
    // No patch, no UPDATE (the row as it is).
    const changed = Object.keys(patch).length
      ? `UPDATE instances SET ${sets.join(', ')} WHERE id = $1 AND EXISTS (SELECT 1 FROM lease) RETURNING *`
      : `SELECT * FROM instances WHERE id = $1 AND EXISTS (SELECT 1 FROM lease)`;
    const inserted = events.length
      ? `, events AS (
         INSERT INTO outbox_events (instance_id, event_type, chat_id, payload, traceparent)
         SELECT $1, e, c, p::jsonb, t FROM unnest(${param(events.map((e) => e.eventType))}::text[], ${param(events.map((e) => e.chatId ?? ''))}::text[],
           ${param(events.map((e) => JSON.stringify(e.payload)))}::text[], ${param(events.map((e) => e.traceparent ?? null))}::text[])
           WITH ORDINALITY AS u(e, c, p, t, n)
         WHERE EXISTS (SELECT 1 FROM changed)
         ORDER BY n
         RETURNING id)`
      : '';
    const rows: Array<Record<string, unknown>> = await this.db.query(
      `WITH ${fenceCte(1)},
       changed AS (${changed})${inserted}
       SELECT (SELECT count(*) FROM lease)::int AS "held?", ${events.length ? '(SELECT max(id) FROM events)::text' : 'NULL::text'} AS "last_event_id?", changed.*
       FROM (SELECT 1) AS one LEFT JOIN changed ON true`,
      values,
    );
    const row = rows[0];
    const found = row && row.id !== null && row.id !== undefined;
    return { held: Boolean(row?.['held?']), entity: found ? this.hydrate(row) : null, lastEventId: (row?.['last_event_id?'] as string | null) ?? null };
  }

  /**
   * Many changes of distinct instances in one statement, each fenced by its own lease (fenceManyCte):
   * each instance's patch is a JSON document applied over its row as it is (`jsonb_populate_record`:
   * the columns it names take its values, the others keep theirs), and its events are inserted, in
   * order, only where its row changed. Answers in the changes' order.
   */
  private async applySessionChangeMany(changes: SessionChange[]): Promise<SessionChangeResult[]> {
    const driver = this.dataSource.driver;
    const patches = changes.map((change) => this.patchColumns(change.patch));
    const names = [...new Set(patches.flatMap((columns) => columns.map((column) => column.name)))].sort();
    const updated = this.dataSource.getMetadata(InstanceEntity).updateDateColumn;
    // As alone: a change with no patch leaves the row as it is, its update time too.
    const stamp = updated
      ? `${driver.escape(updated.databaseName)} = CASE WHEN x.patch = '{}'::jsonb THEN i.${driver.escape(updated.databaseName)} ELSE CURRENT_TIMESTAMP END`
      : '';
    const sets = [
      ...(names.length
        ? [
            `(${names.map((name) => driver.escape(name)).join(', ')}) = (SELECT ${names.map((name) => `p.${driver.escape(name)}`).join(', ')} FROM jsonb_populate_record(i, x.patch) AS p)`,
          ]
        : []),
      ...(stamp ? [stamp] : []),
    ];
    const document = changes.map((change, index) => ({
      id: change.lease.instanceId,
      patch: Object.fromEntries(patches[index].map((column) => [column.name, column.json])),
    }));
    const events = changes.flatMap((change) => change.events.map((event) => ({ instanceId: change.lease.instanceId, event })));
    const rows: Array<Record<string, unknown>> = await this.db.query(
      `${PREPARED} WITH ${fenceManyCte()},
       changed AS (
         UPDATE instances AS i SET ${sets.length ? sets.join(', ') : 'id = i.id'}
         FROM jsonb_to_recordset($4::jsonb) AS x(id text, patch jsonb)
         WHERE i.id = x.id AND i.id IN (SELECT instance_id FROM lease)
         RETURNING i.*),
       events AS (
         INSERT INTO outbox_events (instance_id, event_type, chat_id, payload, traceparent)
         SELECT i, e, c, p::jsonb, t FROM unnest($5::text[], $6::text[], $7::text[], $8::text[], $9::text[]) WITH ORDINALITY AS u(i, e, c, p, t, n)
         WHERE i IN (SELECT id FROM changed)
         ORDER BY n
         RETURNING id, instance_id)
       SELECT CASE WHEN row_number() OVER () = 1 THEN held.held_instances END AS "held_instances?",
              (SELECT max(events.id) FROM events WHERE events.instance_id = changed.id)::text AS "last_event_id?", changed.*
       FROM (SELECT coalesce(array_agg(instance_id), '{}') AS held_instances FROM lease) AS held LEFT JOIN changed ON true`,
      [
        ...fenceManyParams(changes.map((change) => change.lease)),
        JSON.stringify(document),
        events.map(({ instanceId }) => instanceId),
        events.map(({ event }) => event.eventType),
        events.map(({ event }) => event.chatId ?? ''),
        events.map(({ event }) => JSON.stringify(event.payload)),
        events.map(({ event }) => event.traceparent ?? null),
      ],
    );
    const held = new Set<string>((rows.find((row) => row['held_instances?'])?.['held_instances?'] as string[] | undefined) ?? []);
    const byId = new Map(rows.filter((row) => row.id !== null && row.id !== undefined).map((row) => [row.id as string, row]));
    return changes.map((change) => {
      const row = byId.get(change.lease.instanceId);
      return {
        held: held.has(change.lease.instanceId),
        entity: row ? this.hydrate(row) : null,
        lastEventId: (row?.['last_event_id?'] as string | null | undefined) ?? null,
      };
    });
  }

  /** A raw `instances` row (its columns by database name) as the entity TypeORM would answer. */
  private hydrate(row: Record<string, unknown>): InstanceEntity {
    const metadata = this.dataSource.getMetadata(InstanceEntity);
    const entity = metadata.create() as InstanceEntity;
    for (const column of metadata.columns) column.setEntityValue(entity, this.dataSource.driver.prepareHydratedValue(row[column.databaseName], column));
    return entity;
  }

  /** The same without a lease (gateway-side changes, expiry of a pairing nobody holds). */
  async applyChange(
    instanceId: string,
    patch: InstancePatch,
    events: NewOutboxEvent[] = [],
  ): Promise<{ entity: InstanceEntity; lastEventId: string | null } | null> {
    return this.transaction(async (manager) => {
      const exists = await manager.getRepository(InstanceEntity).existsBy({ id: instanceId });
      if (!exists) return null;
      return this.within(manager).patchWithEvents(instanceId, patch, events);
    });
  }

  /**
   * Pairings whose worker died: not paired, still wanted, the QR/pairing code expired, and no live
   * lease. Their credentials only ever lived in the dead worker's memory, so nothing can finish them.
   */
  async findAbandonedPairings(limit: number): Promise<string[]> {
    const rows: Array<{ id: string }> = await this.db.query(
      `SELECT i.id FROM instances i
       LEFT JOIN session_leases l ON l.instance_id = i.id AND l.expires_at > now()
       WHERE NOT i.paired AND i.desired_state = 'connected' AND i.pairing_expires_at < now() AND l.instance_id IS NULL
       ORDER BY i.pairing_expires_at
       LIMIT $1`,
      [limit],
    );
    return rows.map((row) => row.id);
  }

  /**
   * Applies a change to an abandoned pairing, unless a worker claimed it meanwhile. Locks the
   * instance row (a new lease row's foreign-key check must wait for it) and any lease row (a claim
   * of an expired lease updates it), then re-checks both: a claim either committed before (skipped
   * here) or runs after this commits (its worker's own writes come last).
   */
  async applyToAbandonedPairing(
    instanceId: string,
    change: (entity: InstanceEntity) => { patch: InstancePatch; events: NewOutboxEvent[] },
  ): Promise<{ entity: InstanceEntity; lastEventId: string | null } | null> {
    return this.transaction(async (manager) => {
      const [candidate]: Array<{ id: string }> = await manager.query(
        `SELECT id FROM instances
         WHERE id = $1 AND NOT paired AND desired_state = 'connected' AND pairing_expires_at < now()
         FOR UPDATE`,
        [instanceId],
      );
      if (!candidate) return null;
      const [lease]: Array<{ live: boolean }> = await manager.query(`SELECT expires_at > now() AS live FROM session_leases WHERE instance_id = $1 FOR UPDATE`, [
        instanceId,
      ]);
      if (lease?.live) return null;
      const current = await manager.getRepository(InstanceEntity).findOneByOrFail({ id: instanceId });
      const { patch, events } = change(current);
      return this.within(manager).patchWithEvents(instanceId, patch, events);
    });
  }

  private async patchWithEvents(instanceId: string, patch: InstancePatch, events: NewOutboxEvent[]) {
    const repo = this.repo;
    if (Object.keys(patch).length) await repo.update({ id: instanceId }, patch);
    const entity = await repo.findOneByOrFail({ id: instanceId });
    const lastEventId = await this.alongside(this.outbox).insert(instanceId, events);
    return { entity, lastEventId };
  }
}
