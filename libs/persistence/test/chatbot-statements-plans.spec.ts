import { capturingTx, genericPlan, openTestDatabase, planChoices, type TestDatabase } from '@gw/testing';
import { ChatbotAdmissionRepository, ChatbotRepository, InstanceRepository } from '@gw/persistence';

/**
 * The chatbot's statements that run for every round (admission, its batch's context, the stored plan,
 * the chat's history) go out prepared: Postgres plans each once per connection, and then runs its
 * generic plan, which knows no parameter value. These check that plan on a busy instance's tables: each
 * large table read by the index of what the statement names (the chat, the message, the round), never
 * all of the instance's rows (the instance's settings and records are a few rows).
 */
describe("the chatbot's prepared statements", () => {
  let db: TestDatabase;
  const instanceId = 'rbotplan';
  // Stands in for a connection: records each statement and answers no rows.
  const { tx: capturing, captured } = capturingTx();

  beforeAll(async () => {
    db = await openTestDatabase();
    await new InstanceRepository(db.dataSource).create({ id: instanceId, token: 'tok-bot-plan', name: 'b' });
    // A busy instance: 3,000 chats, 20,000 messages, a round and an input per message.
    await db.dataSource.query(
      `INSERT INTO chats (instance_id, id, wa_chatid, wa_chatlid) SELECT $1, 'botplan' || g, '55119' || g || '@s.whatsapp.net', '8' || g || '@lid' FROM generate_series(1, 3000) g`,
      [instanceId],
    );
    await db.dataSource.query(
      `INSERT INTO messages (instance_id, id, message_id, chat_id, chat_lid, message_timestamp, status, text, from_me)
       SELECT $1, 'botplanm' || g, 'BOTPLAN' || g, '55119' || (g % 500 + 1) || '@s.whatsapp.net', '8' || (g % 500 + 1) || '@lid',
         1764400000000 + g * 1000, 'Read', 'message ' || g, g % 2 = 0
       FROM generate_series(1, 20000) g`,
      [instanceId],
    );
    await db.dataSource.query(
      `INSERT INTO chatbot_rounds (instance_id, chat_id, agent_id, trigger_id, inputs, envelope, due_at, status)
       SELECT $1, '55119' || (g % 500 + 1) || '@s.whatsapp.net', 'agent', 'trigger', '[]', '{}', now(), CASE WHEN g % 100 = 0 THEN 'gathering' ELSE 'done' END
       FROM generate_series(1, 10000) g`,
      [instanceId],
    );
    await db.dataSource.query(
      `INSERT INTO chatbot_inputs (instance_id, message_id, round_id) SELECT $1, 'BOTPLAN' || g, r.id
       FROM generate_series(1, 10000) g JOIN LATERAL (SELECT id FROM chatbot_rounds WHERE instance_id = $1 LIMIT 1) r ON true`,
      [instanceId],
    );
    for (const table of ['chats', 'messages', 'chatbot_rounds', 'chatbot_inputs', 'chatbot_chat_state', 'chatbot_records'])
      await db.dataSource.query(`ANALYZE ${table}`);

    const chatId = '5511977@s.whatsapp.net';
    const admissions = new ChatbotAdmissionRepository(db.dataSource).within(capturing);
    await admissions.admit(
      { instanceId, chatId, messageId: 'BOTPLANNEW', triggerId: 'trigger', agentId: 'agent', delaySeconds: 0, input: { text: 'oi' }, envelope: {} },
      { runner: 'runner', claimMs: 30_000 },
    );
    await admissions.admissionContext(instanceId, [chatId, '877@lid']);
    const repository = new ChatbotRepository(db.dataSource).within(capturing);
    await repository.storePlan('1', 'runner', { texts: [] });
    await repository.history(instanceId, [chatId, '877@lid'], { max: 20, min: 2, windowHours: 24 });
  });
  afterAll(() => db.close());

  it('should mark each one prepared', () => {
    expect(captured).toHaveLength(4);
    for (const [sql] of captured) expect(sql).toContain('/* prepared */');
  });

  it.each([
    ['admission', 0, /chatbot_inputs_pkey/],
    // (its EXISTS over the instance's quick replies and knowledge reads one index entry by the instance)
    ['batch context', 1, /chats_chat(id|lid)/],
    ['stored plan', 2, /chatbot_rounds_pkey/],
    ['history', 3, /messages_chat_lid/],
  ])('should read by index in the generic plan of the %s', async (name, index, uses) => {
    const [sql, parameters] = captured[index];
    const plan = await genericPlan(db.dataSource, sql, parameters);
    expect(plan).toMatch(uses);
    expect(plan).not.toMatch(/Seq Scan on (messages|chats|chatbot_rounds|chatbot_inputs)\b/);
    // No index read by the instance alone (all of its messages, chats or rounds).
    if (name !== 'batch context') expect(plan).not.toMatch(/Index Cond: \(instance_id = [^()]*\)$/m);
  });

  // A statement whose generic plan looks dearer than one made for its values (an array's length, a
  // LIMIT, known only then) is planned again on every call: the history read and the batch context were,
  // 0.6-0.7 ms of Postgres' CPU each per round (pg_stat_statements over bench/chatbot).
  it.each([
    ['admission', 0],
    ['batch context', 1],
    ['stored plan', 2],
    ['history', 3],
  ])('should let Postgres keep the generic plan of the %s', async (name, index) => {
    const [sql, parameters] = captured[index];
    const { custom, generic } = await planChoices(db.dataSource, sql, parameters, 10);
    expect({ name, custom, generic }).toEqual({ name, custom: 5, generic: 5 });
  });
});
