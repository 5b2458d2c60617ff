import type { DataSource } from 'typeorm';
import { FencedOutError } from './fenced-out.error';
import { type Lease, LeaseRepository } from './lease.repository';
import { PREPARED } from '../preparing-client';

export { FencedOutError };

export interface KeyMutation {
  type: string;
  id: string;
  /** Serialised value, or null to delete. */
  value: string | null;
}

/**
 * Baileys auth state rows. Values arrive already serialised (BufferJSON) so this layer knows nothing
 * about Baileys. Every write is one transaction that first proves the caller still holds the lease.
 */
export class AuthStateRepository {
  constructor(private readonly dataSource: DataSource) {}

  async readCreds(instanceId: string): Promise<string | null> {
    const rows: Array<{ value: string }> = await this.dataSource.query(`SELECT value FROM auth_creds WHERE instance_id = $1`, [instanceId]);
    return rows.length ? rows[0].value : null;
  }

  async readKeys(instanceId: string, type: string, ids: string[]): Promise<Map<string, string>> {
    if (ids.length === 0) return new Map();
    const rows: Array<{ key_id: string; value: string }> = await this.dataSource.query(
      `${PREPARED} SELECT key_id, value FROM auth_keys WHERE instance_id = $1 AND type = $2 AND key_id = ANY($3::text[])`,
      [instanceId, type, ids],
    );
    return new Map(rows.map((row) => [row.key_id, row.value]));
  }

  /**
   * Writes creds and/or key mutations atomically; throws FencedOutError when the lease is gone.
   * One statement (Baileys writes a Signal session on every message it encrypts, so this is on the
   * send path): each change is a data-modifying CTE gated by the lease proof, all in one transaction.
   */
  async write(lease: Lease, change: { creds?: string; keys?: KeyMutation[] }): Promise<void> {
    const keys = change.keys ?? [];
    const upserts = keys.filter((key) => key.value !== null);
    const deletes = keys.filter((key) => key.value === null);
    const rows: Array<{ held: number }> = await this.dataSource.query(
      `WITH ${LeaseRepository.fenceCte(1)},
       creds AS (
         INSERT INTO auth_creds (instance_id, value) SELECT $1, $4::text WHERE $4::text IS NOT NULL AND EXISTS (SELECT 1 FROM lease)
         ON CONFLICT (instance_id) DO UPDATE SET value = EXCLUDED.value),
       upserted AS (
         INSERT INTO auth_keys (instance_id, type, key_id, value)
         SELECT $1, t, i, v FROM unnest($5::text[], $6::text[], $7::text[]) AS u(t, i, v) WHERE EXISTS (SELECT 1 FROM lease)
         ON CONFLICT (instance_id, type, key_id) DO UPDATE SET value = EXCLUDED.value),
       deleted AS (
         DELETE FROM auth_keys WHERE instance_id = $1 AND (type, key_id) IN (SELECT * FROM unnest($8::text[], $9::text[])) AND EXISTS (SELECT 1 FROM lease))
       SELECT (SELECT count(*) FROM lease)::int AS held`,
      [
        ...LeaseRepository.fenceParams(lease),
        change.creds ?? null,
        upserts.map((k) => k.type),
        upserts.map((k) => k.id),
        upserts.map((k) => k.value),
        deletes.map((k) => k.type),
        deletes.map((k) => k.id),
      ],
    );
    if (!rows[0]?.held) throw new FencedOutError(lease.instanceId);
  }

  /**
   * Replaces everything stored for the instance with one snapshot (the first flush of a new pairing:
   * keys of an earlier linked device must not survive next to the new identity). Fenced like write().
   */
  async replace(lease: Lease, snapshot: { creds: string; keys: KeyMutation[] }): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      if (!(await LeaseRepository.holdsWithin(manager, lease))) throw new FencedOutError(lease.instanceId);
      await manager.query(`DELETE FROM auth_keys WHERE instance_id = $1`, [lease.instanceId]);
      await manager.query(
        `INSERT INTO auth_creds (instance_id, value) VALUES ($1, $2)
         ON CONFLICT (instance_id) DO UPDATE SET value = EXCLUDED.value`,
        [lease.instanceId, snapshot.creds],
      );
      const keys = snapshot.keys.filter((key) => key.value !== null);
      if (keys.length) {
        await manager.query(
          `INSERT INTO auth_keys (instance_id, type, key_id, value)
           SELECT $1, t, i, v FROM unnest($2::text[], $3::text[], $4::text[]) AS u(t, i, v)`,
          [lease.instanceId, keys.map((k) => k.type), keys.map((k) => k.id), keys.map((k) => k.value)],
        );
      }
    });
  }

  /** Forgets the linked device (logout) on behalf of the lease holder; a stale holder wipes nothing. */
  async clearFenced(lease: Lease): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      if (!(await LeaseRepository.holdsWithin(manager, lease))) throw new FencedOutError(lease.instanceId);
      await manager.query(`DELETE FROM auth_keys WHERE instance_id = $1`, [lease.instanceId]);
      await manager.query(`DELETE FROM auth_creds WHERE instance_id = $1`, [lease.instanceId]);
    });
  }

  /** Forgets the linked device entirely (logout). */
  async clear(instanceId: string): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      await manager.query(`DELETE FROM auth_keys WHERE instance_id = $1`, [instanceId]);
      await manager.query(`DELETE FROM auth_creds WHERE instance_id = $1`, [instanceId]);
    });
  }
}
