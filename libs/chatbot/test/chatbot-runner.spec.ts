import { InProcessBus } from '@gw/bus';
import { ChatbotRunner, KnowledgeIndexer, readChatbotConfig, type ChatbotConfig } from '@gw/chatbot';
import { Subjects, type SendRequest } from '@gw/contracts';
import { ChatbotAdmissionRepository, ChatbotRepository, MessageRepository, QuickReplyRepository } from '@gw/persistence';
import { createLogger, EnvReader } from '@gw/platform';
import { FakeModels, lastUserText, newMessageFixture, openTestDatabase, sleep, waitFor, type TestDatabase } from '@gw/testing';

/**
 * The runner against Postgres and a fake worker on the bus (no WhatsApp): rounds of one chat one at a
 * time and in order across several runners, a round that cannot reach the instance waiting with its
 * plan (the model is not asked twice), and the purge of finished rounds.
 */
describe('chatbot runner (Postgres, fake worker)', () => {
  let db: TestDatabase;
  const bus = new InProcessBus();
  const models = new FakeModels();
  const runners: ChatbotRunner[] = [];
  let records: ChatbotRepository;
  let config: ChatbotConfig;
  let agentId: string;
  let triggerId: string;
  const logger = createLogger('chatbot-runner-test', 'silent');

  beforeAll(async () => {
    await models.start();
    db = await openTestDatabase();
    records = new ChatbotRepository(db.dataSource);
    await db.dataSource.query(
      `INSERT INTO instances (id, token, name, owner, chatbot_enabled) VALUES ('rrun1', 'tok-run1', 'runner-test', '5531999000001', true)`,
    );
    agentId = (await records.create('rrun1', 'agent', { name: 'Bot', provider: 'openai', model: 'gpt-run', apikey: 'sk-run', readMessages: false })).id;
    triggerId = (await records.create('rrun1', 'trigger', { type: 'agent', agent_id: agentId, active: true, responseDelay_seconds: 0 })).id;
    config = {
      ...readChatbotConfig(new EnvReader({ ...models.env(), SSRF_ALLOWLIST: '127.0.0.0/8', CHATBOT_POLL_MS: '50', CHATBOT_CLAIM_MS: '2000' })),
      runnerId: 'unused',
    };
  });

  afterAll(async () => {
    await Promise.all(runners.map((runner) => runner.stop()));
    await bus.close();
    await db.close();
    await models.stop();
  });

  const startRunner = (name: string) => {
    const runner = new ChatbotRunner(
      records,
      new QuickReplyRepository(db.dataSource),
      new KnowledgeIndexer(records, config, logger),
      bus,
      { ...config, runnerId: name },
      logger,
    );
    runners.push(runner);
    runner.start();
    return runner;
  };

  /** A received message admitted as the follower would. */
  const admit = (chatId: string, messageId: string, text: string) =>
    db.dataSource.transaction((manager) =>
      new ChatbotAdmissionRepository(db.dataSource).within(manager).admit({
        instanceId: 'rrun1',
        chatId,
        messageId,
        triggerId,
        agentId,
        delaySeconds: 0,
        input: { messageid: messageId, chatid: chatId, text, fromMe: false },
        envelope: { chat: { wa_chatid: chatId }, owner: '5531999000001', instanceName: 'runner-test' },
      }),
    );
  const roundsOf = (chatId: string) =>
    db.dataSource.query(`SELECT id, status, outcome, attempts, plan FROM chatbot_rounds WHERE instance_id = 'rrun1' AND chat_id = $1 ORDER BY id`, [chatId]);

  it('claims nothing queued behind an open round of its chat, and says the next round falls due when that claim lapses', async () => {
    const chat = '5531966000001@s.whatsapp.net';
    await admit(chat, 'XDUE1', 'first');
    await db.dataSource.query(
      `UPDATE chatbot_rounds SET status = 'running', claimed_by = 'ghost', claimed_until = now() + interval '1 hour' WHERE instance_id = 'rrun1' AND chat_id = $1`,
      [chat],
    );
    // Due at once, but queued behind the running round: not claimable, and not "due now" (a runner would spin).
    await admit(chat, 'XDUE2', 'second');
    expect((await roundsOf(chat)).map((round: { status: string }) => round.status)).toEqual(['running', 'gathering']);
    const { rounds, nextDue } = await records.claimDue('probe', 5, 2_000);
    expect(rounds).toEqual([]);
    expect(nextDue!.getTime()).toBeGreaterThan(Date.now() + 50 * 60_000);
    await db.dataSource.query(`UPDATE chatbot_rounds SET status = 'canceled' WHERE instance_id = 'rrun1' AND chat_id = $1`, [chat]);
    expect((await records.claimDue('probe', 5, 2_000)).nextDue).toBeNull();
  });

  it('runs the rounds of each chat one at a time and in order, with three runners side by side', async () => {
    const sends: Array<{ chat: string; text: string; at: number; done: number }> = [];
    const worker = bus.subscribe('instance.rrun1.send', async (data) => {
      const request = data as SendRequest;
      const at = Date.now();
      await sleep(30);
      sends.push({ chat: request.chatJid, text: (request.content as { text: string }).text, at, done: Date.now() });
      return { id: request.recordId, messageid: request.messageId, status: 'Sent' };
    });
    models.handler = async (request) => ({ text: `re ${lastUserText(request).split(' ').pop()}`, delayMs: 20 });
    try {
      const chats = Array.from({ length: 6 }, (_, i) => `55319880000${i}@s.whatsapp.net`);
      // Each chat's three messages become three rounds (the first is claimable at once: no gathering).
      for (let n = 0; n < 3; n++) {
        for (const chat of chats) {
          await admit(chat, `M${chat.slice(0, 12)}${n}`, `msg ${n}`);
          // Closed for gathering (as a round a runner died on): the next message starts the chat's next round.
          await db.dataSource.query(`UPDATE chatbot_rounds SET status = 'running', claimed_until = now() - interval '1 second' WHERE status = 'gathering'`);
        }
      }
      for (const chat of chats) expect(await roundsOf(chat)).toHaveLength(3);
      startRunner('runner-1');
      startRunner('runner-2');
      startRunner('runner-3');
      await waitFor(
        async () => sends.length,
        (count) => count === 18,
        30_000,
        'every round answered',
      );
      for (const chat of chats) {
        const mine = sends.filter((send) => send.chat === chat);
        expect(mine.map((send) => send.text)).toEqual(['re 0', 're 1', 're 2']);
        // One at a time: a round's send starts after the previous round's send finished.
        for (let i = 1; i < mine.length; i++) expect(mine[i].at).toBeGreaterThanOrEqual(mine[i - 1].done);
        expect((await roundsOf(chat)).map((round: { status: string }) => round.status)).toEqual(['done', 'done', 'done']);
      }
    } finally {
      worker.unsubscribe();
    }
  }, 60_000);

  it('a round whose instance is not reachable waits with its plan and is sent later without asking the model again', async () => {
    models.handler = () => ({ text: 'answer once' });
    models.requests.length = 0;
    const chat = '5531977000001@s.whatsapp.net';
    await admit(chat, 'MWAIT1', 'hello');
    for (const runner of runners) runner.poke();
    const [waiting] = await waitFor(
      () => roundsOf(chat),
      (rows) => rows[0]?.outcome?.startsWith('waiting'),
      10_000,
      'the round waiting for the instance',
    );
    expect(waiting.status).toBe('running');
    expect(waiting.outcome).toMatch(/waiting: no responders/);
    const plannedId = waiting.plan.sends[0].messageId;
    const sent: string[] = [];
    const worker = bus.subscribe('instance.rrun1.send', (data) => {
      sent.push((data as SendRequest).messageId);
      return { status: 'Sent' };
    });
    try {
      await waitFor(
        () => roundsOf(chat),
        (rows) => rows[0].status === 'done',
        15_000,
        'the round sent once the instance answers',
      );
      expect(sent).toEqual([plannedId]);
      expect(models.chats()).toHaveLength(1);
    } finally {
      worker.unsubscribe();
    }
  }, 30_000);

  it("sends a reply again at once when its instance's holder says it rejoined the bus, not at the send's timeout (ADR 0059)", async () => {
    models.handler = () => ({ text: 'lost once' });
    const chat = '5531977000002@s.whatsapp.net';
    const sent: string[] = [];
    // The first try is lost with the holder's NATS server: never answered. The holder is alive (it answers status).
    const worker = bus.subscribe('instance.rrun1.send', (data) => {
      sent.push((data as SendRequest).messageId);
      return sent.length === 1 ? new Promise(() => undefined) : { status: 'Sent' };
    });
    const status = bus.subscribe('instance.rrun1.status', () => ({ status: 'connected', loggedIn: true }));
    try {
      await admit(chat, 'XREJOIN1', 'hello');
      for (const runner of runners) runner.poke();
      await waitFor(
        async () => sent.length,
        (n) => n === 1,
        10_000,
        'the first try at the holder',
      );
      const rejoinedAt = Date.now();
      bus.publish(Subjects.holderRejoined, { workerId: 'w1', instanceIds: ['rrun1'] });
      const [round] = await waitFor(
        () => roundsOf(chat),
        (rows) => rows[0]?.status === 'done',
        10_000,
        'the round sent by the second try',
      );
      expect(Date.now() - rejoinedAt).toBeLessThan(config.sendTimeoutMs / 4);
      expect(sent).toHaveLength(2);
      expect(sent[1]).toBe(sent[0]);
      expect(round.plan.sends[0].messageId).toBe(sent[0]);
    } finally {
      worker.unsubscribe();
      status.unsubscribe();
    }
  }, 30_000);

  it("reads a round's messages stored in one transaction (same second, same created_at) in the round's order", async () => {
    const chat = '5531966000009@s.whatsapp.net';
    const second = Math.floor(Date.now() / 1000) * 1000;
    // One transaction, as the worker stores a socket's writes: the later message first, so the physical order is not the round's.
    await db.dataSource.transaction(async (tx) => {
      for (const [id, text] of [
        ['MORD3', 'third'],
        ['MORD1', 'first'],
        ['MORD2', 'second'],
      ])
        await new MessageRepository(db.dataSource).within(tx).insertNew([
          newMessageFixture('rrun1', {
            id,
            messageId: id,
            chatId: chat,
            messageTimestamp: second + 500,
            text,
            fromMe: false,
            wasSentByApi: false,
            status: 'Received',
          }),
        ]);
    });
    for (const order of [
      ['MORD1', 'MORD2', 'MORD3'],
      ['MORD3', 'MORD2', 'MORD1'],
    ]) {
      const history = await records.history('rrun1', [chat], { max: 10, min: 1, windowHours: 24, order });
      // Newest first.
      expect(history.map((row) => row.messageId)).toEqual([...order].reverse());
    }
  });

  it('purges finished rounds and admitted ids older than the retention', async () => {
    await db.dataSource.query(`UPDATE chatbot_rounds SET updated_at = now() - interval '8 days' WHERE chat_id LIKE '55319880000%'`);
    await db.dataSource.query(`UPDATE chatbot_inputs SET created_at = now() - interval '8 days' WHERE message_id LIKE 'M%' AND message_id <> 'MWAIT1'`);
    expect(await records.purgeFinished(7)).toEqual({ rounds: 18, inputs: 18 });
    expect(await roundsOf('5531977000001@s.whatsapp.net')).toHaveLength(1);
  });
});
