import { GroupCommit } from '../group-commit';
import { PREPARED } from '../preparing-client';
import { RepositoryBase } from './repository-base';

/** A blocked contact: phone-number JID (the LID while the number is unknown) and its LID. */
export interface BlockedContact {
  jid: string;
  lid: string;
}

export interface BlockChange extends BlockedContact {
  action: 'block' | 'unblock';
}

/**
 * The blocklist of each instance as WhatsApp last said it (blocklist notifications, the blocklist
 * query). A chat of a blocked contact shows `wa_isBlocked`; both change in the caller's transaction.
 */
export class BlocklistRepository extends RepositoryBase {
  /** Applies changes; returns those that changed something (blocking a blocked contact does not). */
  async apply(instanceId: string, changes: BlockChange[]): Promise<BlockChange[]> {
    const manager = this.db;
    const applied: BlockChange[] = [];
    for (const change of changes) {
      const keys = [change.jid, change.lid].filter(Boolean);
      const rows: unknown[] =
        change.action === 'block'
          ? await manager.query(
              `INSERT INTO blocklist (instance_id, jid, lid) SELECT $1, $2, $3
               WHERE NOT EXISTS (SELECT 1 FROM blocklist WHERE instance_id = $1 AND (jid = ANY($4) OR (lid <> '' AND lid = ANY($4))))
               RETURNING jid`,
              [instanceId, change.jid, change.lid, keys],
            )
          : // In a CTE: TypeORM answers a bare DELETE with [rows, count], not the rows.
            await manager.query(
              `WITH removed AS (DELETE FROM blocklist WHERE instance_id = $1 AND (jid = ANY($2) OR (lid <> '' AND lid = ANY($2))) RETURNING jid) SELECT jid FROM removed`,
              [instanceId, keys],
            );
      if (!rows.length) continue;
      await manager.query(`UPDATE chats SET blocked = $3, updated_at = now() WHERE instance_id = $1 AND (wa_chatid = ANY($2) OR wa_chatlid = ANY($2))`, [
        instanceId,
        keys,
        change.action === 'block',
      ]);
      applied.push(change);
    }
    return applied;
  }

  /** Makes the stored list equal to `current` (the blocklist query's answer); returns the differences. */
  async replace(instanceId: string, current: BlockedContact[]): Promise<BlockChange[]> {
    const stored = await this.list(instanceId);
    return this.apply(instanceId, BlocklistRepository.differences(stored, current));
  }

  /** What makes `stored` equal to `current`: unblocks of the stored contacts it lacks, blocks of its new ones (by JID or LID). */
  static differences(stored: BlockedContact[], current: BlockedContact[]): BlockChange[] {
    const known = (contact: BlockedContact, list: BlockedContact[]) =>
      list.some((entry) => entry.jid === contact.jid || (contact.lid && entry.lid === contact.lid));
    return [
      ...stored.filter((entry) => !known(entry, current)).map((entry) => ({ ...entry, action: 'unblock' as const })),
      ...current.filter((entry) => !known(entry, stored)).map((entry) => ({ ...entry, action: 'block' as const })),
    ];
  }

  /**
   * The stored list, oldest block first. On the pool, the lists of every instance of this worker asked
   * for while one such read is in flight are read together in the next one (GroupCommit): every login
   * compares WhatsApp's blocklist with the stored one, so a storm of logins read one list per instance
   * (issue #38). Inside a transaction, one statement.
   */
  async list(instanceId: string): Promise<BlockedContact[]> {
    if (this.db !== this.dataSource) return this.listOf(instanceId);
    return this.lists.write(instanceId);
  }

  private readonly lists = new GroupCommit<string, BlockedContact[]>(
    (instanceIds) => this.listMany(instanceIds),
    (instanceId) => this.listOf(instanceId),
    { maxBatch: 100, maxInFlight: 2 },
  );

  private listOf(instanceId: string): Promise<BlockedContact[]> {
    return this.db.query(`${PREPARED} SELECT jid, lid FROM blocklist WHERE instance_id = $1 ORDER BY created_at, jid`, [instanceId]);
  }

  /** list() of many instances in one statement; answers in their order. */
  private async listMany(instanceIds: string[]): Promise<BlockedContact[][]> {
    const rows: Array<{ instance_id: string; jid: string; lid: string }> = await this.db.query(
      `${PREPARED} SELECT instance_id, jid, lid FROM blocklist WHERE instance_id = ANY($1::text[]) ORDER BY instance_id, created_at, jid`,
      [[...new Set(instanceIds)]],
    );
    const byInstance = new Map<string, BlockedContact[]>();
    for (const row of rows) {
      let list = byInstance.get(row.instance_id);
      if (!list) byInstance.set(row.instance_id, (list = []));
      list.push({ jid: row.jid, lid: row.lid });
    }
    return instanceIds.map((instanceId) => (byInstance.get(instanceId) ?? []).map((entry) => ({ ...entry })));
  }
}
