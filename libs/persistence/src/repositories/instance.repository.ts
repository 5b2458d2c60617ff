import type { DataSource, EntityManager } from 'typeorm';
import { InstanceEntity } from '../entities/instance.entity';
import { FencedOutError } from './auth-state.repository';
import { type Lease, LeaseRepository } from './lease.repository';
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

  list(): Promise<InstanceEntity[]> {
    return this.repo.find({ order: { created: 'ASC' } });
  }

  /** Applies a patch and returns the row as stored, or null when the instance does not exist. */
  async update(id: string, patch: InstancePatch): Promise<InstanceEntity | null> {
    if (Object.keys(patch).length) await this.repo.update({ id }, patch);
    return this.findById(id);
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
  async applyChange(instanceId: string, patch: InstancePatch, events: NewOutboxEvent[] = []): Promise<{ entity: InstanceEntity; lastEventId: string | null } | null> {
    return this.dataSource.transaction(async (manager) => {
      const exists = await manager.getRepository(InstanceEntity).existsBy({ id: instanceId });
      if (!exists) return null;
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
