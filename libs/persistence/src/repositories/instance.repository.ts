import type { DataSource, EntityManager } from 'typeorm';
import { InstanceEntity } from '../entities/instance.entity';
import { FencedOutError } from './auth-state.repository';
import { type Lease, LeaseRepository } from './lease.repository';
import { OutboxCursorRepository } from './outbox-cursor.repository';
import { OutboxRepository, type NewOutboxEvent } from './outbox.repository';

export type InstancePatch = Partial<Omit<InstanceEntity, 'id' | 'token' | 'created' | 'updated'>>;

export class InstanceRepository {
  constructor(private readonly dataSource: DataSource) {}

  private get repo() {
    return this.dataSource.getRepository(InstanceEntity);
  }

  async create(values: Pick<InstanceEntity, 'id' | 'token' | 'name'> & InstancePatch): Promise<InstanceEntity> {
    const entity = this.repo.create(values);
    return this.repo.save(entity);
  }

  findById(id: string): Promise<InstanceEntity | null> {
    return this.repo.findOneBy({ id });
  }

  findByToken(token: string): Promise<InstanceEntity | null> {
    return this.repo.findOneBy({ token });
  }

  /** The instance's token alone (the relay puts it in payloads); null when the instance does not exist. */
  async findToken(id: string): Promise<string | null> {
    const rows: Array<{ token: string }> = await this.dataSource.query(`SELECT token FROM instances WHERE id = $1`, [id]);
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
    return this.dataSource.transaction(async (manager) => {
      const [current]: Array<{ chatbot_enabled: boolean }> = await manager.query(`SELECT chatbot_enabled FROM instances WHERE id = $1 FOR UPDATE`, [id]);
      if (!current) return null;
      if (Object.keys(patch).length) await manager.getRepository(InstanceEntity).update({ id }, patch);
      if (patch.chatbotEnabled === true) await OutboxCursorRepository.startWithin(manager, consumer, id, !current.chatbot_enabled);
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
    return this.dataSource.transaction(async (manager) => {
      if (!(await LeaseRepository.holdsWithin(manager, lease))) throw new FencedOutError(lease.instanceId);
      return InstanceRepository.patchWithEvents(manager, lease.instanceId, patch, events);
    });
  }

  /** The same without a lease (gateway-side changes, expiry of a pairing nobody holds). */
  async applyChange(
    instanceId: string,
    patch: InstancePatch,
    events: NewOutboxEvent[] = [],
  ): Promise<{ entity: InstanceEntity; lastEventId: string | null } | null> {
    return this.dataSource.transaction(async (manager) => {
      const exists = await manager.getRepository(InstanceEntity).existsBy({ id: instanceId });
      if (!exists) return null;
      return InstanceRepository.patchWithEvents(manager, instanceId, patch, events);
    });
  }

  /**
   * Pairings whose worker died: not paired, still wanted, the QR/pairing code expired, and no live
   * lease. Their credentials only ever lived in the dead worker's memory, so nothing can finish them.
   */
  async findAbandonedPairings(limit: number): Promise<string[]> {
    const rows: Array<{ id: string }> = await this.dataSource.query(
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
    return this.dataSource.transaction(async (manager) => {
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
      return InstanceRepository.patchWithEvents(manager, instanceId, patch, events);
    });
  }

  private static async patchWithEvents(manager: EntityManager, instanceId: string, patch: InstancePatch, events: NewOutboxEvent[]) {
    const repo = manager.getRepository(InstanceEntity);
    if (Object.keys(patch).length) await repo.update({ id: instanceId }, patch);
    const entity = await repo.findOneByOrFail({ id: instanceId });
    const lastEventId = await OutboxRepository.insertWithin(manager, instanceId, events);
    return { entity, lastEventId };
  }
}
