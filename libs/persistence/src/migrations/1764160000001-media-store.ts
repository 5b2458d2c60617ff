import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Media in an S3-compatible store (issue #18): a stored file's row stays in Postgres (instance, type,
 * name, expiry: lookups and tenant checks are one query), and its bytes are either in `data` (the
 * `postgres` backend, as before) or in the bucket under `object_key` (the `s3` backend, `data` NULL).
 * Retention deletes both; `stored_files_s3_expiry` lets it find the objects to delete first.
 */
export class MediaStore1764160000001 implements MigrationInterface {
  name = 'MediaStore1764160000001';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE stored_files ALTER COLUMN data DROP NOT NULL`);
    await runner.query(`ALTER TABLE stored_files ADD COLUMN backend text NOT NULL DEFAULT 'postgres'`);
    await runner.query(`ALTER TABLE stored_files ADD COLUMN object_key text`);
    await runner.query(`ALTER TABLE stored_files ADD COLUMN size bigint`);
    await runner.query(`CREATE INDEX stored_files_s3_expiry ON stored_files (expires_at) WHERE backend = 's3'`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP INDEX IF EXISTS stored_files_s3_expiry`);
    await runner.query(`DELETE FROM stored_files WHERE data IS NULL`);
    for (const column of ['size', 'object_key', 'backend']) await runner.query(`ALTER TABLE stored_files DROP COLUMN IF EXISTS ${column}`);
    await runner.query(`ALTER TABLE stored_files ALTER COLUMN data SET NOT NULL`);
  }
}
