import { recordId } from '@gw/platform';
import type { EntityManager } from 'typeorm';
import { type ObjectStore, objectStoreFromEnv } from '../media/object-store';
import { FileRepository } from './file.repository';
import type { Database } from '../tx';
import { RepositoryBase } from './repository-base';

export interface QuickReplyRow {
  id: string;
  instanceId: string;
  shortCut: string;
  aiDescription: string;
  onWhatsApp: boolean;
  /** Its id in the phone's app state (the `quick_reply` mutation index) while it is on WhatsApp. */
  waId: string | null;
  /** Who made it: `api` (editable through the API, which writes back to the phone) or `whatsapp` (synced from the phone, read-only). */
  origin: 'api' | 'whatsapp';
  /** The stored message: `kind` and the body of that kind's send endpoint (a stored file's link is not in it). */
  message: Record<string, unknown>;
  /** The stored file of a base64 upload, if any. */
  fileId: string | null;
  fileSize: number;
  createdAt: Date;
  updatedAt: Date;
}

/** What a create or update writes. */
export interface QuickReplyValues {
  shortCut: string;
  aiDescription: string;
  message: Record<string, unknown>;
  /** The reply's WhatsApp id once written to the phone (on WhatsApp); null takes it off; absent leaves it as it is. */
  waId?: string | null;
}

/** A quick reply as the phone's app state holds it. */
export interface PhoneQuickReply {
  waId: string;
  shortCut: string;
  text: string;
}

/** A base64 file to store with the reply. */
export interface QuickReplyUpload {
  data: Buffer;
  mimetype: string;
  fileName: string;
}

/**
 * What to do with the reply's file on update: `keep` the stored one, `replace` it with an upload, or
 * `none` (the message has no stored file any more; the old one is deleted).
 */
export type QuickReplyFileChange = { action: 'keep' } | { action: 'none' } | { action: 'replace'; upload: QuickReplyUpload };

/** A write refused because the instance's stored files would exceed `limit` bytes (`used`: what it holds without this reply). */
export interface OverInstanceLimit {
  overLimit: true;
  used: number;
}

const COLUMNS = `id, instance_id, short_cut, ai_description, on_whatsapp, wa_id, origin, message, file_id, file_size, created_at, updated_at`;

function toRow(raw: Record<string, unknown>): QuickReplyRow {
  return {
    id: raw.id as string,
    instanceId: raw.instance_id as string,
    shortCut: raw.short_cut as string,
    aiDescription: raw.ai_description as string,
    onWhatsApp: raw.on_whatsapp as boolean,
    waId: (raw.wa_id as string | null) ?? null,
    origin: raw.origin === 'whatsapp' ? 'whatsapp' : 'api',
    message: raw.message as Record<string, unknown>,
    fileId: (raw.file_id as string | null) ?? null,
    fileSize: Number(raw.file_size),
    createdAt: raw.created_at as Date,
    updatedAt: raw.updated_at as Date,
  };
}

/**
 * Quick replies, each instance's own: every statement is scoped by `instance_id`, so one instance
 * never reads or changes another's. A base64 file is kept in the media store (FileRepository: a
 * `stored_files` row, its bytes in Postgres or S3) with no expiry, and deleted with the reply or when an
 * update drops or replaces it (a file in S3 has its object queued for deletion, see FileRepository).
 */
export class QuickReplyRepository extends RepositoryBase {
  private readonly objects: ObjectStore | null;
  private readonly files: FileRepository;

  constructor(database: Database, objects: ObjectStore | null = objectStoreFromEnv()) {
    super(database);
    this.objects = objects;
    this.files = new FileRepository(database, objects);
  }

  async list(instanceId: string): Promise<QuickReplyRow[]> {
    const rows: Array<Record<string, unknown>> = await this.db.query(`SELECT ${COLUMNS} FROM quick_replies WHERE instance_id = $1 ORDER BY created_at, id`, [
      instanceId,
    ]);
    return rows.map(toRow);
  }

  async find(instanceId: string, id: string): Promise<QuickReplyRow | null> {
    const rows: Array<Record<string, unknown>> = await this.db.query(`SELECT ${COLUMNS} FROM quick_replies WHERE instance_id = $1 AND id = $2`, [
      instanceId,
      id,
    ]);
    return rows.length ? toRow(rows[0]) : null;
  }

