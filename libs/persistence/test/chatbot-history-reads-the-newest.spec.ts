import { openTestDatabase, type TestDatabase } from '@gw/testing';
import { ChatbotRepository, InstanceRepository } from '@gw/persistence';

/**
 * The chatbot's history of a chat (what the model sees every round) is its newest messages by second,
 * then as stored. It reads only the newest ones (bounded by the second of the limit's message), whatever
 * the chat's length, and answers exactly what sorting the whole chat would.
 */
describe("the chatbot's history of a long chat", () => {
  let db: TestDatabase;
  let rounds: ChatbotRepository;
  const instanceId = 'rbothist';
  const jid = '5511900000777@s.whatsapp.net';
  const lid = '777@lid';
  const base = 1764000000000;

  beforeAll(async () => {
    db = await openTestDatabase();
    rounds = new ChatbotRepository(db.dataSource);
    await new InstanceRepository(db.dataSource).create({ id: instanceId, token: 'tok-bot-hist', name: 'h' });
    // 4,000 messages, four to a second; within a second the later one was stored first (created_at), so
    // the order by second then storage differs from the timestamp's. By JID with the LID, by JID alone,
    // by LID alone; one in seven deleted; another chat's messages in between.
    await db.dataSource.query(
      `INSERT INTO messages (instance_id, id, message_id, chat_id, chat_lid, message_timestamp, status, text, from_me, created_at)
       SELECT $1, 'bothist' || g, 'BOTHIST' || g,
         CASE WHEN g % 11 = 0 THEN '5511900000888@s.whatsapp.net' WHEN g % 3 = 2 THEN $3 ELSE $2 END,
         CASE WHEN g % 11 = 0 THEN '888@lid' WHEN g % 3 = 1 THEN '' ELSE $3 END,
         $4::bigint + g * 250, CASE WHEN g % 7 = 0 THEN 'Deleted' ELSE 'Read' END, 'message ' || g, g % 2 = 0,
         timestamptz '2026-01-01' + ((g / 4) * 4 + (3 - g % 4)) * interval '1 millisecond'
       FROM generate_series(1, 4000) g`,
      [instanceId, jid, lid, base],
    );
    // The instance's other chats: a chat is a small part of a busy number's messages.
    await db.dataSource.query(
      `INSERT INTO messages (instance_id, id, message_id, chat_id, message_timestamp, status, text)
       SELECT $1, 'bothistother' || g, 'BOTHISTOTHER' || g, '55119' || (g % 500) || '@s.whatsapp.net', $2::bigint + g * 25, 'Read', 'other ' || g
       FROM generate_series(1, 40000) g`,
      [instanceId, base],
    );
    await db.dataSource.query(`ANALYZE messages`);
  });
  afterAll(() => db.close());

  /** Sorting the whole chat: what the history must answer. */
  const whole = async (limit: number): Promise<string[]> =>
    (
      (await db.dataSource.query(
        `SELECT message_id FROM messages WHERE instance_id = $1 AND (chat_id = ANY($2::text[]) OR chat_lid = ANY($2::text[]))
           AND status NOT IN ('Deleted', 'Canceled', 'Failed', 'Queued')
         ORDER BY message_timestamp / 1000 DESC, created_at DESC LIMIT $3`,
        [instanceId, [jid, lid], limit],
      )) as Array<{ message_id: string }>
    ).map((row) => row.message_id);

  it.each([1, 2, 5, 21, 50, 5000])('should answer the newest %i as sorting the whole chat would', async (limit) => {
    const history = await rounds.history(instanceId, [jid, lid, jid], { max: limit, min: 0, windowHours: 0 });
    expect(history.map((row) => row.messageId)).toEqual(await whole(limit));
  });

  it('should find the chat by its LID alone, and by its JID alone, as the whole chat sorted', async () => {
    const byLid = await rounds.history(instanceId, [lid], { max: 30, min: 0, windowHours: 0 });
    const expected = (
      (await db.dataSource.query(
        `SELECT message_id FROM messages WHERE instance_id = $1 AND (chat_id = $2 OR chat_lid = $2) AND status NOT IN ('Deleted', 'Canceled', 'Failed', 'Queued')
         ORDER BY message_timestamp / 1000 DESC, created_at DESC LIMIT 30`,
        [instanceId, lid],
      )) as Array<{ message_id: string }>
    ).map((row) => row.message_id);
    expect(byLid.map((row) => row.messageId)).toEqual(expected);
    expect(byLid.length).toBe(30);
  });

  it('should read a few dozen rows of a chat of thousands', async () => {
    const [sql] = (await captureHistorySql()) as [string, unknown[]];
    const plan: Array<{ 'QUERY PLAN': string }> = await db.dataSource.query(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, [instanceId, [jid, lid], 20, []]);
    const text = plan.map((row) => row['QUERY PLAN']).join('\n');
    expect(text).not.toMatch(/Seq Scan on messages/);
    // Every scan of messages hands on at most a few dozen rows (the chat has thousands).
    const scanned = [...text.matchAll(/Scan[^\n]* on messages[^\n]*actual time=[\d.]+\.\.[\d.]+ rows=(\d+)/g)].map((match) => Number(match[1]));
    expect(scanned.length).toBeGreaterThanOrEqual(3);
    for (const rows of scanned) expect(rows).toBeLessThanOrEqual(60);
  });

  const captureHistorySql = async () => {
    let captured: unknown[] = [];
    const capturing = new ChatbotRepository({
      query: async (sql: string, parameters: unknown[]) => ((captured = [sql, parameters]), []),
    } as unknown as ConstructorParameters<typeof ChatbotRepository>[0]);
    await capturing.history(instanceId, [jid, lid], { max: 20, min: 0, windowHours: 0 });
    return captured;
  };
});
