import type { SenderEventPayload } from '@gw/contracts';
import type { EntityManager } from 'typeorm';
import { MessageRepository } from './message.repository';
import { toMessageRow, type MessageRow, type NewMessage } from './message-row';
import { OutboxRepository } from './outbox.repository';
import { SendQueueRepository } from './send-queue.repository';
import { RepositoryBase } from './repository-base';

type Raw = Record<string, unknown>;

export const CAMPAIGN_STATUSES = ['scheduled', 'sending', 'paused', 'done', 'deleting'] as const;
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];

/** A folder with its counters (counted from messages.send_folder_id when read). */
export interface CampaignFolderRow {
  id: string;
  instanceId: string;
  name: string;
  info: string;
  status: CampaignStatus;
  scheduledFor: Date;
  delayMin: number;
  delayMax: number;
  owner: string;
  instanceName: string;
  createdAt: Date;
  updatedAt: Date;
  logTotal: number;
  logSuccess: number;
  logFailed: number;
  logDelivered: number;
  logRead: number;
  logPlayed: number;
}

export interface NewCampaign {
  id: string;
  instanceId: string;
  name: string;
  info: string;
  scheduledFor: Date;
  delayMin: number;
  delayMax: number;
  /** In send order: the `Queued` messages row and the request (a SendRequest; persistence knows no contracts). */
  messages: Array<{ message: NewMessage; request: unknown }>;
}

/** What one scheduler step did to a folder. */
export interface CampaignTick {
  instanceId: string;
  /** A message was moved into send_queue (the dispatchers should be woken). */
  released: boolean;
  /** Id of the last outbox event written (the relays should be woken), or null. */
  lastEventId: string | null;
}

const COUNTERS = `
  count(m.id) AS log_total,
  count(m.id) FILTER (WHERE m.status IN ('Sent', 'Delivered', 'Read', 'Played')) AS log_sucess,
  count(m.id) FILTER (WHERE m.status = 'Failed') AS log_failed,
  count(m.id) FILTER (WHERE m.status IN ('Delivered', 'Read', 'Played')) AS log_delivered,
  count(m.id) FILTER (WHERE m.status IN ('Read', 'Played')) AS log_read,
  count(m.id) FILTER (WHERE m.status = 'Played') AS log_played`;

/**
 * A folder with its counters, from its messages by `messages_send_folder`. The join names that index's
 * predicate (`m.send_folder_id <> ''`): with only `f.id <> ''` Postgres could not use the index for a
 * list of folders and read the whole `messages` table (103 ms for 30,000 messages against 0.5 ms, EXPLAIN
 * ANALYZE); one folder named by its id was found by the index already. The other statements over a
 * folder's messages name the predicate too.
 */
const FOLDER_SELECT = `
  SELECT f.*, i.owner, i.name AS instance_name, ${COUNTERS}
  FROM campaign_folders f
  JOIN instances i ON i.id = f.instance_id
  LEFT JOIN messages m ON m.instance_id = f.instance_id AND m.send_folder_id = f.id AND f.id <> '' AND m.send_folder_id <> ''`;

/** `listmessages` statuses → messages.status. */
const STATUS_GROUPS: Record<string, string[]> = {
  Scheduled: ['Queued', 'Pending'],
  Sent: ['Sent', 'Delivered', 'Read', 'Played'],
  Failed: ['Failed'],
};

/** A folder name or id already taken for the instance. */
export class CampaignExistsError extends Error {}

function toFolderRow(row: Raw): CampaignFolderRow {
  return {
    id: row.id as string,
    instanceId: row.instance_id as string,
    name: row.name as string,
    info: row.info as string,
    status: row.status as CampaignStatus,
    scheduledFor: row.scheduled_for as Date,
    delayMin: Number(row.delay_min),
    delayMax: Number(row.delay_max),
    owner: (row.owner as string) ?? '',
    instanceName: (row.instance_name as string) ?? '',
    createdAt: row.created_at as Date,
    updatedAt: row.updated_at as Date,
    logTotal: Number(row.log_total ?? 0),
    logSuccess: Number(row.log_sucess ?? 0),
    logFailed: Number(row.log_failed ?? 0),
    logDelivered: Number(row.log_delivered ?? 0),
    logRead: Number(row.log_read ?? 0),
    logPlayed: Number(row.log_played ?? 0),
  };
}

