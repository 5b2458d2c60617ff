import { PREPARED } from '../preparing-client';
import { RepositoryBase } from './repository-base';

/** One LID ↔ phone-number pair, both as user JIDs without device (`123@lid`, `5511…@s.whatsapp.net`). */
export interface LidMapping {
  lid: string;
  pn: string;
}

/**
 * The LID ↔ phone-number map of an instance, as WhatsApp revealed it (message keys, `lid-mapping.update`,
 * history sync). Baileys keeps its own copy in the auth keys; this one is for the API side (chats,
 * contacts and sends addressed either way).
 */
export class LidMappingRepository extends RepositoryBase {
  /** Stores pairs (a LID's latest number wins); returns the pairs that were new or changed. */
  async store(instanceId: string, pairs: LidMapping[]): Promise<LidMapping[]> {
    const manager = this.db;
    const unique = new Map<string, string>();
    for (const { lid, pn } of pairs) if (lid.endsWith('@lid') && pn && !pn.endsWith('@lid')) unique.set(lid, pn);
    if (unique.size === 0) return [];
    const rows: Array<{ lid: string; pn: string }> = await manager.query(
      `${PREPARED} WITH changed AS (
         INSERT INTO lid_mappings (instance_id, lid, pn)
         SELECT $1, l, p FROM unnest($2::text[], $3::text[]) AS u(l, p)
         ON CONFLICT (instance_id, lid) DO UPDATE SET pn = EXCLUDED.pn WHERE lid_mappings.pn <> EXCLUDED.pn
         RETURNING lid, pn)
       SELECT * FROM changed`,
      [instanceId, [...unique.keys()], [...unique.values()]],
    );
    return rows.map((row) => ({ lid: row.lid, pn: row.pn }));
  }

  /**
   * Pairs just learned fill in the phone number of messages stored while their sender was known only
   * by its LID (sender_pn '', and a 1:1 chat id that was the LID). Returns how many rows changed.
   *
   * The rows are found by `messages_unresolved_sender`, whose predicate the statement names whole
   * (`sender_pn = '' AND sender_lid <> ''`): with only `sender_pn = ''`, Postgres could not use that index
   * and read the whole `messages` table, every instance's, for each batch of pairs (94 ms for one
   * instance's 30,000 messages against 0.5 ms; EXPLAIN ANALYZE after bench/history, which learns pairs
   * with every history chunk).
   */
  async resolveMessages(instanceId: string, pairs: LidMapping[]): Promise<number> {
    const manager = this.db;
    if (pairs.length === 0) return 0;
    const rows: unknown[] = await manager.query(
      `${PREPARED} WITH pairs AS (SELECT * FROM unnest($2::text[], $3::text[]) AS u(lid, pn)),
       changed AS (
         UPDATE messages m SET sender_pn = p.pn,
           chat_id = CASE WHEN m.chat_id = p.lid THEN p.pn ELSE m.chat_id END,
           updated_at = now()
         FROM pairs p WHERE m.instance_id = $1 AND m.sender_lid = p.lid AND m.sender_pn = '' AND m.sender_lid <> ''
         RETURNING 1)
       SELECT 1 FROM changed`,
      [instanceId, pairs.map((pair) => pair.lid), pairs.map((pair) => pair.pn)],
    );
    return rows.length;
  }

  async pnForLid(instanceId: string, lid: string): Promise<string | null> {
    const rows: Array<{ pn: string }> = await this.db.query(`SELECT pn FROM lid_mappings WHERE instance_id = $1 AND lid = $2`, [instanceId, lid]);
    return rows.length ? rows[0].pn : null;
  }

  async lidForPn(instanceId: string, pn: string): Promise<string | null> {
    const rows: Array<{ lid: string }> = await this.db.query(`SELECT lid FROM lid_mappings WHERE instance_id = $1 AND pn = $2 LIMIT 1`, [instanceId, pn]);
    return rows.length ? rows[0].lid : null;
  }
}
