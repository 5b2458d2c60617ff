import { GroupCommit, SLOW_STATEMENT } from '../group-commit';
import { FencedOutError } from './fenced-out.error';
import { type Lease, LeaseRepository } from './lease.repository';
import { PREPARED } from '../preparing-client';
import { RepositoryBase } from './repository-base';
import { fenceCte, fenceManyCte, fenceManyParams, fenceParams } from './lease-fence';

export { FencedOutError };

/** One write of an instance's auth state: new creds and/or key mutations. */
export interface AuthChange {
  creds?: string;
  keys?: KeyMutation[];
}

/** One read of keys: some ids of one type of one instance. */
interface KeyRead {
  instanceId: string;
  type: string;
  ids: string[];
}

function keyOf(instanceId: string, type: string, id: string): string {
  return `${instanceId}\u0000${type}\u0000${id}`;
}

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
export class AuthStateRepository extends RepositoryBase {
  private readonly leases = new LeaseRepository(this.dataSource);

  async readCreds(instanceId: string): Promise<string | null> {
    const rows: Array<{ value: string }> = await this.db.query(`SELECT value FROM auth_creds WHERE instance_id = $1`, [instanceId]);
    return rows.length ? rows[0].value : null;
  }

  /**
   * The stored values of `ids` of one key type (absent ones are left out). On the pool, the reads of
   * every instance of this worker that arrive while one read statement is in flight go together in the
   * next one (GroupCommit, as the writes): a login reads three keys that usually do not exist yet (its
   * own LID mapping, its own session under the LID, the tctoken index), so a storm of logins (a restart,
   * a takeover) was three statements per instance (issue #38). Inside a transaction, one statement.
   */
  async readKeys(instanceId: string, type: string, ids: string[]): Promise<Map<string, string>> {
    if (ids.length === 0) return new Map();
    if (this.db !== this.dataSource) return this.readKeysOf({ instanceId, type, ids });
    return this.keyReads.write({ instanceId, type, ids });
  }

  private readonly keyReads = new GroupCommit<KeyRead, Map<string, string>>(
    (items) => this.readKeysMany(items),
    (item) => this.readKeysOf(item),
    { maxBatch: 100, maxInFlight: 2 },
  );

  private async readKeysOf({ instanceId, type, ids }: KeyRead): Promise<Map<string, string>> {
    const rows: Array<{ key_id: string; value: string }> = await this.db.query(
      `${PREPARED} SELECT key_id, value FROM auth_keys WHERE instance_id = $1 AND type = $2 AND key_id = ANY($3::text[])`,
      [instanceId, type, ids],
    );
    return new Map(rows.map((row) => [row.key_id, row.value]));
  }

  /** readKeys() for many reads of any instances in one statement; answers in the reads' order. */
  private async readKeysMany(items: KeyRead[]): Promise<Array<Map<string, string>>> {
    const instances: string[] = [];
    const types: string[] = [];
    const keys: string[] = [];
    for (const item of items)
      for (const id of item.ids) {
        instances.push(item.instanceId);
        types.push(item.type);
        keys.push(id);
      }
    const rows: Array<{ instance_id: string; type: string; key_id: string; value: string }> = await this.db.query(
      `${PREPARED} SELECT k.instance_id, k.type, k.key_id, k.value
       FROM unnest($1::text[], $2::text[], $3::text[]) AS w(instance_id, type, key_id)
       JOIN auth_keys k ON k.instance_id = w.instance_id AND k.type = w.type AND k.key_id = w.key_id`,
      [instances, types, keys],
    );
    const found = new Map<string, string>();
    for (const row of rows) found.set(keyOf(row.instance_id, row.type, row.key_id), row.value);
    return items.map((item) => {
      const values = new Map<string, string>();
      for (const id of item.ids) {
        const value = found.get(keyOf(item.instanceId, item.type, id));
        if (value !== undefined) values.set(id, value);
      }
      return values;
    });
  }

  /**
   * Writes creds and/or key mutations atomically; throws FencedOutError when the lease is gone.
   * Baileys writes a Signal session on every message it encrypts, so this is on the send path: the
   * writes of all instances of this worker that arrive while one is in flight go together in the next
   * statement (group commit, ADR 0012), each fenced by its own lease; one write per instance per
   * statement, so an instance's writes keep their order. One statement in flight, so groups stay large;
   * but one that has waited `SLOW_STATEMENT` (for a row: an instance being deleted holds its lease row
   * while the cascade runs) no longer holds back the other instances' writes, so not every send and
   * decrypt of the worker (GroupCommit's `slow`).
   */
  write(lease: Lease, change: AuthChange): Promise<void> {
    return this.writes.write({ lease, change }).then((held) => {
      if (!held) throw new FencedOutError(lease.instanceId);
    });
  }

  private readonly writes = new GroupCommit<{ lease: Lease; change: AuthChange }, boolean>(
    (items) => this.writeMany(items),
    (item) => this.writeOne(item.lease, item.change),
    { maxBatch: 200, maxInFlight: 1, key: (item) => item.lease.instanceId, slow: SLOW_STATEMENT },
  );

