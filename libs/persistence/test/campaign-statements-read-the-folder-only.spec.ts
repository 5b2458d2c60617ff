import { capturingTx, openTestDatabase, type TestDatabase } from '@gw/testing';
import { CampaignRepository, InstanceRepository } from '@gw/persistence';

/**
 * A campaign's statements over its messages (its counters, shown by the folder routes and by every
 * tick's event; whether it has ended; its message list) read them by `messages_send_folder`, never the
 * whole `messages` table: the counters' join used to name only half of that index's predicate, and
 * Postgres read every message of every instance for each folder.
 */
describe("a campaign's statements", () => {
  let db: TestDatabase;
  let campaigns: CampaignRepository;
  const instanceId = 'rcampaignplan';
  const { tx: capturing, captured } = capturingTx();

  beforeAll(async () => {
    db = await openTestDatabase();
    campaigns = new CampaignRepository(db.dataSource);
    await new InstanceRepository(db.dataSource).create({ id: instanceId, token: 'tok-campaign-plan', name: 'c' });
    await db.dataSource.query(`INSERT INTO campaign_folders (id, instance_id) VALUES ('folderplan', $1)`, [instanceId]);
    // A busy instance: 20,000 messages outside any campaign, 50 in the folder.
    await db.dataSource.query(
      `INSERT INTO messages (instance_id, id, message_id, chat_id, message_timestamp, status, text, from_me, send_folder_id)
       SELECT $1, 'campplan' || g, 'CAMPPLAN' || g, '55119' || (g % 300) || '@s.whatsapp.net', 1764400000000 + g * 1000,
         CASE WHEN g % 3 = 0 THEN 'Read' ELSE 'Sent' END, 'message ' || g, true, CASE WHEN g <= 50 THEN 'folderplan' ELSE '' END
       FROM generate_series(1, 20000) g`,
      [instanceId],
    );
    await db.dataSource.query(`ANALYZE messages`);
  });
  afterAll(() => db.close());

  it("should count the folder's messages", async () => {
    expect((await campaigns.find(instanceId, 'folderplan'))?.logTotal).toBe(50);
  });

  it.each([
    ['find', () => campaigns.within(capturing).find(instanceId, 'folderplan')],
    ['list', () => campaigns.within(capturing).list(instanceId)],
    ['messages', () => campaigns.within(capturing).messages(instanceId, 'folderplan', undefined, 100, 0)],
  ])("should read the folder's messages by its index (%s)", async (_name, call) => {
    captured.length = 0;
    await call().catch(() => undefined);
    expect(captured.length).toBeGreaterThan(0);
    for (const [sql, parameters] of captured) {
      const plan = ((await db.dataSource.query(`EXPLAIN ${sql}`, parameters)) as Array<{ 'QUERY PLAN': string }>).map((row) => row['QUERY PLAN']).join('\n');
      expect(plan).not.toMatch(/Seq Scan on messages/);
    }
  });
});