  /**
   * A new reply, with its upload stored when there is one. The instance's stored files may total at
   * most `limit` bytes: the sum is read and the rows written under a per-instance transaction lock, so
   * two concurrent uploads cannot both fit into the last free space.
   */
  async create(instanceId: string, values: QuickReplyValues, upload: QuickReplyUpload | null, limit: number): Promise<QuickReplyRow | OverInstanceLimit> {
    return this.transaction(async (manager) => {
      const used = await this.lockAndMeasure(manager, instanceId, null);
      const size = upload?.data.length ?? 0;
      if (size > 0 && used + size > limit) return { overLimit: true as const, used };
      const fileId = upload ? await this.storeFile(manager, instanceId, upload) : null;
      if (values.waId) await QuickReplyRepository.claimWaId(manager, instanceId, values.waId, null);
      const rows: Array<Record<string, unknown>> = await manager.query(
        `INSERT INTO quick_replies (id, instance_id, short_cut, ai_description, message, file_id, file_size, wa_id, on_whatsapp)
         VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8::text, $8::text IS NOT NULL) RETURNING ${COLUMNS}`,
        [recordId(), instanceId, values.shortCut, values.aiDescription, JSON.stringify(values.message), fileId, size, values.waId ?? null],
      );
      return toRow(rows[0]);
    });
  }