  /**
   * One write: each change a data-modifying CTE gated by the lease proof, all in one statement. Whether the lease held.
   * The values Postgres could plan for (the creds, the arrays) are read through scalar subqueries: a plan made for each
   * call's values (an absent creds, arrays of one or two keys) always looked cheaper than the generic one, and Postgres
   * planned every Signal key write again (bench/cluster's steady state, pg_stat_statements: 2,350 plans for 2,350
   * calls, ~0.25 ms of its CPU each). Behind a subquery every plan estimates alike and the generic plan is kept.
   */
  private async writeOne(lease: Lease, change: AuthChange): Promise<boolean> {
    const keys = change.keys ?? [];
    const upserts = keys.filter((key) => key.value !== null);
    const deletes = keys.filter((key) => key.value === null);
    const rows: Array<{ held: number }> = await this.db.query(
      `WITH ${fenceCte(1)},
       creds AS (
         INSERT INTO auth_creds (instance_id, value) SELECT $1, c.value FROM (SELECT $4::text AS value) AS c WHERE c.value IS NOT NULL AND EXISTS (SELECT 1 FROM lease)
         ON CONFLICT (instance_id) DO UPDATE SET value = EXCLUDED.value),
       upserted AS (
         INSERT INTO auth_keys (instance_id, type, key_id, value)
         SELECT $1, t, i, v FROM unnest((SELECT $5::text[]), (SELECT $6::text[]), (SELECT $7::text[])) AS u(t, i, v) WHERE EXISTS (SELECT 1 FROM lease)
         ON CONFLICT (instance_id, type, key_id) DO UPDATE SET value = EXCLUDED.value),
       deleted AS (
         DELETE FROM auth_keys WHERE instance_id = $1 AND (type, key_id) IN (SELECT * FROM unnest((SELECT $8::text[]), (SELECT $9::text[]))) AND EXISTS (SELECT 1 FROM lease))
       SELECT (SELECT count(*) FROM lease)::int AS held`,
      [
        ...fenceParams(lease),
        change.creds ?? null,
        upserts.map((k) => k.type),
        upserts.map((k) => k.id),
        upserts.map((k) => k.value),
        deletes.map((k) => k.type),
        deletes.map((k) => k.id),
      ],
    );
    return Boolean(rows[0]?.held);
  }

  /**
   * Writes of several instances (one each) in ONE statement, each instance's rows written only while
   * its lease holds (fenceManyCte). Answers, in order, whether each lease held. Its arrays read through
   * scalar subqueries, as writeOne's.
   */
  private async writeMany(items: Array<{ lease: Lease; change: AuthChange }>): Promise<boolean[]> {
    const creds = items.filter((item) => item.change.creds !== undefined);
    const upserts = items.flatMap((item) =>
      (item.change.keys ?? []).filter((key) => key.value !== null).map((key) => ({ instanceId: item.lease.instanceId, key })),
    );
    const deletes = items.flatMap((item) =>
      (item.change.keys ?? []).filter((key) => key.value === null).map((key) => ({ instanceId: item.lease.instanceId, key })),
    );
    const rows: Array<{ held: string[] }> = await this.db.query(
      `${PREPARED} WITH ${fenceManyCte()},
       creds AS (
         INSERT INTO auth_creds (instance_id, value)
         SELECT c.instance_id, c.value FROM unnest((SELECT $4::text[]), (SELECT $5::text[])) AS c(instance_id, value) WHERE c.instance_id IN (SELECT instance_id FROM lease)
         ON CONFLICT (instance_id) DO UPDATE SET value = EXCLUDED.value),
       upserted AS (
         INSERT INTO auth_keys (instance_id, type, key_id, value)
         SELECT u.instance_id, u.type, u.key_id, u.value FROM unnest((SELECT $6::text[]), (SELECT $7::text[]), (SELECT $8::text[]), (SELECT $9::text[])) AS u(instance_id, type, key_id, value)
         WHERE u.instance_id IN (SELECT instance_id FROM lease)
         ON CONFLICT (instance_id, type, key_id) DO UPDATE SET value = EXCLUDED.value),
       deleted AS (
         DELETE FROM auth_keys WHERE (instance_id, type, key_id) IN (
           SELECT d.instance_id, d.type, d.key_id FROM unnest((SELECT $10::text[]), (SELECT $11::text[]), (SELECT $12::text[])) AS d(instance_id, type, key_id)
           WHERE d.instance_id IN (SELECT instance_id FROM lease)))
       SELECT coalesce(array_agg(instance_id), '{}') AS held FROM lease`,
      [
        ...fenceManyParams(items.map((item) => item.lease)),
        creds.map((item) => item.lease.instanceId),
        creds.map((item) => item.change.creds as string),
        upserts.map((entry) => entry.instanceId),
        upserts.map((entry) => entry.key.type),
        upserts.map((entry) => entry.key.id),
        upserts.map((entry) => entry.key.value as string),
        deletes.map((entry) => entry.instanceId),
        deletes.map((entry) => entry.key.type),
        deletes.map((entry) => entry.key.id),
      ],
    );
    const held = new Set(rows[0]?.held ?? []);
    return items.map((item) => held.has(item.lease.instanceId));
  }

  /**
   * Replaces everything stored for the instance with one snapshot (the first flush of a new pairing:
   * keys of an earlier linked device must not survive next to the new identity). Fenced like write().
   */
  async replace(lease: Lease, snapshot: { creds: string; keys: KeyMutation[] }): Promise<void> {
    await this.transaction(async (manager) => {
      if (!(await this.leases.within(manager).holds(lease))) throw new FencedOutError(lease.instanceId);
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
    await this.transaction(async (manager) => {
      if (!(await this.leases.within(manager).holds(lease))) throw new FencedOutError(lease.instanceId);
      await manager.query(`DELETE FROM auth_keys WHERE instance_id = $1`, [lease.instanceId]);
      await manager.query(`DELETE FROM auth_creds WHERE instance_id = $1`, [lease.instanceId]);
    });
  }

  /** Forgets the linked device entirely (logout). */
  async clear(instanceId: string): Promise<void> {
    await this.transaction(async (manager) => {
      await manager.query(`DELETE FROM auth_keys WHERE instance_id = $1`, [instanceId]);
      await manager.query(`DELETE FROM auth_creds WHERE instance_id = $1`, [instanceId]);
    });
  }
}
