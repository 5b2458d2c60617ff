import { randomBytes } from 'node:crypto';
import { MAX_SIGNED_SECONDS, type ObjectStore, objectStoreFromEnv } from '../media/object-store';
import type { Database } from '../tx';
import { RepositoryBase, type Executor } from './repository-base';

export interface StoredFile {
  id: string;
  instanceId: string;
  mimetype: string;
  fileName: string;
  data: Buffer;
  expiresAt: Date;
}

/** A stored file without its bytes: where they are. */
export interface StoredFileInfo {
  id: string;
  instanceId: string;
  mimetype: string;
  fileName: string;
  expiresAt: Date;
  backend: 'postgres' | 's3';
  objectKey: string | null;
}

type Raw = Record<string, unknown>;

const INFO_COLUMNS = 'id, instance_id, mimetype, file_name, expires_at, backend, object_key';

function toInfo(row: Raw): StoredFileInfo {
  return {
    id: row.id as string,
    instanceId: row.instance_id as string,
    mimetype: row.mimetype as string,
    fileName: row.file_name as string,
    expiresAt: row.expires_at as Date,
    backend: (row.backend as 'postgres' | 's3' | undefined) ?? 'postgres',
    objectKey: (row.object_key as string | null) ?? null,
  };
}

/**
 * The media store: uploads staged between the gateway and the worker (the bus is not for megabytes),
 * received media behind unguessable, expiring links, quick-reply files. Every file has a row here (its
 * instance, type, name and expiry); its bytes are in the row (`postgres`, the embedded default) or, when
 * env configures a bucket (S3_BUCKET…), in S3-compatible storage (`s3`), written before the row so a
 * row never points at nothing. Ids carry 128 random bits. Rows written before the bucket was configured
 * are still read from Postgres, and the other way round while the bucket is still configured.
 */
export class FileRepository extends RepositoryBase {
  private readonly objects: ObjectStore | null;

  constructor(database: Database, objects: ObjectStore | null = objectStoreFromEnv()) {
    super(database);
    this.objects = objects;
  }

  /** Which backend new files go to. */
  get backend(): 'postgres' | 's3' {
    return this.objects ? 's3' : 'postgres';
  }

  /** Deletes one file of the instance now (an `s3` file's object is queued for deletion by the table's trigger). */
  async delete(id: string, instanceId: string): Promise<boolean> {
    const rows: unknown[] = await this.db.query(`DELETE FROM stored_files WHERE id = $1 AND instance_id = $2 RETURNING 1`, [id, instanceId]);
    return rows.length > 0;
  }

  async store(instanceId: string, data: Buffer, mimetype: string, fileName: string, ttlMs: number): Promise<string> {
    const id = randomBytes(16).toString('hex');
    await FileRepository.insert(this.db, this.objects, { id, instanceId, data, mimetype, fileName, expires: { ttlMs } });
    return id;
  }

  /**
   * Stores a file whose row belongs to the caller's transaction (a quick reply's): the object is
   * written first; should the transaction roll back, the object is left behind (retention cannot see
   * it; the bucket's lifecycle rules may).
   */
  async storeKept(instanceId: string, upload: { data: Buffer; mimetype: string; fileName: string }): Promise<string> {
    const id = randomBytes(16).toString('hex');
    await FileRepository.insert(this.db, this.objects, { id, instanceId, ...upload, expires: 'never' });
    return id;
  }

  private static async insert(
    manager: Executor,
    objects: ObjectStore | null,
    file: { id: string; instanceId: string; data: Buffer; mimetype: string; fileName: string; expires: { ttlMs: number } | 'never' },
  ): Promise<void> {
    const key = objects ? objects.keyOf(file.instanceId, file.id) : null;
    if (objects && key) await objects.put(key, file.data, file.mimetype);
    await manager.query(
      `INSERT INTO stored_files (id, instance_id, mimetype, file_name, data, expires_at, backend, object_key, size)
       VALUES ($1, $2, $3, $4, $5, CASE WHEN $6::text IS NULL THEN 'infinity'::timestamptz ELSE now() + ($6 || ' milliseconds')::interval END, $7, $8, $9)`,
      [
        file.id,
        file.instanceId,
        file.mimetype,
        file.fileName,
        key ? null : file.data,
        file.expires === 'never' ? null : String(file.expires.ttlMs),
        key ? 's3' : 'postgres',
        key,
        file.data.length,
      ],
    );
  }

