import { CHATBOT_CONSUMER, createChatbotServices, readChatbotConfig, type ChatbotServices } from '@gw/chatbot';
import { createLogger, EnvReader } from '@gw/platform';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toOpusVoiceNote } from '@gw/platform';
import { FakeModels, hasToolResult, lastUserText, sineWav, type FakeRequest } from '@gw/testing';
import { png } from './support/files-server';
import { nextPhone, sleep, Stack, waitFor } from './support/stack';
import { chatbotRepositories } from './support/chatbot-repositories';

/**
 * The chatbot end to end: real Baileys against the simulator, the outbox follower and the runner of
 * @gw/chatbot, and loopback servers that speak each provider's wire protocol.
 */
describe('chatbot (e2e)', () => {
  const stack = new Stack();
  const models = new FakeModels();
  let services: ChatbotServices;
  let instance: { id: string; token: string; phone: string };
  let functionCalls: Array<{ url: string; body: string }> = [];
  let functionServer: Server;
  let functionUrl = '';

  const call = (method: string, path: string, body?: unknown) => stack.gw.call(method, path, { token: instance.token, body });

  beforeAll(async () => {
    await models.start();
    functionServer = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        functionCalls.push({ url: req.url ?? '', body });
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ pedido: req.url?.split('/').pop(), status: 'a caminho' }));
      });
    });
    await new Promise<void>((resolve) => functionServer.listen(0, '127.0.0.1', resolve));
    functionUrl = `http://127.0.0.1:${(functionServer.address() as AddressInfo).port}`;
    // The gateway's /message/download transcribes through the same loopback OpenAI.
    await stack.start(models.env());
    const env = new EnvReader({
      ...models.env(),
      SSRF_ALLOWLIST: '127.0.0.0/8',
      CHATBOT_POLL_MS: '100',
      CHATBOT_CLAIM_MS: '3000',
      CHATBOT_MODEL_TIMEOUT_MS: '1500',
    });
    services = createChatbotServices(
      chatbotRepositories(stack.db.dataSource),
      stack.bus,
      { ...readChatbotConfig(env), runnerId: 'e2e-runner' },
      createLogger('chatbot', 'silent'),
    );
    services.follower.start();
    services.runner.start();
    instance = await stack.connectedInstance('bot');
    expect(
      (
        await call('POST', '/instance/updatechatbotsettings', {
          chatbot_enabled: true,
          chatbot_ignoreGroups: true,
          chatbot_stopConversation: 'parar',
          chatbot_stopMinutes: 30,
        })
      ).status,
    ).toBe(200);
    services.follower.refresh();
    await agent();
    await trigger();
  }, 60_000);

  afterAll(async () => {
    await services?.follower.stop();
    await services?.runner.stop();
    await stack.stop();
    await models.stop();
    functionServer?.closeAllConnections();
    await new Promise((resolve) => functionServer?.close(resolve));
  });

  beforeEach(() => {
    models.requests.length = 0;
    models.handler = (request) => ({ text: `echo: ${lastUserText(request)}` });
    functionCalls = [];
  });

  /** A fresh contact (its own chat), known to the simulator. */
  const contact = async (name = 'Ana') => {
    const phone = nextPhone('5521');
    await stack.control('POST', '/sim/accounts', { phone, name });
    return phone;
  };
  const say = (from: string, text: string) => stack.control<{ id: string }>('POST', `/sim/accounts/${from}/send`, { to: instance.phone, text });
  /** What the contact received from the instance (text, or the menu/poll message). */
  const received = async (phone: string, waitMs = 1_000) => (await stack.inbox(phone, waitMs)).filter((entry) => entry.from.startsWith(instance.phone));
  const textOf = (entry: { message: Record<string, any> }) => entry.message.extendedTextMessage?.text ?? entry.message.conversation ?? '';
  const findMessage = async (id: string) => (await call('POST', '/message/find', { id })).body.messages?.[0];
  const rounds = (chatPhone: string) =>
    stack.db.dataSource.query(`SELECT status, outcome, inputs, plan FROM chatbot_rounds WHERE instance_id = $1 AND chat_id LIKE $2 ORDER BY id`, [
      instance.id,
      `${chatPhone}@%`,
    ]);
  const chatRounds = (chatId: string) =>
    stack.db.dataSource.query(`SELECT status, outcome FROM chatbot_rounds WHERE instance_id = $1 AND chat_id = $2 ORDER BY id`, [instance.id, chatId]);
  /** The model requests whose conversation holds a user turn with `text` (tests run one after the other; a late round of another test is no concern). */
  const modelSaw = (text: string) => models.chats().filter((request) => request.turns.some((turn) => turn.role === 'user' && turn.text.includes(text)));
  const roundsDone = (chatPhone: string, count = 1) =>
    waitFor(
      () => rounds(chatPhone),
      (rows) => rows.length >= count && rows.slice(0, count).every((row: { status: string }) => !['gathering', 'running'].includes(row.status)),
      15_000,
      `${count} round(s) of ${chatPhone} finished`,
    );

  /**
   * Once the chatbot's follower has passed every `messages` event of the message `id` (its cursor moves in
   * the transaction that admits the message or not): what the bot made of it is in the database. A test
   * that the bot stays silent reads it then, instead of after a fixed sleep.
   */
  const followed = (id: string) =>
    waitFor(
      async () =>
        (
          await stack.db.dataSource.query(
            `SELECT count(*)::int AS events,
                    count(*) FILTER (WHERE ((o.tx, o.id) <= (c.tx, c.id) AND NOT (o.tx = ANY (c.pending))) OR o.id <= c.floor)::int AS passed
               FROM outbox_events o JOIN outbox_cursors c ON c.consumer = $3 AND c.instance_id = o.instance_id
              WHERE o.instance_id = $1 AND o.event_type = 'messages' AND o.payload->'message'->>'messageid' = $2`,
            [instance.id, id, CHATBOT_CONSUMER],
          )
        )[0] as { events: number; passed: number },
      (row) => row.events > 0 && row.passed === row.events,
      15_000,
      `the chatbot's follower past message ${id}`,
    );

  let agentId = '';
  const agent = async (fields: Record<string, unknown> = {}) => {
    const response = await call('POST', '/agent/edit', {
      id: agentId,
      agent: {
        name: 'Loja',
        provider: 'openai',
        model: 'gpt-test',
        apikey: 'sk-e2e',
        basePrompt: 'Você atende a Loja Exemplo.',
        temperature: 20,
        maxTokens: 200,
        readMessages: true,
        typingDelay_seconds: 0,
        maxMessageLength: 1000,
        ...fields,
      },
    });
    expect(response.status).toBe(200);
    agentId = response.body.id;
    return response.body;
  };
  let triggerId = '';
  const trigger = async (fields: Record<string, unknown> = {}) => {
    const response = await call('POST', '/trigger/edit', {
      id: triggerId,
      trigger: { active: true, type: 'agent', agent_id: agentId, wordsToStart: 'oi|olá|pedido', responseDelay_seconds: 0, ignoreGroups: true, ...fields },
    });
    expect(response.status).toBe(200);
    triggerId = response.body.id;
    return response.body;
  };

  it('answers a contact through OpenAI: the answer at the phone, read receipts, and ai_metadata exactly as the seed says', async () => {
    const ana = await contact();
    const first = await say(ana, 'oi, qual o horário?');
    const [answer] = await waitFor(
      () => received(ana),
      (entries) => entries.length > 0,
      15_000,
      'the answer',
    );
    expect(textOf(answer)).toBe('echo: oi, qual o horário?');
    await roundsDone(ana);

    // What the model saw: the base prompt as system instructions, the contact's message as the user's.
    const [request] = models.chats();
    expect(request.path).toBe('/openai/v1/chat/completions');
    expect(request.body).toMatchObject({ model: 'gpt-test', temperature: 0.4, max_tokens: 200 });
    expect(request.turns[0]).toEqual({ role: 'system', text: expect.stringContaining('Você atende a Loja Exemplo.') });
    expect(request.turns.at(-1)).toEqual({ role: 'user', text: 'oi, qual o horário?' });

    // The full record on the contact's message; the bot's message carries only agent_id and turn.
    const turn = await waitFor(
      () => findMessage(first.id),
      (message) => Object.keys(message?.ai_metadata ?? {}).length > 0,
      5_000,
      'ai_metadata',
    );
    const metadata = turn.ai_metadata;
    expect(Object.keys(metadata).sort()).toEqual(['agent_id', 'flow_id', 'outcome', 'request', 'response', 'turn']);
    expect(metadata).toMatchObject({ agent_id: agentId, turn: first.id, flow_id: '' });
    expect(Object.keys(metadata.request).sort()).toEqual(['messages', 'options', 'tools']);
    expect(metadata.request.options).toEqual({ model: 'gpt-test', temperature: 0.4, maxTokens: 200, topP: 1, frequencyPenalty: 0, presencePenalty: 0 });
    expect(metadata.request.messages.at(-1)).toEqual({ role: 'user', content: 'oi, qual o horário?' });
    expect(metadata.request.tools.map((tool: { function: { name: string } }) => tool.function.name)).toEqual([
      'send_menu',
      'send_file',
      'handoff',
      'update_lead',
    ]);
    expect(Object.keys(metadata.response).sort()).toEqual(['choices', 'error', 'toolResults']);
    expect(metadata.response).toMatchObject({ error: '', toolResults: [] });
    expect(metadata.response.choices).toEqual([
      { index: 0, message: { role: 'assistant', content: 'echo: oi, qual o horário?', tool_calls: [] }, finish_reason: 'stop' },
    ]);
    expect(metadata.outcome).toEqual({ status: 'sent', texts: 1, audio: false, menus: 0, files: 0, handoff: '', lead: [], detail: '' });
    const sent = await findMessage(answer.id);
    expect(sent).toMatchObject({ fromMe: true, wasSentByApi: true, text: 'echo: oi, qual o horário?', ai_metadata: { agent_id: agentId, turn: first.id } });
    expect(Object.keys(sent.ai_metadata).sort()).toEqual(['agent_id', 'turn']);

    // The messages event of the contact's message carries it too.
    const events = await stack.db.dataSource.query(
      `SELECT payload FROM outbox_events WHERE instance_id = $1 AND event_type = 'messages' AND payload->'message'->>'messageid' = $2 ORDER BY id`,
      [instance.id, first.id],
    );
    expect(events.at(-1).payload).toMatchObject({ EventType: 'messages', message: { messageid: first.id, ai_metadata: metadata }, chat: expect.any(Object) });
    // Read receipts (readMessages) reached the contact.
    await waitFor(
      () => stack.control<Array<{ id: string; status: string }>>('GET', `/sim/accounts/${ana}/outbox`),
      (outbox) => outbox.some((entry) => entry.id === first.id && entry.status === 'read'),
      10_000,
      'the contact message read',
    );
  }, 40_000);

  it('continues the conversation without the start words, with the chat history as context', async () => {
    const bia = await contact('Bia');
    await say(bia, 'olá');
    await waitFor(
      () => received(bia),
      (entries) => entries.length >= 1,
      15_000,
      'first answer',
    );
    await roundsDone(bia);
    const chat = (await call('POST', '/chat/find', { wa_chatid: `${bia}@s.whatsapp.net` })).body.chats[0];
    expect(chat).toMatchObject({ chatbot_lastTrigger_id: triggerId, chatbot_lastTriggerAt: expect.any(Number) });
    expect(Math.abs(chat.chatbot_lastTriggerAt - Date.now() / 1000)).toBeLessThan(60);
    await say(bia, 'e aos sábados?');
    await waitFor(
      () => received(bia),
      (entries) => entries.length >= 2,
      15_000,
      'second answer',
    );
    const last = models.chats().at(-1)!;
    expect(last.turns.slice(1)).toEqual([
      { role: 'user', text: 'olá' },
      { role: 'assistant', text: 'echo: olá' },
      { role: 'user', text: 'e aos sábados?' },
    ]);
  }, 40_000);

  it('gathers consecutive messages for responseDelay_seconds into one round and one model call', async () => {
    // Long enough for the second message to arrive on a loaded machine.
    await trigger({ responseDelay_seconds: 4 });
    try {
      const caio = await contact('Caio');
      await say(caio, 'oi');
      await say(caio, 'quero ver um pedido');
      await waitFor(
        () => received(caio),
        (entries) => entries.length >= 1,
        15_000,
        'the answer',
      );
      await roundsDone(caio);
      expect(modelSaw('quero ver um pedido')).toHaveLength(1);
      expect(modelSaw('quero ver um pedido')[0].turns.slice(1)).toEqual([
        { role: 'user', text: 'oi' },
        { role: 'user', text: 'quero ver um pedido' },
      ]);
      const [round] = await rounds(caio);
      expect(round.inputs.map((input: { text: string }) => input.text)).toEqual(['oi', 'quero ver um pedido']);
    } finally {
      await trigger({ responseDelay_seconds: 0 });
    }
  }, 40_000);

  it('does not start without a start word, nor in a chat whose chatbot_disableUntil lies ahead', async () => {
    const davi = await contact('Davi');
    const bomDia = await say(davi, 'bom dia');
    const eva = await contact('Eva');
    const until = Math.floor(Date.now() / 1000) + 600;
    expect((await call('POST', '/chat/editLead', { id: `${eva}@s.whatsapp.net`, chatbot_disableUntil: until })).status).toBe(200);
    const oi = await say(eva, 'oi');
    await followed(bomDia.id);
    await followed(oi.id);
    expect(await rounds(davi)).toEqual([]);
    expect(await rounds(eva)).toEqual([]);
    expect(modelSaw('bom dia')).toEqual([]);
    // Cleared (0), the bot answers again.
    expect((await call('POST', '/chat/editLead', { id: `${eva}@s.whatsapp.net`, chatbot_disableUntil: 0 })).status).toBe(200);
    await say(eva, 'oi de novo');
    await waitFor(
      () => received(eva),
      (entries) => entries.length >= 1,
      15_000,
      'the answer after the pause',
    );
  }, 40_000);

  it('the stop word pauses the chat for chatbot_stopMinutes; a message typed on the phone pauses it too', async () => {
    const fabi = await contact('Fabi');
    const before = Math.floor(Date.now() / 1000);
    await say(fabi, 'Parar');
    const chat = await waitFor(
      () => call('POST', '/chat/find', { wa_chatid: `${fabi}@s.whatsapp.net` }),
      (response) => (response.body.chats?.[0]?.chatbot_disableUntil ?? 0) > 0,
      10_000,
      'the pause',
    );
    expect(chat.body.chats[0].chatbot_disableUntil).toBeGreaterThanOrEqual(before + 30 * 60);
    await followed((await say(fabi, 'oi')).id);
    expect(await rounds(fabi)).toEqual([]);

    const gil = await contact('Gil');
    // The owner answers from the phone (not through the API): the bot steps back.
    await stack.control('POST', `/sim/accounts/${instance.phone}/send`, { to: gil, text: 'Oi Gil, aqui é a Maria' });
    await waitFor(
      () => call('POST', '/chat/find', { wa_chatid: `${gil}@s.whatsapp.net` }),
      (response) => (response.body.chats?.[0]?.chatbot_disableUntil ?? 0) > before,
      10_000,
      'the pause after a person answered',
    );
    await followed((await say(gil, 'oi')).id);
    expect(await rounds(gil)).toEqual([]);
  }, 40_000);

  it('ignores groups when chatbot_ignoreGroups (or the trigger) says so, and answers in the group when both allow it', async () => {
    const admin = await contact('Admin');
    const group = await stack.control<{ jid: string }>('POST', '/sim/groups', { creator: admin, subject: 'Clientes', participants: [instance.phone] });
    const asked = await stack.control<{ id: string }>('POST', `/sim/accounts/${admin}/send`, { to: group.jid, text: 'oi pessoal' });
    await waitFor(
      () => findMessage(asked.id),
      (message) => message !== undefined,
      10_000,
      'the group message stored',
    );
    await followed(asked.id);
    expect(await chatRounds(group.jid)).toEqual([]);

    await call('POST', '/instance/updatechatbotsettings', { chatbot_ignoreGroups: false });
    try {
      // The trigger still ignores groups.
      const again = await stack.control<{ id: string }>('POST', `/sim/accounts/${admin}/send`, { to: group.jid, text: 'oi de novo' });
      await followed(again.id);
      expect(await chatRounds(group.jid)).toEqual([]);
      await trigger({ ignoreGroups: false });
      await stack.control('POST', `/sim/accounts/${admin}/send`, { to: group.jid, text: 'oi, alguém?' });
      await waitFor(
        () => stack.inbox(admin, 1_000),
        (entries) => entries.some((entry) => textOf(entry) === 'echo: Admin: oi, alguém?'),
        15_000,
        'the answer in the group (the sender named in the context)',
      );
    } finally {
      await trigger({ ignoreGroups: true });
      await call('POST', '/instance/updatechatbotsettings', { chatbot_ignoreGroups: true });
    }
  }, 40_000);

  it('tools: a menu and a handoff; the chat is then disabled and the bot stays silent', async () => {
    models.handler = (request) =>
      hasToolResult(request)
        ? { text: 'Vou chamar uma pessoa.' }
        : {
            toolCalls: [
              { name: 'send_menu', args: { type: 'poll', text: 'Qual assunto?', choices: ['Pedido', 'Troca'] } },
              { name: 'handoff', args: { reason: 'pediu um humano' } },
            ],
          };
    const hugo = await contact('Hugo');
    const asked = await say(hugo, 'oi, quero falar com alguém');
    const entries = await waitFor(
      () => received(hugo),
      (list) => list.length >= 2,
      15_000,
      'text and poll',
    );
    expect(textOf(entries[0])).toBe('Vou chamar uma pessoa.');
    expect(entries[1].message.pollCreationMessageV3 ?? entries[1].message.pollCreationMessage ?? entries[1].message.messageContextInfo).toBeDefined();
    await roundsDone(hugo);
    const metadata = (await findMessage(asked.id)).ai_metadata;
    expect(metadata.outcome).toEqual({ status: 'sent', texts: 1, audio: false, menus: 1, files: 0, handoff: 'pediu um humano', lead: [], detail: '' });
    expect(metadata.response.toolResults.map((result: { toolName: string }) => result.toolName)).toEqual(['send_menu', 'handoff']);
    const chat = await call('POST', '/chat/find', { wa_chatid: `${hugo}@s.whatsapp.net` });
    expect(chat.body.chats[0].chatbot_disableUntil).toBeGreaterThan(Date.now() / 1000);
    models.requests.length = 0;
    await followed((await say(hugo, 'oi?')).id);
    expect(await rounds(hugo)).toHaveLength(1);
  }, 40_000);

  it('the model writes lead fields (update_lead): the chat has them, outcome.lead names them, the chats event follows', async () => {
    models.handler = (request) =>
      hasToolResult(request)
        ? { text: 'Anotado!' }
        : {
            toolCalls: [
              {
                name: 'update_lead',
                args: { lead_name: 'Quel', lead_status: 'qualificado', lead_field02: 'Recife', lead_tags: ['vip', 'loja'], wa_name: 'not a lead field' },
              },
            ],
          };
    expect((await call('POST', '/instance/updateFieldsMap', { lead_field02: 'cidade' })).status).toBe(200);
    const quel = await contact('Raquel');
    const asked = await say(quel, 'oi, me chamo Quel e quero comprar');
    await waitFor(
      () => received(quel),
      (list) => list.length >= 1,
      15_000,
      'the answer',
    );
    await roundsDone(quel);
    const chat = (await call('POST', '/chat/find', { wa_chatid: `${quel}@s.whatsapp.net` })).body.chats[0];
    expect(chat).toMatchObject({ lead_name: 'Quel', lead_status: 'qualificado', lead_field02: 'Recife', lead_tags: ['vip', 'loja'] });
    const metadata = (await findMessage(asked.id)).ai_metadata;
    expect(metadata.outcome.lead).toEqual(['lead_name', 'lead_status', 'lead_field02', 'lead_tags']);
    // The tool offered the custom field under the instance's name for it.
    const tool = metadata.request.tools.find((entry: { function: { name: string } }) => entry.function.name === 'update_lead').function;
    expect(tool.parameters.properties.lead_field02.description).toBe('custom field "cidade"');
    const events = await stack.db.dataSource.query(
      `SELECT payload FROM outbox_events WHERE instance_id = $1 AND event_type = 'chats' AND payload->'chats'->0->>'lead_status' = 'qualificado'`,
      [instance.id],
    );
    expect(events).toHaveLength(1);
  }, 40_000);

  it('an HTTP function is called with the model’s arguments and its answer goes back to the model', async () => {
    const created = await call('POST', '/function/edit', {
      id: '',
      function: {
        name: 'consultar_pedido',
        description: 'Consulta um pedido',
        method: 'GET',
        endpoint: `${functionUrl}/pedidos/{{numero}}`,
        headers: { Authorization: 'Bearer fn-secret' },
        parameters: [{ name: 'numero', type: 'string', required: true }],
      },
    });
    expect(created.status).toBe(200);
    try {
      models.handler = (request) => {
        const result = request.turns.find((turn) => turn.role === 'tool');
        return result ? { text: `Seu pedido: ${result.text}` } : { toolCalls: [{ name: 'consultar_pedido', args: { numero: '123' } }] };
      };
      const iris = await contact('Iris');
      await say(iris, 'pedido 123?');
      const [answer] = await waitFor(
        () => received(iris),
        (list) => list.length >= 1,
        15_000,
        'the answer',
      );
      expect(functionCalls).toEqual([{ url: '/pedidos/123', body: '' }]);
      expect(textOf(answer)).toContain('a caminho');
      const [request] = models.chats();
      expect(request.body.tools.map((tool: { function: { name: string } }) => tool.function.name)).toContain('consultar_pedido');
    } finally {
      await call('POST', '/function/edit', { id: created.body.id, delete: true });
    }
  }, 40_000);

  it('the first seconds: a message 100 ms after chatbot_enabled is answered (its first tool call a function created just before), one from before is not', async () => {
    // Its own instance, its bot switched on through the API alone: the follower is not told (no refresh()).
    const late = await stack.connectedInstance('bot-late');
    const as = (method: string, path: string, body?: unknown) => stack.gw.call(method, path, { token: late.token, body });
    const lateAgent = await as('POST', '/agent/edit', {
      id: '',
      agent: { name: 'Loja', provider: 'openai', model: 'gpt-test', apikey: 'sk-e2e', basePrompt: 'Você atende a Loja Exemplo.', typingDelay_seconds: 0 },
    });
    expect(lateAgent.status).toBe(200);
    const lateTrigger = await as('POST', '/trigger/edit', {
      id: '',
      trigger: { active: true, type: 'agent', agent_id: lateAgent.body.id, wordsToStart: 'oi|pedido', responseDelay_seconds: 0 },
    });
    expect(lateTrigger.status).toBe(200);
    models.handler = (request) => {
      const result = request.turns.find((turn) => turn.role === 'tool');
      return result ? { text: `Seu pedido: ${result.text}` } : { toolCalls: [{ name: 'rastrear_pedido', args: { numero: '777' } }] };
    };
    const eva = await contact('Eva');
    const sayLate = (text: string) => stack.control<{ id: string }>('POST', `/sim/accounts/${eva}/send`, { to: late.phone, text });
    const before = await sayLate('oi, antes do bot');
    await waitFor(
      () => as('POST', '/message/find', { id: before.id }),
      (response) => response.body.messages?.length === 1,
      10_000,
      'the message from before stored',
    );

    const enabled = await as('POST', '/instance/updatechatbotsettings', { chatbot_enabled: true });
    expect(enabled).toMatchObject({ status: 200, body: { chatbot_enabled: true } });
    const enabledAt = Date.now();
    // Issue 33's report: the bot switched on, a function created, a message at once.
    const created = await as('POST', '/function/edit', {
      id: '',
      function: {
        name: 'rastrear_pedido',
        description: 'Rastreia um pedido',
        method: 'GET',
        endpoint: `${functionUrl}/pedidos/{{numero}}`,
        parameters: [{ name: 'numero', type: 'string', required: true }],
      },
    });
    expect(created.status).toBe(200);
    await sleep(Math.max(0, enabledAt + 100 - Date.now()));
    const after = await sayLate('oi, cadê meu pedido?');

    const answers = await waitFor(
      () => stack.inbox(eva, 1_000),
      (entries) => entries.some((entry) => entry.from.startsWith(late.phone)),
      15_000,
      'the answer to the message sent 100 ms after enabling',
    );
    expect(answers.filter((entry) => entry.from.startsWith(late.phone)).map(textOf)).toEqual([expect.stringContaining('a caminho')]);
    expect(functionCalls).toEqual([{ url: '/pedidos/777', body: '' }]);
    // One round, for the message sent after: the one from before started none (no backlog surprise).
    const lateRounds = await stack.db.dataSource.query(`SELECT inputs FROM chatbot_rounds WHERE instance_id = $1`, [late.id]);
    expect(lateRounds.map((round: { inputs: Array<{ messageid: string }> }) => round.inputs.map((input) => input.messageid))).toEqual([[after.id]]);
    expect(models.chats().map((request) => lastUserText(request))).not.toContain('oi, antes do bot');
  }, 60_000);

  it('knowledge is vectorized (embeddings through OPENAI_BASE_URL) and retrieved into the prompt by similarity', async () => {
    await call('POST', '/instance/updatechatbotsettings', { openai_apikey: 'sk-embeddings' });
    const created = await call('POST', '/knowledge/edit', {
      id: '',
      knowledge: { tittle: 'Entrega', content: 'A entrega para o Rio de Janeiro leva três dias úteis e custa dez reais.' },
    });
    const other = await call('POST', '/knowledge/edit', { id: '', knowledge: { tittle: 'Trocas', content: 'Trocas em até trinta dias com a nota fiscal.' } });
    try {
      const listed = await waitFor(
        () => call('GET', '/knowledge/list'),
        (response) => response.body.every((record: { vectorStatus: string }) => record.vectorStatus === 'done'),
        10_000,
        'knowledge vectorized',
      );
      expect(listed.body.find((record: { id: string }) => record.id === created.body.id)).toMatchObject({
        isVectorized: true,
        vectorStatus: 'done',
        chunks: 1,
        lastVectorizedAt: expect.any(Number),
      });
      expect(models.requests.some((request) => request.provider === 'embeddings' && request.headers.authorization === 'Bearer sk-embeddings')).toBe(true);
      const joao = await contact('João');
      await say(joao, 'oi, quanto custa a entrega para o Rio de Janeiro?');
      await waitFor(
        () => received(joao),
        (list) => list.length >= 1,
        15_000,
        'the answer',
      );
      const system = models.chats()[0].turns[0].text;
      expect(system).toContain('A entrega para o Rio de Janeiro leva três dias úteis');
      expect(system.indexOf('entrega para o Rio')).toBeLessThan(system.indexOf('Trocas') === -1 ? Infinity : system.indexOf('Trocas'));
    } finally {
      await call('POST', '/knowledge/edit', { id: created.body.id, delete: true });
      await call('POST', '/knowledge/edit', { id: other.body.id, delete: true });
      await call('POST', '/instance/updatechatbotsettings', { openai_apikey: '' });
    }
  }, 40_000);

  it('a quickreply trigger sends the quick reply; the model may send one as a tool', async () => {
    const reply = await call('POST', '/quickreply/edit', {
      shortCut: 'horarios',
      aiDescription: 'opening hours',
      message: { kind: 'text', text: 'Abrimos de segunda a sábado, 9h às 18h.' },
    });
    expect(reply.status).toBe(200);
    const quick = await call('POST', '/trigger/edit', {
      id: '',
      trigger: { type: 'quickreply', quickReply_id: reply.body.quickReply.id, wordsToStart: 'horário', priority: 10, responseDelay_seconds: 0 },
    });
    expect(quick.status).toBe(200);
    try {
      const nina = await contact('Nina');
      const asked = await say(nina, 'Horário?');
      const [answer] = await waitFor(
        () => received(nina),
        (list) => list.length >= 1,
        15_000,
        'the quick reply',
      );
      expect(textOf(answer)).toBe('Abrimos de segunda a sábado, 9h às 18h.');
      expect(modelSaw('Horário?')).toEqual([]);
      await roundsDone(nina);
      const metadata = (await findMessage(asked.id)).ai_metadata;
      expect(metadata).toMatchObject({ agent_id: '', turn: asked.id, outcome: { status: 'sent', texts: 1, detail: expect.stringContaining('horarios') } });
    } finally {
      await call('POST', '/trigger/edit', { id: quick.body.id, delete: true });
    }

    models.handler = (request) => (hasToolResult(request) ? { text: '' } : { toolCalls: [{ name: 'send_quick_reply', args: { shortCut: 'horarios' } }] });
    const otto = await contact('Otto');
    await say(otto, 'oi, que horas vocês abrem?');
    const [answer] = await waitFor(
      () => received(otto),
      (list) => list.length >= 1,
      15_000,
      'the quick reply through the tool',
    );
    expect(textOf(answer)).toBe('Abrimos de segunda a sábado, 9h às 18h.');
    const [request] = models.chats();
    const tool = request.body.tools.find((candidate: { function: { name: string } }) => candidate.function.name === 'send_quick_reply');
    expect(tool.function.parameters.properties.shortCut.enum).toEqual(['horarios']);
    expect(tool.function.description).toContain('opening hours');
    await call('POST', '/quickreply/edit', { id: reply.body.quickReply.id, delete: true });
  }, 40_000);

  it('knowledge from a base64 CSV, embedded locally when the instance has no openai_apikey', async () => {
    const csv = Buffer.from('produto,preço,prazo\ncamiseta azul,59 reais,pronta entrega\ncaneca,25 reais,sob encomenda\n').toString('base64');
    const created = await call('POST', '/knowledge/edit', { id: '', knowledge: { tittle: 'Tabela', content: csv }, fileType: 'csv' });
    try {
      await waitFor(
        () => call('GET', '/knowledge/list'),
        (response) => response.body.find((record: { id: string }) => record.id === created.body.id)?.vectorStatus === 'done',
        10_000,
        'knowledge vectorized',
      );
      expect(models.requests.filter((request) => request.provider === 'embeddings')).toEqual([]);
      const pia = await contact('Pia');
      await say(pia, 'oi, quanto custa a caneca?');
      await waitFor(
        () => received(pia),
        (list) => list.length >= 1,
        15_000,
        'the answer',
      );
      expect(modelSaw('caneca')[0].turns[0].text).toContain('produto: caneca; preço: 25 reais; prazo: sob encomenda');
    } finally {
      await call('POST', '/knowledge/edit', { id: created.body.id, delete: true });
    }
  }, 40_000);

  it.each(['error', 'timeout'] as const)(
    'a provider %s ends the round with outcome.status saying so, response.error set and nothing sent',
    async (kind) => {
      models.handler = () => (kind === 'error' ? { status: 503, error: 'overloaded' } : { text: 'late', delayMs: 2_500 });
      const kat = await contact('Kat');
      const asked = await say(kat, 'oi');
      await roundsDone(kat);
      const [round] = await rounds(kat);
      expect(round).toMatchObject({ status: 'failed', outcome: kind });
      const metadata = (await findMessage(asked.id)).ai_metadata;
      expect(metadata.outcome).toMatchObject({ status: kind, texts: 0, menus: 0, files: 0 });
      expect(metadata.response.error).toMatch(kind === 'error' ? /overloaded/ : /timeout/);
      expect(await received(kat, 500)).toEqual([]);
    },
    40_000,
  );

  it.each(['anthropic', 'gemini', 'deepseek'] as const)(
    'answers through %s in its own API',
    async (provider) => {
      await agent({ provider, model: `${provider}-test` });
      try {
        const lia = await contact('Lia');
        await say(lia, 'oi');
        const [answer] = await waitFor(
          () => received(lia),
          (list) => list.length >= 1,
          15_000,
          'the answer',
        );
        expect(textOf(answer)).toBe('echo: oi');
        expect(models.chats().map((request: FakeRequest) => request.provider)).toEqual([provider]);
      } finally {
        await agent({ provider: 'openai', model: 'gpt-test' });
      }
    },
    40_000,
  );

  describe('voice', () => {
    let theirVoice: Buffer;
    let ourVoice: Buffer;
    beforeAll(async () => {
      theirVoice = await toOpusVoiceNote(sineWav(220, 600));
      ourVoice = await toOpusVoiceNote(sineWav(660, 500));
    });
    beforeEach(() => {
      models.transcription = () => ({ text: 'qual o horário de sábado?' });
      models.speech = () => ({ audio: ourVoice, contentType: 'audio/ogg' });
    });
    afterEach(() => {
      models.transcription = () => ({ text: '' });
    });
    const sayByVoice = (from: string, data: Buffer) =>
      stack.control<{ id: string }>('POST', `/sim/accounts/${from}/send-media`, {
        to: instance.phone,
        type: 'audio',
        data: data.toString('base64'),
        mimetype: 'audio/ogg; codecs=opus',
        ptt: true,
        seconds: 1,
      });
    const media = (phone: string, id: string) =>
      fetch(`${stack.sim.controlUrl}/sim/accounts/${phone}/inbox/${id}/media`).then(async (response) => Buffer.from(await response.arrayBuffer()));

    it('a voice note is transcribed for the model and answered with a voice note (text to speech, sent as a ptt)', async () => {
      const vivi = await contact('Vivi');
      await say(vivi, 'oi');
      await roundsDone(vivi);
      const asked = await sayByVoice(vivi, theirVoice);
      const voiceNote = (
        await waitFor(
          () => received(vivi),
          (list) => list.some((entry) => entry.message.audioMessage),
          15_000,
          'the voice answer',
        )
      ).find((entry) => entry.message.audioMessage)!;
      await roundsDone(vivi, 2);
      // The model saw what the contact said.
      const request = modelSaw('qual o horário de sábado?')[0];
      expect(request.turns.at(-1)).toEqual({ role: 'user', text: '[voice note] qual o horário de sábado?' });
      // The transcription got the voice note's bytes (downloaded from WhatsApp by the worker), with the agent's key.
      const [heard] = models.audio('transcription');
      expect(heard.headers.authorization).toBe('Bearer sk-e2e');
      expect(heard.body).toMatchObject({ model: 'whisper-1', file: { size: theirVoice.length } });
      // The answer spoken, and the phone got exactly those bytes as a voice note.
      const [spoken] = models.audio('speech');
      expect(spoken.body).toEqual({ model: 'tts-1', input: 'echo: [voice note] qual o horário de sábado?', voice: 'alloy', response_format: 'opus' });
      expect(voiceNote.message.audioMessage).toMatchObject({ ptt: true, mimetype: 'audio/ogg; codecs=opus' });
      expect((await media(vivi, voiceNote.id)).equals(ourVoice)).toBe(true);
      const metadata = (await findMessage(asked.id)).ai_metadata;
      expect(metadata.outcome).toEqual({ status: 'sent', texts: 0, audio: true, menus: 0, files: 0, handoff: '', lead: [], detail: '' });
      expect(metadata.request.messages.at(-1)).toEqual({ role: 'user', content: '[voice note] qual o horário de sábado?' });
      const sent = await findMessage(voiceNote.id);
      expect(sent).toMatchObject({ fromMe: true, ai_metadata: { agent_id: agentId, turn: asked.id } });
      // Heard once: the next round reads the stored transcript from the history.
      await say(vivi, 'e domingo?');
      await roundsDone(vivi, 3);
      const later = modelSaw('e domingo?')[0].turns;
      expect(later.slice(-3)).toEqual([
        { role: 'user', text: '[voice note] qual o horário de sábado?' },
        // What the bot said in its voice note, from the send's payload.
        { role: 'assistant', text: '[voice note] echo: [voice note] qual o horário de sábado?' },
        { role: 'user', text: 'e domingo?' },
      ]);
      expect(models.audio('transcription')).toHaveLength(1);
    }, 60_000);

    it('/message/download transcribe: the same transcription, with the request’s openai_apikey (then saved on the instance) or a clear 400 without one', async () => {
      models.transcription = (upload) => ({ text: `ouvi ${upload.file!.bytes.length} bytes` });
      const ivo = await contact('Ivo');
      const note = await sayByVoice(ivo, theirVoice);
      await waitFor(
        () => findMessage(note.id),
        (message) => message?.messageType === 'AudioMessage',
        10_000,
        'the voice note stored',
      );
      const refused = await call('POST', '/message/download', { id: note.id, transcribe: true });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatch(/transcribe needs an OpenAI key/);
      try {
        const heard = await call('POST', '/message/download', { id: note.id, transcribe: true, openai_apikey: 'sk-download', return_link: false });
        expect(heard.status).toBe(200);
        expect(heard.body).toMatchObject({ transcription: `ouvi ${theirVoice.length} bytes`, mimetype: 'audio/mpeg', fileURL: '' });
        const [request] = models.audio('transcription');
        expect(request.path).toBe('/openai/v1/audio/transcriptions');
        expect(request.headers.authorization).toBe('Bearer sk-download');
        // The key is the instance's now: the next call needs none.
        expect((await call('POST', '/message/download', { id: note.id, transcribe: true })).body.transcription).toBe(`ouvi ${theirVoice.length} bytes`);
        expect(models.audio('transcription')[1].headers.authorization).toBe('Bearer sk-download');
        // A transcription the provider refuses is a 502 saying so, without the key a server may echo.
        models.transcription = () => ({ status: 401, error: 'Incorrect API key provided: sk-download' });
        const failed = await call('POST', '/message/download', { id: note.id, transcribe: true });
        expect(failed.status).toBe(502);
        expect(failed.body.error).toMatch(/transcription failed: 401 Incorrect API key provided: \[masked\]/);
        expect(failed.body.error).not.toContain('sk-download');
      } finally {
        expect((await call('POST', '/instance/updatechatbotsettings', { openai_apikey: '' })).status).toBe(200);
      }
    }, 60_000);

    it('/message/download transcribe refuses bad input with a clear 4xx, before anything is downloaded, and keeps no key it did not check', async () => {
      const lia = await contact('Lia');
      const note = await sayByVoice(lia, theirVoice);
      const image = await stack.control<{ id: string }>('POST', `/sim/accounts/${lia}/send-media`, {
        to: instance.phone,
        type: 'image',
        data: png.toString('base64'),
        mimetype: 'image/png',
      });
      for (const id of [note.id, image.id])
        await waitFor(
          () => findMessage(id),
          (message) => Boolean(message?.messageType),
          10_000,
          'the message stored',
        );
      // Images the instance holds in its file store (the chatbot's own rounds download only voice notes).
      const files = async () =>
        Number(
          (await stack.db.dataSource.query(`SELECT count(*) AS n FROM stored_files WHERE instance_id = $1 AND mimetype = 'image/png'`, [instance.id]))[0].n,
        );
      const before = await files();
      const noAudio = await call('POST', '/message/download', { id: image.id, transcribe: true, openai_apikey: 'sk-image' });
      expect(noAudio).toMatchObject({ status: 400, body: { error: expect.stringMatching(/no audio/) } });
      // Refused before the worker downloaded the image into the file store.
      expect(await files()).toBe(before);
      const missing = await call('POST', '/message/download', { id: '3EB0FFFFFFFFFFFFFFFFFF', transcribe: true, openai_apikey: 'sk-missing' });
      expect(missing).toMatchObject({ status: 404, body: { error: expect.any(String) } });
      // Another instance's token cannot reach this instance's voice note (nor save a key because of it).
      const other = await stack.gw.createInstance('other');
      const foreign = await stack.gw.call('POST', '/message/download', {
        token: other.token,
        body: { id: note.id, transcribe: true, openai_apikey: 'sk-other' },
      });
      expect(foreign).toMatchObject({ status: 404, body: { error: 'Message not found' } });
      // A key is saved on the instance once it worked: one longer than /instance/updatechatbotsettings takes is refused first.
      const long = await call('POST', '/message/download', { id: note.id, transcribe: true, openai_apikey: `sk-${'x'.repeat(300)}` });
      expect(long).toMatchObject({ status: 400, body: { error: expect.stringMatching(/openai_apikey/) } });
      expect(models.audio('transcription').filter((request) => String(request.headers.authorization).includes('xxx'))).toEqual([]);
      const saved = await stack.db.dataSource.query(`SELECT openai_apikey FROM instances WHERE id = $1`, [instance.id]);
      expect(saved[0].openai_apikey).toBe('');
    }, 60_000);

    it('without an audio API (anthropic, no openai_apikey) the model sees "[voice note]" and the answer is text, outcome.detail saying why', async () => {
      await agent({ provider: 'anthropic', model: 'claude-test' });
      try {
        const rui = await contact('Rui');
        await say(rui, 'oi');
        await roundsDone(rui);
        const asked = await sayByVoice(rui, theirVoice);
        await roundsDone(rui, 2);
        const answers = await received(rui);
        expect(answers.map(textOf)).toEqual(['echo: oi', 'echo: [voice note]']);
        expect(models.audio('transcription')).toEqual([]);
        expect(models.audio('speech')).toEqual([]);
        const metadata = (await findMessage(asked.id)).ai_metadata;
        expect(metadata.outcome).toMatchObject({ status: 'sent', texts: 1, audio: false, detail: expect.stringMatching(/anthropic has no speech API/) });
      } finally {
        await agent({ provider: 'openai', model: 'gpt-test' });
      }
    }, 60_000);
  });
});
