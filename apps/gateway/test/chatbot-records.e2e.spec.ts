import { startGateway, type GatewayHarness } from './support/gateway-harness';

/** `/agent`, `/trigger`, `/knowledge`, `/function` edit and list through HTTP: every field, secrets masked, tenant isolation, clear 4xx. */
describe('chatbot records (e2e)', () => {
  let gw: GatewayHarness;
  let token: string;
  let other: string;

  beforeAll(async () => {
    gw = await startGateway();
    token = (await gw.createInstance('bot-owner')).token;
    other = (await gw.createInstance('bot-other')).token;
  });
  afterAll(() => gw.close());

  const agentBody = {
    name: 'Atendente',
    provider: 'openai',
    model: 'gpt-4o-mini',
    apikey: 'sk-secret-0123456789',
    basePrompt: 'Seja breve.',
    maxTokens: 500,
    temperature: 30,
    diversityLevel: 80,
    frequencyPenalty: 10,
    presencePenalty: 20,
    signMessages: true,
    readMessages: false,
    maxMessageLength: 300,
    typingDelay_seconds: 2,
    contextTimeWindow_hours: 12,
    contextMaxMessages: 15,
    contextMinMessages: 2,
  };

  it('creates, lists (key masked), updates (masked key kept) and deletes an agent', async () => {
    const created = await gw.call('POST', '/agent/edit', { token, body: { id: '', agent: agentBody } });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ ...agentBody, apikey: 'sk-*****************', url: '', id: expect.any(String), created: expect.any(String) });
    expect(JSON.stringify(created.body)).not.toContain('0123456789');
    const id = created.body.id;

    const listed = await gw.call('GET', '/agent/list', { token });
    expect(listed.body).toEqual([created.body]);
    expect((await gw.call('GET', '/agent/list', { token: other })).body).toEqual([]);

    // The listed record sent back unchanged keeps the stored key; a new key replaces it.
    const renamed = await gw.call('POST', '/agent/edit', { token, body: { id, agent: { ...created.body, name: 'Vendas' } } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ id, name: 'Vendas', apikey: created.body.apikey });
    const rows = await gw.db.dataSource.query(`SELECT data->>'apikey' AS key FROM chatbot_records WHERE id = $1`, [id]);
    expect(rows[0].key).toBe('sk-secret-0123456789');

    expect((await gw.call('POST', '/agent/edit', { token: other, body: { id, agent: agentBody } })).status).toBe(404);
    expect(await gw.call('POST', '/agent/edit', { token, body: { id, delete: true } })).toEqual({ status: 200, body: { response: 'Agent deleted', id } });
    expect((await gw.call('POST', '/agent/edit', { token, body: { id, delete: true } })).status).toBe(404);
  });

  it.each([
    [{ id: '', agent: { ...agentBody, provider: 'mistral' } }, /provider must be one of openai, anthropic, gemini, deepseek, custom/],
    [{ id: '', agent: { ...agentBody, temperature: 101 } }, /temperature must be an integer from 0 to 100/],
    [{ id: '', agent: { ...agentBody, apikey: undefined } }, /missing agent.apikey/],
    [{ id: '', agent: { ...agentBody, provider: 'custom' } }, /missing agent.url/],
    [{ id: '', agent: { ...agentBody, provider: 'custom', url: 'ftp://x' } }, /url must be an http\(s\) URL/],
    [{ id: '', agent: { ...agentBody, contextMinMessages: 30 } }, /contextMinMessages must not exceed contextMaxMessages/],
    [{ id: '' }, /missing agent/],
    [{ id: '', agent: 'x' }, /agent must be an object/],
    [{ delete: true }, /missing id/],
  ])('refuses a bad agent with a 400 naming the problem (%#)', async (body, message) => {
    const response = await gw.call('POST', '/agent/edit', { token, body });
    expect(response.status).toBe(400);
    expect(response.body.error).toMatch(message);
  });

  it('triggers name an existing agent or quick reply; an agent a trigger uses cannot be deleted', async () => {
    const agent = (await gw.call('POST', '/agent/edit', { token, body: { id: '', agent: agentBody } })).body;
    const trigger = {
      active: true,
      type: 'agent',
      agent_id: agent.id,
      ignoreGroups: false,
      lead_field: 'lead_status',
      lead_operator: 'not_equals',
      lead_value: 'cliente',
      priority: 5,
      wordsToStart: ' oi | olá ||menu',
      responseDelay_seconds: 4,
    };
    const created = await gw.call('POST', '/trigger/edit', { token, body: { id: '', trigger } });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ ...trigger, wordsToStart: 'oi|olá|menu', flow_id: '', quickReply_id: '', id: expect.any(String) });
    expect((await gw.call('GET', '/trigger/list', { token })).body).toEqual([created.body]);

    expect((await gw.call('POST', '/trigger/edit', { token, body: { id: '', trigger: { ...trigger, agent_id: 'nope' } } })).body.error).toMatch(
      /no agent nope/,
    );
    expect((await gw.call('POST', '/trigger/edit', { token, body: { id: '', trigger: { type: 'flow', flow_id: 'f1' } } })).body.error).toMatch(
      /flow is not supported/,
    );
    expect((await gw.call('POST', '/trigger/edit', { token, body: { id: '', trigger: { type: 'quickreply', quickReply_id: 'x' } } })).body.error).toMatch(
      /no quick reply x/,
    );
    expect((await gw.call('POST', '/trigger/edit', { token, body: { id: '', trigger: { ...trigger, lead_operator: 'between' } } })).status).toBe(400);

    const blocked = await gw.call('POST', '/agent/edit', { token, body: { id: agent.id, delete: true } });
    expect(blocked.status).toBe(409);
    expect(blocked.body.error).toContain(created.body.id);
    expect((await gw.call('POST', '/trigger/edit', { token, body: { id: created.body.id, delete: true } })).status).toBe(200);
    expect((await gw.call('POST', '/agent/edit', { token, body: { id: agent.id, delete: true } })).status).toBe(200);
  });

  it('knowledge is stored pending vectorization, in uazapi spelling (tittle) or title', async () => {
    const created = await gw.call('POST', '/knowledge/edit', {
      token,
      body: { id: '', knowledge: { active: true, tittle: 'Horários', content: 'Abrimos às 9h.' } },
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ tittle: 'Horários', title: 'Horários', content: 'Abrimos às 9h.', isVectorized: false, vectorStatus: 'pending' });
    const csv = Buffer.from('produto,preço\ncamisa,50\n').toString('base64');
    const file = await gw.call('POST', '/knowledge/edit', { token, body: { id: '', knowledge: { title: 'Preços', content: csv }, fileType: 'csv' } });
    expect(file.body).toMatchObject({ tittle: 'Preços', fileType: 'csv' });
    expect((await gw.call('POST', '/knowledge/edit', { token, body: { id: '', knowledge: { content: 'not base64!' }, fileType: 'pdf' } })).status).toBe(400);
    expect((await gw.call('POST', '/knowledge/edit', { token, body: { id: '', knowledge: { content: 'x' }, fileType: 'docx' } })).status).toBe(400);
    expect((await gw.call('GET', '/knowledge/list', { token })).body).toHaveLength(2);
  });

  it('functions: parameters, secret headers masked and kept when sent back masked', async () => {
    const fn = {
      name: 'consultar_pedido',
      description: 'Consulta um pedido',
      method: 'POST',
      endpoint: 'https://api.example.com/pedidos/{{numero}}',
      headers: { Authorization: 'Bearer very-secret-token', 'X-Client': 'gateway' },
      body: { numero: '{{numero}}' },
      parameters: [
        { name: 'numero', type: 'string', description: 'Número', required: true },
        { name: 'canal', type: 'string', enum: 'loja, site' },
      ],
    };
    const created = await gw.call('POST', '/function/edit', { token, body: { id: '', function: fn } });
    expect(created.status).toBe(200);
    expect(created.body.headers).toEqual({ Authorization: 'Bea********************', 'X-Client': 'gateway' });
    expect(created.body.parameters[1]).toEqual({ name: 'canal', type: 'string', description: '', required: false, enum: ['loja', 'site'] });
    const updated = await gw.call('POST', '/function/edit', { token, body: { id: created.body.id, function: { ...fn, headers: created.body.headers } } });
    expect(updated.status).toBe(200);
    const rows = await gw.db.dataSource.query(`SELECT data->'headers'->>'Authorization' AS auth FROM chatbot_records WHERE id = $1`, [created.body.id]);
    expect(rows[0].auth).toBe('Bearer very-secret-token');
    expect((await gw.call('GET', '/function/list', { token })).body).toEqual([updated.body]);

    for (const [change, message] of [
      [{ method: 'TRACE' }, /method must be one of/],
      [{ endpoint: 'file:///etc/passwd' }, /endpoint must be an http\(s\) URL/],
      [{ name: 'has space' }, /function name must be/],
      [{ headers: { 'bad header': 'x' } }, /headers must be an object/],
      [{ parameters: [{ name: 'a' }, { name: 'a' }] }, /listed twice/],
    ] as const) {
      const response = await gw.call('POST', '/function/edit', { token, body: { id: '', function: { ...fn, ...change } } });
      expect({ change, status: response.status, error: response.body.error }).toEqual({ change, status: 400, error: expect.stringMatching(message) });
    }
  });
});
