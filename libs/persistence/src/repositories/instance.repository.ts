import { EntityNotFoundError } from 'typeorm';
import { InstanceEntity } from '../entities/instance.entity';
import { FencedOutError } from './auth-state.repository';
import type { Lease } from './lease.repository';
import { OutboxCursorRepository } from './outbox-cursor.repository';
import { OutboxRepository, type NewOutboxEvent } from './outbox.repository';
import { PREPARED } from '../preparing-client';
import { RepositoryBase } from './repository-base';
import { fenceCte, fenceParams } from './lease-fence';

export type InstancePatch = Partial<Omit<InstanceEntity, 'id' | 'token' | 'created' | 'updated'>>;

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
  async findManyWithCreds(ids: string[]): Promise<Map<string, { entity: InstanceEntity; creds: string | null }>> {
    if (ids.length === 0) return new Map();
    const rows: Array<Record<string, unknown>> = await this.db.query(
      `${PREPARED} SELECT i.*, c.value AS "creds?" FROM instances i LEFT JOIN auth_creds c ON c.instance_id = i.id WHERE i.id = ANY($1::text[])`,
      [ids],
    );
    return new Map(rows.map((row) => [row.id as string, { entity: this.hydrate(row), creds: (row['creds?'] as string | null) ?? null }]));
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
   * first proves the lease is still held (a fenced-out worker changes nothing).
   */
  async applySessionChange(lease: Lease, patch: InstancePatch, events: NewOutboxEvent[] = []): Promise<{ entity: InstanceEntity; lastEventId: string | null }> {
    // One statement (its own transaction): the lease proof (fenceCte, the lease row
    // locked FOR KEY SHARE until it commits), the row's change gated by it and answered as stored
    // (RETURNING), and the events' insert gated by the change. It replaces BEGIN, the proof, the
    // UPDATE, a re-read of the row, the insert and COMMIT: six round trips per status change, two of
    // them at every connect (issue #38).
    const metadata = this.dataSource.getMetadata(InstanceEntity);
    const driver = this.dataSource.driver;
    const values: unknown[] = [...fenceParams(lease)];
    const param = (value: unknown) => `$${values.push(value)}`;
    const sets: string[] = [];
    // As TypeORM's update() does: undefined values are skipped, the update date column follows; no
    // patch, no UPDATE (the row as it is).
    for (const [property, value] of Object.entries(patch)) {
      if (value === undefined) continue;
      const column = metadata.findColumnWithPropertyName(property);
      if (!column) throw new Error(`instances has no column ${property}`);
      sets.push(`${driver.escape(column.databaseName)} = ${param(driver.preparePersistentValue(value, column))}`);
    }
    const updated = metadata.updateDateColumn;
    if (updated) sets.push(`${driver.escape(updated.databaseName)} = CURRENT_TIMESTAMP`);
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
    if (!row?.['held?']) throw new FencedOutError(lease.instanceId);
    if (row.id === null || row.id === undefined) throw new EntityNotFoundError(InstanceEntity, { id: lease.instanceId });
    return { entity: this.hydrate(row), lastEventId: (row['last_event_id?'] as string | null) ?? null };
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
