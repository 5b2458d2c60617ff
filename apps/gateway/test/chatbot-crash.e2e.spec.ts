import { NatsBus } from '@gw/bus';
import { createChatbotServices, readChatbotConfig, type ChatbotServices } from '@gw/chatbot';
import { createLogger, EnvReader, toOpusVoiceNote } from '@gw/platform';
import { SessionWorker, sessionWorkerConfig } from '@gw/sessions';
import { FakeModels, lastUserText, openTestDatabase, simulatorControl, sineWav, startPrivateNats, testNatsUrl } from '@gw/testing';
import type { PrivateNats, TestDatabase } from '@gw/testing';
import { startSimulator, type RunningSimulator } from '@gw/wa-sim';
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { startGateway, type GatewayHarness } from './support/gateway-harness';
import { nextPhone, sleep, waitFor } from './support/stack';
import { chatbotRepositories } from './support/chatbot-repositories';

jest.setTimeout(120_000);

/**
 * A runner killed with SIGKILL mid-round, in a process of its own: while the model is answering, and
 * after the plan was stored while its message is being sent (typing). Another runner takes the round
 * over once the dead one's claim lapses; the contact gets exactly one answer either way.
 */
describe('chatbot crash safety (runner processes killed with SIGKILL)', () => {
  let natsUrl: string | null = null;
  let nats: PrivateNats | null = null;
  let sim: RunningSimulator;
  let db: TestDatabase;
  let bus: NatsBus;
  let gw: GatewayHarness;
  let worker: SessionWorker;
  let follower: ChatbotServices['follower'];
  const models = new FakeModels();
  const children = new Set<ChildProcess>();
  let instance: { id: string; token: string; phone: string };
  const logger = createLogger('chatbot-crash', process.env.TEST_LOG_LEVEL ?? 'silent');
  const control = <T>(method: 'GET' | 'POST', path: string, body?: unknown) => simulatorControl<T>(sim, method, path, body);
  const call = (method: string, path: string, body?: unknown) => gw.call(method, path, { token: instance.token, body });

  beforeAll(async () => {
    // A NATS of its own: `session.place` and the instance subjects are one for every stack on a NATS, so on
    // the machine's one another suite's worker could take this one's placements (tools/jest/test.js).
    nats = await startPrivateNats();
    natsUrl = nats?.url ?? (await testNatsUrl());
    if (!natsUrl) return;
    await models.start();
    sim = await startSimulator({ logLevel: 'silent', initialPrekeyCount: 1000 });
    db = await openTestDatabase();
    bus = await NatsBus.connect(natsUrl, 'chatbot-crash-test');
    gw = await startGateway({ bus, db, env: { SSRF_ALLOWLIST: '127.0.0.0/8' } });
    worker = new SessionWorker({
      dataSource: db.dataSource,
      bus,
      logger,
      config: sessionWorkerConfig({
        workerId: 'crash-worker',
        leaseTtlMs: 20_000,
        reconcileIntervalMs: 500,
        queryTimeoutMs: 5_000,
        simulator: { websocketUrl: sim.websocketUrl, rootPublicKey: Buffer.from(sim.rootPublicKey, 'base64') },
        ssrfAllowlist: ['127.0.0.0/8'],
      }),
    });
    await worker.start();
    // The follower runs here; only runners are killed.
    follower = createChatbotServices(
      chatbotRepositories(db.dataSource),
      bus,
      { ...readChatbotConfig(new EnvReader({ CHATBOT_POLL_MS: '100' })), runnerId: 'parent' },
      logger,
    ).follower;
    follower.start();

    const phone = nextPhone();
    await control('POST', '/sim/accounts', { phone, name: 'Loja' });
    const created = await gw.createInstance('crash');
    const connect = await gw.call('POST', '/instance/connect', { token: created.token, body: {} });
    await control('POST', '/sim/scan', { phone, qr: connect.body.instance.qrcode });
    await waitFor(
      () => gw.call('GET', '/instance/status', { token: created.token }),
      (r) => r.body.status?.connected === true,
      20_000,
      'connected',
    );
    instance = { ...created, phone };
    await call('POST', '/instance/updatechatbotsettings', { chatbot_enabled: true });
    const agent = await call('POST', '/agent/edit', {
      id: '',
      agent: { name: 'Loja', provider: 'openai', model: 'gpt-crash', apikey: 'sk-crash', typingDelay_seconds: 2, readMessages: false },
    });
    await call('POST', '/trigger/edit', { id: '', trigger: { type: 'agent', agent_id: agent.body.id, responseDelay_seconds: 0 } });
    follower.refresh();
  }, 90_000);

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    if (!natsUrl) return;
    await follower?.stop();
    await worker?.stop().catch(() => undefined);
    await gw?.close();
    await bus?.close();
    await sim?.stop();
    await db?.close();
    await models.stop();
    await nats?.stop();
  });

  /** A runner process; resolves once it runs. Its claim lasts 2 s, so a killed one's rounds are free soon. */
  const startRunner = async (name: string): Promise<ChildProcess> => {
    const child = fork(join(__dirname, 'support', 'chatbot-runner-child.ts'), [], {
      execArgv: ['-r', join(__dirname, 'support', 'ts-child.js')],
      env: {
        ...process.env,
        ...models.env(),
        NODE_OPTIONS: '',
        DATABASE_URL: db.url,
        DB_SCHEMA: db.schema,
        NATS_URL: natsUrl!,
        CHATBOT_RUNNER_ID: name,
        CHATBOT_CLAIM_MS: '2000',
        CHATBOT_POLL_MS: '100',
        CHATBOT_MODEL_TIMEOUT_MS: '20000',
        SSRF_ALLOWLIST: '127.0.0.0/8',
      },
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    children.add(child);
    child.on('exit', () => children.delete(child));
    await new Promise<void>((resolve, reject) => {
      child.on('message', (message) => message === 'ready' && resolve());
      child.on('exit', (code) => reject(new Error(`runner ${name} exited with ${code} before it was ready`)));
    });
    return child;
  };
  const killed = (child: ChildProcess) =>
    new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  const contact = async () => {
    const phone = nextPhone('5521');
    await control('POST', '/sim/accounts', { phone, name: 'Cliente' });
    return phone;
  };
  const answers = async (phone: string) =>
    (await control<Array<{ id: string; from: string; message: Record<string, any> }>>('GET', `/sim/accounts/${phone}/inbox?waitMs=500`)).filter((entry) =>
      entry.from.startsWith(instance.phone),
    );
  const roundOf = async (phone: string) =>
    (
      await db.dataSource.query(`SELECT id, status, attempts, plan FROM chatbot_rounds WHERE instance_id = $1 AND chat_id LIKE $2`, [instance.id, `${phone}@%`])
    )[0];

  it('killed while the model is answering: the next runner asks again and answers exactly once', async () => {
    if (!natsUrl) return;
    const first = await startRunner('runner-a');
    let calls = 0;
    let modelCalled!: () => void;
    const called = new Promise<void>((resolve) => (modelCalled = resolve));
    models.handler = (request) => {
      calls++;
      if (calls === 1) {
        modelCalled();
        return { text: 'never delivered', delayMs: 10_000 };
      }
      return { text: `resposta: ${lastUserText(request)}` };
    };
    const ana = await contact();
    await control('POST', `/sim/accounts/${ana}/send`, { to: instance.phone, text: 'quero um orçamento' });
    await called;
    await killed(first);
    expect((await roundOf(ana)).plan).toBeNull();

    await startRunner('runner-b');
    const received = await waitFor(
      () => answers(ana),
      (list) => list.length >= 1,
      20_000,
      'the answer',
    );
    await waitFor(
      () => roundOf(ana),
      (round) => round.status === 'done',
      10_000,
      'round done',
    );
    await sleep(1_500);
    expect((await answers(ana)).map((entry) => entry.message.extendedTextMessage?.text ?? entry.message.conversation)).toEqual([
      'resposta: quero um orçamento',
    ]);
    expect(received).toHaveLength(1);
    expect(calls).toBe(2);
    expect((await roundOf(ana)).attempts).toBe(2);
  });

  it('killed after the plan was stored, while its answer is being sent: the same message id is sent again and goes out once', async () => {
    if (!natsUrl) return;
    for (const child of [...children]) await killed(child);
    const first = await startRunner('runner-c');
    models.handler = (request) => ({ text: `resposta: ${lastUserText(request)}` });
    const bia = await contact();
    await control('POST', `/sim/accounts/${bia}/send`, { to: instance.phone, text: 'oi' });
    // The plan is stored before the send; the worker then shows "typing…" for 2 s.
    const planned = await waitFor(
      () => roundOf(bia),
      (round) => round?.plan !== null && round?.plan !== undefined,
      15_000,
      'plan stored',
    );
    await killed(first);
    const plannedId = planned.plan.sends[0].messageId;

    await startRunner('runner-d');
    await waitFor(
      () => roundOf(bia),
      (round) => round.status === 'done',
      20_000,
      'round done by the next runner',
    );
    await sleep(1_500);
    const received = await answers(bia);
    expect(received.map((entry) => entry.id)).toEqual([plannedId]);
    expect(
      models
        .chats()
        .filter((request) => lastUserText(request) === 'oi')
        .map((request) => request.turns),
    ).toHaveLength(1);
  });

  it('killed after a spoken answer was planned, while it is being sent: the same voice note (same id, same bytes) goes out once', async () => {
    if (!natsUrl) return;
    for (const child of [...children]) await killed(child);
    const theirs = await toOpusVoiceNote(sineWav(250, 500));
    const ours = await toOpusVoiceNote(sineWav(550, 500));
    models.handler = (request) => ({ text: `resposta: ${lastUserText(request)}` });
    models.transcription = () => ({ text: 'manda o catálogo' });
    models.speech = () => ({ audio: ours, contentType: 'audio/ogg' });
    const first = await startRunner('runner-e');
    const cris = await contact();
    await control('POST', `/sim/accounts/${cris}/send-media`, {
      to: instance.phone,
      type: 'audio',
      data: theirs.toString('base64'),
      mimetype: 'audio/ogg; codecs=opus',
      ptt: true,
      seconds: 1,
    });
    // The plan (the spoken answer as a staged file) is stored before the send; then 2 s of "recording…".
    const planned = await waitFor(
      () => roundOf(cris),
      (round) => round?.plan !== null && round?.plan !== undefined,
      15_000,
      'plan stored',
    );
    await killed(first);
    expect(planned.plan.sends.map((send: { kind: string }) => send.kind)).toEqual(['audio']);
    const plannedId = planned.plan.sends[0].messageId;

    await startRunner('runner-f');
    await waitFor(
      () => roundOf(cris),
      (round) => round.status === 'done',
      20_000,
      'round done by the next runner',
    );
    await sleep(1_500);
    const received = await answers(cris);
    expect(received.map((entry) => entry.id)).toEqual([plannedId]);
    expect(received[0].message.audioMessage).toMatchObject({ ptt: true });
    const bytes = Buffer.from(await (await fetch(`${sim.controlUrl}/sim/accounts/${cris}/inbox/${plannedId}/media`)).arrayBuffer());
    expect(bytes.equals(ours)).toBe(true);
    // Heard and spoken once: the heir resent the plan, it did not plan again.
    expect(models.audio('transcription')).toHaveLength(1);
    expect(models.audio('speech')).toHaveLength(1);
    expect(models.chats().filter((request) => lastUserText(request) === '[voice note] manda o catálogo')).toHaveLength(1);
  });
});