  /** A live file's row (no bytes), of this instance when given. */
  async info(id: string, instanceId?: string): Promise<StoredFileInfo | null> {
    const rows: Raw[] = await this.db.query(
      `SELECT ${INFO_COLUMNS} FROM stored_files WHERE id = $1 AND expires_at > now() AND ($2::text IS NULL OR instance_id = $2)`,
      [id, instanceId ?? null],
    );
    return rows.length ? toInfo(rows[0]) : null;
  }

  /** A live file with its bytes (fetched from the bucket for an `s3` file), of this instance when given. */
  async read(id: string, instanceId?: string): Promise<StoredFile | null> {
    const rows: Raw[] = await this.db.query(
      `SELECT ${INFO_COLUMNS}, data FROM stored_files WHERE id = $1 AND expires_at > now() AND ($2::text IS NULL OR instance_id = $2)`,
      [id, instanceId ?? null],
    );
    if (!rows.length) return null;
    const info = toInfo(rows[0]);
    let data = rows[0].data as Buffer | null;
    if (info.backend === 's3') {
      if (!this.objects || !info.objectKey) throw new Error(`file ${id} is in S3, and no bucket is configured (S3_BUCKET)`);
      data = await this.objects.get(info.objectKey);
    }
    if (!data) return null;
    return { id: info.id, instanceId: info.instanceId, mimetype: info.mimetype, fileName: info.fileName, data, expiresAt: info.expiresAt };
  }

  /**
   * A signed, expiring link straight to the bucket for an `s3` file (valid until the file expires, at
   * most `maxSeconds` and SigV4's 7 days), answering with these headers; null for a `postgres` file
   * (served by /files/<id>).
   */
  async signedLink(
    file: StoredFileInfo,
    headers: { contentType: string; contentDisposition: string },
    maxSeconds = MAX_SIGNED_SECONDS,
  ): Promise<string | null> {
    if (file.backend !== 's3' || !file.objectKey) return null;
    if (!this.objects) throw new Error(`file ${file.id} is in S3, and no bucket is configured (S3_BUCKET)`);
    // A file that never expires (a quick reply's) has the expiry 'infinity', which pg reads as Infinity.
    const expires = file.expiresAt instanceof Date ? file.expiresAt.getTime() : Infinity;
    const untilExpiry = Number.isFinite(expires) ? (expires - Date.now()) / 1000 : Infinity;
    return this.objects.signedUrl(file.objectKey, { expiresInSeconds: Math.min(untilExpiry, maxSeconds), ...headers });
  }

  /**
   * Removes expired files from both backends: the rows go in one statement, and a trigger queues the
   * object of every `s3` row deleted (by this or by anything else: a quick reply or an instance
   * deleted) in `media_object_deletions`; then the queued objects are deleted from the bucket, a batch
   * at a time, each batch's queue rows only once the bucket took it (deleting an object twice is no
   * error, so a failure is retried by the next purge). Returns how many files went.
   */
  async purgeExpired(batch = 1000): Promise<number> {
    const gone: Array<{ n: number }> = await this.db.query(
      `WITH gone AS (DELETE FROM stored_files WHERE expires_at <= now() RETURNING 1) SELECT count(*)::int AS n FROM gone`,
    );
    await this.deleteQueuedObjects(batch);
    return gone[0].n;
  }

  /** Deletes the objects queued for deletion from the bucket (nothing without one). Returns how many. */
  async deleteQueuedObjects(batch = 1000): Promise<number> {
    if (!this.objects) return 0;
    let deleted = 0;
    for (;;) {
      const queued: Array<{ object_key: string }> = await this.db.query(
        `SELECT object_key FROM media_object_deletions ORDER BY queued_at, object_key LIMIT $1`,
        [batch],
      );
      if (queued.length === 0) return deleted;
      const keys = queued.map((row) => row.object_key);
      await this.objects.delete(keys);
      await this.db.query(`DELETE FROM media_object_deletions WHERE object_key = ANY($1::text[])`, [keys]);
      deleted += keys.length;
      if (queued.length < batch) return deleted;
    }
  }
}
