import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Quick replies and the WhatsApp Business app: `wa_id` is the reply's id in the phone's app state (the
 * `quick_reply` mutation index), set while the reply is on WhatsApp (`on_whatsapp`); `origin` says who
 * made it: `api` (it may be edited and deleted through the API, which writes back to the phone) or
 * `whatsapp` (synced from the phone; read-only through the API, as uazapi's).
 */
export class QuickRepliesWhatsapp1764120000000 implements MigrationInterface {
  name = 'QuickRepliesWhatsapp1764120000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE quick_replies ADD COLUMN wa_id text, ADD COLUMN origin text NOT NULL DEFAULT 'api'`);
    await runner.query(`ALTER TABLE quick_replies ADD CONSTRAINT quick_replies_origin CHECK (origin IN ('api', 'whatsapp'))`);
    await runner.query(`CREATE UNIQUE INDEX quick_replies_wa_id ON quick_replies (instance_id, wa_id) WHERE wa_id IS NOT NULL`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP INDEX IF EXISTS quick_replies_wa_id`);
    await runner.query(`ALTER TABLE quick_replies DROP CONSTRAINT IF EXISTS quick_replies_origin, DROP COLUMN IF EXISTS origin, DROP COLUMN IF EXISTS wa_id`);
  }
}