/** TypeORM answers UPDATE and DELETE with `[rows, affected]`, INSERT and SELECT with the rows. */
function rowsOf(result: unknown): Raw[] {
  if (Array.isArray(result) && result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number') return result[0] as Raw[];
  return result as Raw[];
}

/** Cancels a folder's messages that never left: still `Queued` (or `Pending` never relayed) and no longer in send_queue. */
const CANCEL_PENDING = `
  UPDATE messages m SET status = 'Canceled', updated_at = now()
  WHERE m.instance_id = $1 AND m.send_folder_id = ANY($2::text[]) AND m.send_folder_id <> ''
    AND m.relayed_at IS NULL AND m.status IN ('Queued', 'Pending')
    AND NOT EXISTS (SELECT 1 FROM send_queue q WHERE q.instance_id = m.instance_id AND q.message_id = m.message_id)`;

/**
 * Removes the folders' released message from send_queue unless it is in flight under a live claim
 * (then it is let go: at most one message per folder). takeHead only takes a row that still exists, so a
 * dispatcher about to send it refuses once this committed.
 */
const UNRELEASE = `
  DELETE FROM send_queue q USING campaign_folders f
  WHERE f.instance_id = $1 AND f.id = ANY($2::text[]) AND q.instance_id = f.instance_id AND q.message_id = f.released_message_id
    AND NOT EXISTS (SELECT 1 FROM send_lanes l WHERE l.instance_id = q.instance_id AND l.in_flight_id = q.id AND l.claimed_until > now())`;

/**
 * A message of the folder that has not ended: still in send_queue (held back by a limit, waiting, or in
 * flight), or relayed and `Pending` (no server ack yet). Through messages_send_folder.
 */
const UNFINISHED = `
  SELECT 1 FROM messages m
  WHERE m.instance_id = $1 AND m.send_folder_id = $2 AND $2 <> '' AND m.send_folder_id <> ''
    AND ((m.status = 'Pending' AND m.relayed_at IS NOT NULL)
      OR EXISTS (SELECT 1 FROM send_queue q WHERE q.instance_id = m.instance_id AND q.message_id = m.message_id))
  LIMIT 1`;
/** How often a folder whose last messages have not ended is looked at again. */
const UNFINISHED_RECHECK_S = 1;

/**
 * Campaigns (`/sender/*`; tables in migration 1763825000000-campaigns). A campaign's messages wait in
 * campaign_queue and are released into the async send queue one at a time by `tick` (run by the
 * CampaignScheduler, any number side by side: folders are locked FOR UPDATE SKIP LOCKED), so the
 * folder's own pacing applies and its messages never block the instance's other async sends.
 */
export class CampaignRepository extends RepositoryBase {
  private readonly messageRows = new MessageRepository(this.dataSource);
  private readonly queue = new SendQueueRepository(this.dataSource);
  private readonly outbox = new OutboxRepository(this.dataSource);

  /**
   * The folder, its `Queued` messages rows and its campaign_queue rows, in one transaction.
   * CampaignExistsError when the name (or id) is taken for the instance.
   */
  async create(campaign: NewCampaign): Promise<void> {
    try {
      await this.transaction(async (manager) => {
        await manager.query(
          `INSERT INTO campaign_folders (id, instance_id, name, info, scheduled_for, delay_min, delay_max) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
          [campaign.id, campaign.instanceId, campaign.name, campaign.info, campaign.scheduledFor, campaign.delayMin, campaign.delayMax],
        );
        for (const { message } of campaign.messages) await this.messageRows.within(manager).upsert(message);
        await manager.query(
          `INSERT INTO campaign_queue (folder_id, instance_id, message_id, request)
           SELECT $1, $2, mid, req::jsonb FROM unnest($3::text[], $4::text[]) WITH ORDINALITY AS u(mid, req, n) ORDER BY n`,
          [
            campaign.id,
            campaign.instanceId,
            campaign.messages.map((entry) => entry.message.messageId),
            campaign.messages.map((entry) => JSON.stringify(entry.request)),
          ],
        );
      });
    } catch (error) {
      if ((error as { code?: string }).code === '23505') throw new CampaignExistsError('campaign already exists');
      throw error;
    }
  }

  async exists(instanceId: string, nameOrId: string): Promise<boolean> {
    const rows: Raw[] = await this.db.query(`SELECT 1 FROM campaign_folders WHERE id = $2 OR (instance_id = $1 AND name = $2 AND name <> '')`, [
      instanceId,
      nameOrId,
    ]);
    return rows.length > 0;
  }

  async list(instanceId: string, status?: string): Promise<CampaignFolderRow[]> {
    const rows: Raw[] = await this.db.query(
      `${FOLDER_SELECT} WHERE f.instance_id = $1 AND ($2::text IS NULL OR f.status = $2) GROUP BY f.id, i.owner, i.name ORDER BY f.created_at DESC, f.id`,
      [instanceId, status ?? null],
    );
    return rows.map(toFolderRow);
  }

  /** The instance's folders in any of `statuses`, newest first. */
  async listWithStatus(instanceId: string, statuses: readonly CampaignStatus[]): Promise<CampaignFolderRow[]> {
    const rows: Raw[] = await this.db.query(
      `${FOLDER_SELECT} WHERE f.instance_id = $1 AND f.status = ANY($2::text[]) GROUP BY f.id, i.owner, i.name ORDER BY f.created_at DESC, f.id`,
      [instanceId, statuses],
    );
    return rows.map(toFolderRow);
  }

  async find(instanceId: string, folderId: string): Promise<CampaignFolderRow | null> {
    const rows: Raw[] = await this.db.query(`${FOLDER_SELECT} WHERE f.instance_id = $1 AND f.id = $2 GROUP BY f.id, i.owner, i.name`, [instanceId, folderId]);
    return rows.length ? toFolderRow(rows[0]) : null;
  }

  /** stop: scheduled/sending → paused. Null when the folder does not exist; else its status after. */
  async pause(instanceId: string, folderId: string): Promise<CampaignStatus | null> {
    return this.setStatus(instanceId, folderId, ['scheduled', 'sending'], 'paused');
  }

  /** continue: paused → scheduled (the scheduler moves it to sending again). */
  async resume(instanceId: string, folderId: string): Promise<CampaignStatus | null> {
    return this.setStatus(instanceId, folderId, ['paused'], 'scheduled');
  }

  private async setStatus(instanceId: string, folderId: string, from: CampaignStatus[], to: CampaignStatus): Promise<CampaignStatus | null> {
    const rows = rowsOf(
      await this.db.query(
        `WITH changed AS (
         UPDATE campaign_folders SET status = $4, updated_at = now() WHERE instance_id = $1 AND id = $2 AND status = ANY($3::text[]) RETURNING status)
       SELECT COALESCE((SELECT status FROM changed), (SELECT status FROM campaign_folders WHERE instance_id = $1 AND id = $2)) AS status`,
        [instanceId, folderId, from, to],
      ),
    );
    return (rows[0]?.status as CampaignStatus | null) ?? null;
  }

  /**
   * delete: cancels what was not sent (the released message too unless in flight), removes the folder
   * and its campaign_queue rows. Sent messages stay (with their send_folder_id). Null if unknown.
   */
  async remove(instanceId: string, folderId: string): Promise<{ canceled: number } | null> {
    const result = await this.removeWhere(instanceId, `id = $2`, [folderId]);
    return result.folders === 0 ? null : { canceled: result.canceled };
  }

  /** clearall: every folder of the instance; their pending messages are canceled. */
  async removeAll(instanceId: string): Promise<{ folders: number; canceled: number }> {
    return this.removeWhere(instanceId, `true`, []);
  }

  /** cleardone: done folders (finished more than `hours` ago when given). */
  async removeDone(instanceId: string, hours?: number): Promise<number> {
    const rows = rowsOf(
      await this.db.query(
        `DELETE FROM campaign_folders WHERE instance_id = $1 AND status = 'done'
         AND ($2::double precision IS NULL OR COALESCE(finished_at, updated_at) < now() - make_interval(secs => $2::double precision * 3600))
       RETURNING id`,
        [instanceId, hours ?? null],
      ),
    );
    return rows.length;
  }

  private async removeWhere(instanceId: string, condition: string, params: unknown[]): Promise<{ folders: number; canceled: number }> {
    return this.transaction(async (manager) => {
      const locked: Raw[] = await manager.query(`SELECT id FROM campaign_folders WHERE instance_id = $1 AND ${condition} FOR UPDATE`, [instanceId, ...params]);
      const ids = locked.map((row) => row.id as string);
      if (ids.length === 0) return { folders: 0, canceled: 0 };
      await manager.query(`UPDATE campaign_folders SET status = 'deleting', updated_at = now() WHERE id = ANY($1::text[])`, [ids]);
      await manager.query(UNRELEASE, [instanceId, ids]);
      const canceled = rowsOf(await manager.query(`${CANCEL_PENDING} RETURNING 1`, [instanceId, ids])).length;
      await manager.query(`DELETE FROM campaign_folders WHERE id = ANY($1::text[])`, [ids]);
      return { folders: ids.length, canceled };
    });
  }

  /** The folder's messages (filtered by `listmessages` status), oldest first, and how many match. */
  async messages(
    instanceId: string,
    folderId: string,
    messageStatus: string | undefined,
    limit: number,
    offset: number,
  ): Promise<{ rows: MessageRow[]; total: number }> {
    const statuses = messageStatus ? (STATUS_GROUPS[messageStatus] ?? [messageStatus]) : null;
    const params = [instanceId, folderId, statuses];
    const where = `instance_id = $1 AND send_folder_id = $2 AND $2 <> '' AND send_folder_id <> '' AND ($3::text[] IS NULL OR status = ANY($3::text[]))`;
    const rows: Raw[] = await this.db.query(`SELECT * FROM messages WHERE ${where} ORDER BY message_timestamp, id LIMIT $4 OFFSET $5`, [
      ...params,
      limit,
      offset,
    ]);
    const total: Raw[] = await this.db.query(`SELECT count(*) AS n FROM messages WHERE ${where}`, params);
    return { rows: rows.map(toMessageRow), total: Number(total[0].n) };
  }

  /** Folders that may have something to do now (scheduled or sending, start time reached). */
  async dueFolders(limit: number): Promise<string[]> {
    const rows: Raw[] = await this.db.query(
      `SELECT id FROM campaign_folders WHERE status IN ('scheduled', 'sending') AND scheduled_for <= now()
         AND (released_message_id IS NOT NULL OR next_at IS NULL OR next_at <= now())
       ORDER BY updated_at LIMIT $1`,
      [limit],
    );
    return rows.map((row) => row.id as string);
  }

  /**
   * One step of a folder, in one transaction under its row lock (SKIP LOCKED: another scheduler has
   * it, or an edit is running): when its released message has left send_queue (sent or failed),
   * the next release waits the folder's random gap; when due, the head of campaign_queue moves into
   * send_queue (same ids); with nothing left to release, the folder is done once every message of it
   * has ended (sent or failed; see UNFINISHED), and stays `sending` until then. `sender` events at the first
   * release and at completion. Crash before commit: nothing happened; the next tick redoes it.
   */
  async tick(folderId: string): Promise<CampaignTick | null> {
    return this.transaction(async (manager) => {
      const rows: Raw[] = await manager.query(
        `SELECT * FROM campaign_folders WHERE id = $1 AND status IN ('scheduled', 'sending') AND scheduled_for <= now() FOR UPDATE SKIP LOCKED`,
        [folderId],
      );
      if (!rows.length) return null;
      const folder = rows[0];
      const instanceId = folder.instance_id as string;
      const none: CampaignTick = { instanceId, released: false, lastEventId: null };
      if (folder.released_message_id !== null) {
        // A released send held back by WhatsApp's new-chat limits lets the folder go on (it goes when the limit ends).
        const inQueue: Raw[] = await manager.query(
          `SELECT 1 FROM send_queue WHERE instance_id = $1 AND message_id = $2 AND (held_until IS NULL OR held_until <= now())`,
          [instanceId, folder.released_message_id],
        );
        if (inQueue.length) return none;
        const min = Math.max(0, Number(folder.delay_min));
        const gapSeconds = min + Math.random() * Math.max(0, Number(folder.delay_max) - min);
        const updated: Raw[] = await manager.query(
          `UPDATE campaign_folders SET released_message_id = NULL, next_at = now() + make_interval(secs => $2::double precision), updated_at = now()
           WHERE id = $1 RETURNING next_at <= now() AS due`,
          [folderId, gapSeconds],
        );
        if (!updated[0].due) return none;
      } else if (folder.next_at !== null && (folder.next_at as Date).getTime() > Date.now()) {
        return none;
      }
      const head = rowsOf(
        await manager.query(
          `DELETE FROM campaign_queue WHERE id = (SELECT id FROM campaign_queue WHERE folder_id = $1 ORDER BY id LIMIT 1) RETURNING message_id, request`,
          [folderId],
        ),
      );
      if (!head.length) {
        // Done only when every message of the folder has ended: none still in send_queue (one held back by
        // WhatsApp's new-chat limits until the limit ends, one a dispatcher is at) and none relayed but not
        // acknowledged yet (the unacked sweep resends or fails it). Meanwhile the folder stays `sending`.
        const open: Raw[] = await manager.query(UNFINISHED, [instanceId, folderId]);
        if (open.length) {
          await manager.query(`UPDATE campaign_folders SET next_at = now() + make_interval(secs => $2::double precision) WHERE id = $1`, [
            folderId,
            UNFINISHED_RECHECK_S,
          ]);
          return none;
        }
        await manager.query(`UPDATE campaign_folders SET status = 'done', finished_at = now(), updated_at = now() WHERE id = $1`, [folderId]);
        return { instanceId, released: false, lastEventId: await this.event(manager, folderId, 'done') };
      }
      await this.queue.within(manager).appendToLane(instanceId, head[0].message_id as string, head[0].request);
      const first = folder.started_at === null;
      await manager.query(
        `UPDATE campaign_folders SET status = 'sending', released_message_id = $2, next_at = NULL, started_at = COALESCE(started_at, now()), updated_at = now() WHERE id = $1`,
        [folderId, head[0].message_id],
      );
      return { instanceId, released: true, lastEventId: first ? await this.event(manager, folderId, 'sending') : null };
    });
  }

  /** The `sender` webhook event of a folder (counters as of now), in the caller's transaction. */
  private async event(manager: EntityManager, folderId: string, status: CampaignStatus): Promise<string | null> {
    const rows: Raw[] = await manager.query(`${FOLDER_SELECT} WHERE f.id = $1 GROUP BY f.id, i.owner, i.name`, [folderId]);
    if (!rows.length) return null;
    const folder = toFolderRow(rows[0]);
    const queued: Raw[] = await manager.query(`SELECT count(*) AS n FROM campaign_queue WHERE folder_id = $1`, [folderId]);
    const payload: SenderEventPayload = {
      EventType: 'sender',
      folder_id: folder.id,
      folder: folder.name,
      info: folder.info,
      status,
      count: folder.logTotal,
      pending: Number(queued[0].n),
      log_total: folder.logTotal,
      log_sucess: folder.logSuccess,
      log_failed: folder.logFailed,
      log_delivered: folder.logDelivered,
      log_read: folder.logRead,
      log_played: folder.logPlayed,
      instanceName: folder.instanceName,
      owner: folder.owner,
    };
    return this.outbox.within(manager).insert(folder.instanceId, [{ eventType: 'sender', payload }]);
  }
}
