import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Objects to delete from the S3 media store. Whatever removes a `stored_files` row of the `s3` backend
 * — retention, a quick reply deleted, an instance deleted (its files go by cascade) — queues its object
 * key here in the same transaction (a trigger), and retention deletes the queued objects from the
 * bucket, then their queue rows: no path leaves an object behind, and a failed bucket call is retried.
 */
export class MediaObjectDeletions1764160000002 implements MigrationInterface {
  name = 'MediaObjectDeletions1764160000002';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE media_object_deletions (
        object_key text PRIMARY KEY,
        queued_at timestamptz NOT NULL DEFAULT now()
      )`);
    await runner.query(`
      CREATE FUNCTION queue_media_object_deletion() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO media_object_deletions (object_key) VALUES (OLD.object_key) ON CONFLICT DO NOTHING;
        RETURN OLD;
      END $$`);
    await runner.query(`
      CREATE TRIGGER stored_files_queue_object_deletion AFTER DELETE ON stored_files
      FOR EACH ROW WHEN (OLD.backend = 's3' AND OLD.object_key IS NOT NULL) EXECUTE FUNCTION queue_media_object_deletion()`);
    // Retention now deletes expired rows of both backends in one statement: this index has no use left.
    await runner.query(`DROP INDEX IF EXISTS stored_files_s3_expiry`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`CREATE INDEX IF NOT EXISTS stored_files_s3_expiry ON stored_files (expires_at) WHERE backend = 's3'`);
    await runner.query(`DROP TRIGGER IF EXISTS stored_files_queue_object_deletion ON stored_files`);
    await runner.query(`DROP FUNCTION IF EXISTS queue_media_object_deletion()`);
    await runner.query(`DROP TABLE IF EXISTS media_object_deletions`);
  }
}
