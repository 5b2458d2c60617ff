import { ChatbotRepository, createDataSource, InstanceRepository } from '@gw/persistence';
import { openTestDatabase, startLatencyProxy, type LatencyProxy, type TestDatabase } from '@gw/testing';
import type { DataSource } from 'typeorm';

/**
 * A round's end (ChatbotRepository.finish) is one transaction: the round's end with the ai_metadata
 * write, and the outbox insert of its events. It goes out pipelined (ADR 0023): START TRANSACTION with
 * the round's end, then the events with the COMMIT — two round trips where awaiting each statement took
 * four. Counted through a proxy 2 × 40 ms away, as fenced-transaction-pipelined.spec.ts does.
 */
describe("a chatbot round's end, pipelined", () => {
  let db: TestDatabase;
  let proxy: LatencyProxy;
  let far: DataSource;
  let rounds: ChatbotRepository;
  const instanceId = 'rbotpipe';

  const roundTrips = () => proxy.chunks.filter((chunk, index) => chunk.direction === 'up' && proxy.chunks[index - 1]?.direction !== 'up').length;

  beforeAll(async () => {
    db = await openTestDatabase();
    const { hostname, port } = new URL(db.url);
    proxy = await startLatencyProxy({ host: hostname, port: Number(port || 5432) }, 40, { record: true });
    far = await createDataSource({ url: proxy.rewrite(db.url), schema: db.schema, poolSize: 1 }).initialize();
    rounds = new ChatbotRepository(far);
    await new InstanceRepository(db.dataSource).create({ id: instanceId, token: 'tok-bot-pipe', name: 'p' });
  });
  afterAll(async () => {
    await far.destroy();
    await proxy.close();
    await db.close();
  });

  /** A contact's message, its chat, and its round claimed by `runner`. */
  const roundFor = async (n: number, claimedBy = 'runner') => {
    const chatId = `55118${n}@s.whatsapp.net`;
    await db.dataSource.query(
      `INSERT INTO messages (instance_id, id, message_id, chat_id, message_timestamp, status, text) VALUES ($1, $2, $3, $4, 1764400000000, 'Read', 'oi')`,
      [instanceId, `botpipe${n}`, `BOTPIPE${n}`, chatId],
    );
    await db.dataSource.query(`INSERT INTO chats (instance_id, id, wa_chatid, lead) VALUES ($1, $2, $3, '{"lead_name": "Ana"}'::jsonb)`, [
      instanceId,
      `chatpipe${n}`,
      chatId,
    ]);
    const [{ id }]: Array<{ id: string }> = await db.dataSource.query(
      `INSERT INTO chatbot_rounds (instance_id, chat_id, agent_id, trigger_id, due_at, status, claimed_by, claimed_until)
       VALUES ($1, $2, 'agent', 'trigger', now(), 'running', $3, now() + interval '30 seconds') RETURNING id::text`,
      [instanceId, chatId, claimedBy],
    );
    return (await rounds.round(id))!;
  };
  const finish = async (n: number, lead: Record<string, unknown> | null = null, claimedBy = 'runner') => {
    const round = await roundFor(n, claimedBy);
    proxy.chunks.length = 0;
    const ended = await rounds.finish(
      round,
      'runner',
      'done',
      'answered',
      `BOTPIPE${n}`,
      { agent_id: 'agent', turn: `BOTPIPE${n}` },
      (row) => ({ eventType: 'messages', chatId: row.chatId, payload: { message: { messageid: row.messageId, ai_metadata: row.aiMetadata } } }),
      lead && { fields: lead, event: (chat) => ({ eventType: 'chats', chatId: chat.waChatId, payload: { chat: { lead: chat.lead } } }) },
    );
    return { ended, roundTrips: roundTrips() };
  };
  const eventsOf = async (chatId: string) =>
    (await db.dataSource.query(`SELECT id::text, event_type, payload FROM outbox_events WHERE instance_id = $1 AND chat_id = $2 ORDER BY id`, [
      instanceId,
      chatId,
    ])) as Array<{ id: string; event_type: string; payload: Record<string, unknown> }>;

  it('should end the round, store its ai_metadata and write its event in two round trips, answering the event’s id', async () => {
    await rounds.round('0'); // the pool's one connection is open
    const { ended, roundTrips: trips } = await finish(1);
    expect(trips).toBe(2);
    const events = await eventsOf('551181@s.whatsapp.net');
    expect(events).toEqual([
      { id: ended!.eventId, event_type: 'messages', payload: { message: { messageid: 'BOTPIPE1', ai_metadata: { agent_id: 'agent', turn: 'BOTPIPE1' } } } },
    ]);
    expect(ended!.queued).toBe(false);
    const [round]: Array<{ status: string; claimed_by: string | null }> = await db.dataSource.query(
      `SELECT status, claimed_by FROM chatbot_rounds WHERE chat_id = '551181@s.whatsapp.net'`,
    );
    expect(round).toEqual({ status: 'done', claimed_by: null });
  });

  it('should write the lead’s chat event before the message’s, both with the COMMIT, and answer the last one’s id', async () => {
    const { ended, roundTrips: trips } = await finish(2, { lead_status: 'qualified' });
    expect(trips).toBe(3);
    const events = await eventsOf('551182@s.whatsapp.net');
    expect(events.map((event) => event.event_type)).toEqual(['chats', 'messages']);
    expect(events[0].payload).toEqual({ chat: { lead: { lead_name: 'Ana', lead_status: 'qualified' } } });
    expect(ended!.eventId).toBe(events[1].id);
  });

  it('should write nothing and answer null when the claim was lost, and leave the connection outside any transaction', async () => {
    const { ended, roundTrips: trips } = await finish(3, { lead_status: 'lost' }, 'another-runner');
    expect(ended).toBeNull();
    expect(trips).toBe(2);
    expect(await eventsOf('551183@s.whatsapp.net')).toEqual([]);
    const [message]: Array<{ ai_metadata: unknown }> = await db.dataSource.query(`SELECT ai_metadata FROM messages WHERE message_id = 'BOTPIPE3'`);
    expect(message.ai_metadata).toBeNull();
    // The pool's one connection is usable and not in a transaction.
    expect(await far.query(`SELECT now() = statement_timestamp() AS outside`)).toEqual([{ outside: true }]);
  });

  it('should say a later round of the chat is queued', async () => {
    const round = await roundFor(4);
    await db.dataSource.query(
      `INSERT INTO chatbot_rounds (instance_id, chat_id, agent_id, trigger_id, due_at, status) VALUES ($1, $2, 'agent', 'trigger', now(), 'gathering')`,
      [instanceId, round.chatId],
    );
    const ended = await rounds.finish(round, 'runner', 'done', 'answered', 'BOTPIPE4', { agent_id: 'agent' }, () => ({ eventType: 'messages', payload: {} }));
    expect(ended).toMatchObject({ queued: true, eventId: expect.any(String) });
  });
});
