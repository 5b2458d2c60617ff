import { openTestDatabase, type TestDatabase } from '@gw/testing';
import { ChatbotRepository, InstanceRepository } from '@gw/persistence';

/**
 * A round's end (ChatbotRepository.finish) goes out prepared and answers the message's whole row. A
 * newer version's migration that adds a column to messages makes that plan stale: the round still ends
 * at once (its transaction runs again, prepared afresh), it does not wait for its claim to expire.
 */
describe("a chatbot round's end when a migration adds a column to messages", () => {
  let db: TestDatabase;
  let rounds: ChatbotRepository;
  const instanceId = 'rbotend';

  beforeAll(async () => {
    db = await openTestDatabase();
    rounds = new ChatbotRepository(db.dataSource);
    await new InstanceRepository(db.dataSource).create({ id: instanceId, token: 'tok-bot-end', name: 'e' });
  });
  afterAll(() => db.close());

  /** A contact's message and its round, claimed by `runner`. */
  const roundFor = async (n: number) => {
    const chatId = `55119${n}@s.whatsapp.net`;
    await db.dataSource.query(
      `INSERT INTO messages (instance_id, id, message_id, chat_id, message_timestamp, status, text) VALUES ($1, $2, $3, $4, 1764400000000, 'Read', 'oi')`,
      [instanceId, `botend${n}`, `BOTEND${n}`, chatId],
    );
    const [{ id }]: Array<{ id: string }> = await db.dataSource.query(
      `INSERT INTO chatbot_rounds (instance_id, chat_id, agent_id, trigger_id, due_at, status, claimed_by, claimed_until)
       VALUES ($1, $2, 'agent', 'trigger', now(), 'running', 'runner', now() + interval '30 seconds') RETURNING id::text`,
      [instanceId, chatId],
    );
    return (await rounds.round(id))!;
  };
  const finish = async (n: number) =>
    rounds.finish(await roundFor(n), 'runner', 'done', 'answered', `BOTEND${n}`, { agent_id: 'agent', turn: `BOTEND${n}` }, (row) => ({
      eventType: 'messages',
      payload: { message: { messageid: row.messageId, ai_metadata: row.aiMetadata } },
    }));

  it('should end the round and store its ai_metadata, before and after the column is added', async () => {
    // Hot: prepared on the connections that ran it.
    for (let n = 0; n < 4; n++) expect(await finish(n)).toMatchObject({ queued: false });
    await db.dataSource.query(`ALTER TABLE messages ADD COLUMN botend_probe int`);
    try {
      expect(await finish(4)).toMatchObject({ queued: false, eventId: expect.any(String) });
      const [message]: Array<{ ai_metadata: unknown }> = await db.dataSource.query(
        `SELECT ai_metadata FROM messages WHERE instance_id = $1 AND message_id = 'BOTEND4'`,
        [instanceId],
      );
      expect(message.ai_metadata).toEqual({ agent_id: 'agent', turn: 'BOTEND4' });
      const [ended]: Array<{ status: string }> = await db.dataSource.query(`SELECT status FROM chatbot_rounds WHERE chat_id = '551194@s.whatsapp.net'`);
      expect(ended.status).toBe('done');
    } finally {
      await db.dataSource.query(`ALTER TABLE messages DROP COLUMN botend_probe`);
    }
  });
});