  /** Replaces a reply's fields (and its file as `file` says); null when the instance has no such reply. Same limit as `create`. */
  async update(
    instanceId: string,
    id: string,
    values: QuickReplyValues,
    file: QuickReplyFileChange,
    limit: number,
  ): Promise<QuickReplyRow | OverInstanceLimit | null> {
    return this.transaction(async (manager) => {
      const used = await this.lockAndMeasure(manager, instanceId, id);
      const current: Array<{ file_id: string | null; file_size: string }> = await manager.query(
        `SELECT file_id, file_size FROM quick_replies WHERE instance_id = $1 AND id = $2 FOR UPDATE`,
        [instanceId, id],
      );
      if (!current.length) return null;
      let fileId = current[0].file_id;
      let size = Number(current[0].file_size);
      if (file.action !== 'keep') {
        size = file.action === 'replace' ? file.upload.data.length : 0;
        if (size > 0 && used + size > limit) return { overLimit: true as const, used };
        if (fileId) await manager.query(`DELETE FROM stored_files WHERE id = $1 AND instance_id = $2`, [fileId, instanceId]);
        fileId = file.action === 'replace' ? await this.storeFile(manager, instanceId, file.upload) : null;
      }
      if (values.waId) await QuickReplyRepository.claimWaId(manager, instanceId, values.waId, id);
      // An UPDATE answers [rows, rowCount] through TypeORM's query().
      const [rows] = (await manager.query(
        `UPDATE quick_replies SET short_cut = $3, ai_description = $4, message = $5::jsonb, file_id = $6, file_size = $7, updated_at = now(),
                wa_id = CASE WHEN $8::boolean THEN $9::text ELSE wa_id END, on_whatsapp = CASE WHEN $8::boolean THEN $9::text IS NOT NULL ELSE on_whatsapp END
         WHERE instance_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
        [instanceId, id, values.shortCut, values.aiDescription, JSON.stringify(values.message), fileId, size, values.waId !== undefined, values.waId ?? null],
      )) as [Array<Record<string, unknown>>, number];
      return toRow(rows[0]);
    });
  }

  /** Deletes a reply and its stored file; false when the instance has no such reply. */
  async delete(instanceId: string, id: string): Promise<boolean> {
    const rows: Array<{ id: string }> = await this.db.query(
      `WITH gone AS (DELETE FROM quick_replies WHERE instance_id = $1 AND id = $2 RETURNING id, file_id),
            files AS (DELETE FROM stored_files WHERE instance_id = $1 AND id IN (SELECT file_id FROM gone WHERE file_id IS NOT NULL))
       SELECT id FROM gone`,
      [instanceId, id],
    );
    return rows.length > 0;
  }

  /**
   * Makes the stored replies agree with the phone's (its complete list): a reply the phone has is
   * created (origin `whatsapp`, a text message) or refreshed (shortcut and text); one that is no longer
   * on the phone is deleted when it came from there, or only taken off WhatsApp when the API made it.
   * Under the instance's quick-reply lock, so two syncs (or a sync and an edit) never interleave.
   */
  async syncFromWhatsApp(instanceId: string, replies: PhoneQuickReply[]): Promise<{ created: number; updated: number; removed: number }> {
    // Bound within the worker's fenced write (the phone's app state changed), in that transaction.
    return this.transaction(async (manager) => {
      await QuickReplyRepository.lock(manager, instanceId);
      const stored: Array<{ id: string; wa_id: string; origin: string; short_cut: string; text: unknown }> = await manager.query(
        `SELECT id, wa_id, origin, short_cut, message->'text' AS text FROM quick_replies WHERE instance_id = $1 AND wa_id IS NOT NULL`,
        [instanceId],
      );
      const onPhone = new Map(replies.map((reply) => [reply.waId, reply]));
      const known = new Map(stored.map((row) => [row.wa_id, row]));
      let created = 0;
      let updated = 0;
      let removed = 0;
      for (const row of stored) {
        if (onPhone.has(row.wa_id)) continue;
        if (row.origin === 'whatsapp') await manager.query(`DELETE FROM quick_replies WHERE instance_id = $1 AND id = $2`, [instanceId, row.id]);
        else
          await manager.query(`UPDATE quick_replies SET wa_id = NULL, on_whatsapp = false, updated_at = now() WHERE instance_id = $1 AND id = $2`, [
            instanceId,
            row.id,
          ]);
        removed++;
      }
      for (const reply of replies) {
        const row = known.get(reply.waId);
        if (!row) {
          await manager.query(
            `INSERT INTO quick_replies (id, instance_id, short_cut, message, wa_id, on_whatsapp, origin) VALUES ($1, $2, $3, $4::jsonb, $5, true, 'whatsapp')`,
            [recordId(), instanceId, reply.shortCut, JSON.stringify({ kind: 'text', text: reply.text }), reply.waId],
          );
          created++;
        } else if (row.short_cut !== reply.shortCut || row.text !== reply.text) {
          await manager.query(
            `UPDATE quick_replies SET short_cut = $3, message = jsonb_set(message, '{text}', to_jsonb($4::text)), on_whatsapp = true, updated_at = now()
           WHERE instance_id = $1 AND id = $2`,
            [instanceId, row.id, reply.shortCut, reply.text],
          );
          updated++;
        }
      }
      return { created, updated, removed };
    });
  }

  /**
   * The API just wrote this reply to the phone under `waId`: a copy a sync took in meanwhile (the phone
   * was read between that write and this one: a showall, or a server_sync of a change made elsewhere)
   * is the same reply and gives way, or the unique `wa_id` would refuse the API's record.
   */
  private static async claimWaId(manager: EntityManager, instanceId: string, waId: string, exceptId: string | null): Promise<void> {
    await manager.query(`DELETE FROM quick_replies WHERE instance_id = $1 AND wa_id = $2 AND origin = 'whatsapp' AND id IS DISTINCT FROM $3`, [
      instanceId,
      waId,
      exceptId,
    ]);
  }

  /** The instance's quick-reply lock, held to the end of the transaction. */
  private static async lock(manager: EntityManager, instanceId: string): Promise<void> {
    await manager.query(`SELECT pg_advisory_xact_lock(hashtext('quick_replies:' || $1))`, [instanceId]);
  }

  /** Takes the instance's quick-reply lock (held to the end of the transaction) and answers the bytes its replies store, but `exceptId`'s. */
  private async lockAndMeasure(manager: EntityManager, instanceId: string, exceptId: string | null): Promise<number> {
    await QuickReplyRepository.lock(manager, instanceId);
    const rows: Array<{ used: string }> = await manager.query(
      `SELECT COALESCE(SUM(file_size), 0)::bigint AS used FROM quick_replies WHERE instance_id = $1 AND ($2::text IS NULL OR id <> $2)`,
      [instanceId, exceptId],
    );
    return Number(rows[0].used);
  }

  /** The upload in the media store /files serves, never expiring (it goes with the reply). */
  private storeFile(manager: EntityManager, instanceId: string, upload: QuickReplyUpload): Promise<string> {
    return this.files.within(manager).storeKept(instanceId, upload);
  }
}
