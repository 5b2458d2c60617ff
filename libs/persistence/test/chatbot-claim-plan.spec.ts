import { capturingTx, genericPlan, openTestDatabase, planChoices, type TestDatabase } from '@gw/testing';
import { ChatbotRepository, InstanceRepository } from '@gw/persistence';

/**
 * A runner's claim (`claimDue`) runs whenever a round may be due: after admissions, on a round's end, and
 * on a timer. It went out unprepared, planned on every call (~0.8 ms of Postgres' CPU each in
 * bench/chatbot). Prepared, its LIMIT as a parameter made Postgres plan it again on every call all the
 * same (a plan made for each call's limit looked cheaper), so the limit comes through `(SELECT $3)`.
 * These check it on a table of 20,000 finished rounds and a backlog of open ones: prepared, one plan
 * kept, the rounds read through the open rounds' index, and what it answers.
 */
describe("a chatbot runner's claim", () => {
  let db: TestDatabase;
  const instanceId = 'rbotclaim';
  const { tx: capturing, captured } = capturingTx();

  beforeAll(async () => {
    db = await openTestDatabase();
    await new InstanceRepository(db.dataSource).create({ id: instanceId, token: 'tok-bot-claim', name: 'c' });
    // 20,000 rounds done, then a backlog: 2,000 chats each with a round running (claimed by another
    // runner until a minute from now) and a later one gathering, due already (it waits for the first).
    await db.dataSource.query(
      `INSERT INTO chatbot_rounds (instance_id, chat_id, agent_id, trigger_id, inputs, envelope, due_at, status)
       SELECT $1, '55119' || (g % 3000) || '@s.whatsapp.net', 'agent', 'trigger', '[]', '{}', now() - interval '1 hour', 'done'
       FROM generate_series(1, 20000) g`,
      [instanceId],
    );
    await db.dataSource.query(
      `INSERT INTO chatbot_rounds (instance_id, chat_id, agent_id, trigger_id, inputs, envelope, due_at, status, claimed_by, claimed_until, attempts)
       SELECT $1, '55118' || g || '@s.whatsapp.net', 'agent', 'trigger', '[]', '{}', now() - interval '1 minute', 'running', 'other', now() + interval '1 minute', 1
       FROM generate_series(1, 2000) g`,
      [instanceId],
    );
    await db.dataSource.query(
      `INSERT INTO chatbot_rounds (instance_id, chat_id, agent_id, trigger_id, inputs, envelope, due_at, status)
       SELECT $1, '55118' || g || '@s.whatsapp.net', 'agent', 'trigger', '[]', '{}', now() - interval '30 seconds', 'gathering'
       FROM generate_series(1, 2000) g`,
      [instanceId],
    );
    // One chat with a round of its own, gathering, due in 5 s: the next due time the claim must answer.
    await db.dataSource.query(
      `INSERT INTO chatbot_rounds (instance_id, chat_id, agent_id, trigger_id, inputs, envelope, due_at, status)
       VALUES ($1, '5511700@s.whatsapp.net', 'agent', 'trigger', '[]', '{}', now() + interval '5 seconds', 'gathering')`,
      [instanceId],
    );
    await db.dataSource.query(`ANALYZE chatbot_rounds`);
    await new ChatbotRepository(db.dataSource).within(capturing).claimDue('runner', 8, 30_000);
  });
  afterAll(() => db.close());

  it('should go out prepared', () => {
    expect(captured).toHaveLength(1);
    expect(captured[0][0]).toContain('/* prepared */');
  });

  it('should read the rounds through the open rounds index in its generic plan', async () => {
    const [sql, parameters] = captured[0];
    const plan = await genericPlan(db.dataSource, sql, parameters);
    expect(plan).toMatch(/chatbot_rounds_open/);
    expect(plan).not.toMatch(/Seq Scan on chatbot_rounds\b/);
  });

  it('should let Postgres keep the generic plan', async () => {
    const [sql, parameters] = captured[0];
    expect(await planChoices(db.dataSource, sql, parameters, 10)).toEqual({ custom: 5, generic: 5 });
  });

  it('should claim nothing blocked or held, and answer the next due time', async () => {
    const { rounds, nextDue } = await new ChatbotRepository(db.dataSource).claimDue('runner', 8, 30_000);
    expect(rounds).toEqual([]);
    // The running rounds' claims lapse in a minute; the lone chat's round is due in 5 s.
    expect(nextDue).not.toBeNull();
    expect(nextDue!.getTime() - Date.now()).toBeGreaterThan(3_000);
    expect(nextDue!.getTime() - Date.now()).toBeLessThan(6_000);
  });
});
