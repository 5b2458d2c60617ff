import { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';

export interface StoredFile {
  id: string;
  instanceId: string;
  mimetype: string;
  fileName: string;
  data: Buffer;
  expiresAt: Date;
}

/**
 * Files kept in Postgres: uploads staged between the gateway and the worker (the bus is not for
 * megabytes), and received media behind unguessable, expiring URLs. Ids carry 128 random bits.
 */
export class FileRepository {
  constructor(private readonly dataSource: DataSource) {}

  async store(instanceId: string, data: Buffer, mimetype: string, fileName: string, ttlMs: number): Promise<string> {
    const id = randomBytes(16).toString('hex');
    await this.dataSource.query(
      `INSERT INTO stored_files (id, instance_id, mimetype, file_name, data, expires_at) VALUES ($1, $2, $3, $4, $5, now() + ($6 || ' milliseconds')::interval)`,
      [id, instanceId, mimetype, fileName, data, String(ttlMs)],
    );
    return id;
  }

  async read(id: string, instanceId?: string): Promise<StoredFile | null> {
    const rows: Array<Record<string, unknown>> = await this.dataSource.query(
      `SELECT id, instance_id, mimetype, file_name, data, expires_at FROM stored_files WHERE id = $1 AND expires_at > now() AND ($2::text IS NULL OR instance_id = $2)`,
      [id, instanceId ?? null],
    );
    if (!rows.length) return null;
    const row = rows[0];
    return {
      id: row.id as string,
      instanceId: row.instance_id as string,
      mimetype: row.mimetype as string,
      fileName: row.file_name as string,
      data: row.data as Buffer,
      expiresAt: row.expires_at as Date,
    };
  }

  async purgeExpired(): Promise<number> {
    const rows: Array<{ n: number }> = await this.dataSource.query(
      `WITH gone AS (DELETE FROM stored_files WHERE expires_at <= now() RETURNING 1) SELECT count(*)::int AS n FROM gone`,
    );
    return rows[0].n;
  }
}
