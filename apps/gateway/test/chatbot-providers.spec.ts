import { AGENT_DEFAULTS, guardedFetch, languageModel, planRound, type AgentProvider, type AgentSettings, type Stored } from '@gw/chatbot';
import type { MessageRow } from '@gw/persistence';
import { SsrfGuard } from '@gw/platform';
import { FakeModels, hasToolResult, lastUserText } from './support/fake-models';

/**
 * Each provider spoken in its own wire protocol (AI SDK providers against loopback servers), the
 * agent's 0–100 settings mapped to the provider's parameters, tool calls and their results, and
 * errors/timeouts ending the plan with nothing to send.
 */
describe('chatbot providers', () => {
  const models = new FakeModels();
  const guard = new SsrfGuard(['127.0.0.0/8']);
  const fetch = guardedFetch(guard);
  let baseUrls: { openai: string; anthropic: string; gemini: string; deepseek: string };

  beforeAll(async () => {
    await models.start();
    const env = models.env();
    baseUrls = { openai: env.OPENAI_BASE_URL, anthropic: env.ANTHROPIC_BASE_URL, gemini: env.GEMINI_BASE_URL, deepseek: env.DEEPSEEK_BASE_URL };
  });
  afterAll(() => models.stop());
  beforeEach(() => {
    models.requests.length = 0;
    models.handler = (request) => ({ text: `echo: ${lastUserText(request)}` });
  });

  const agent = (provider: AgentProvider, extra: Partial<AgentSettings> = {}): Stored<AgentSettings> => ({
    ...AGENT_DEFAULTS,
    id: 'ragent',
    name: 'Bot',
    provider,
    model: `${provider}-model`,
    apikey: 'sk-test-key',
    url: provider === 'custom' ? `${models.baseUrl}/custom/v1` : '',
    basePrompt: 'You are the shop assistant.',
    temperature: 50,
    diversityLevel: 90,
    frequencyPenalty: 25,
    presencePenalty: 50,
    maxTokens: 321,
    ...extra,
  });
  const history = (text: string): MessageRow[] => [{ fromMe: false, text, messageType: 'Conversation', mediaType: '', senderName: 'Ana' } as MessageRow];
  const plan = (settings: Stored<AgentSettings>, text = 'hello there', extra: Partial<Parameters<typeof planRound>[0]> = {}) =>
    planRound({
      agent: settings,
      model: languageModel(settings, { baseUrls }, fetch),
      turn: 'MSG1',
      history: history(text),
      chat: { lead_name: 'Ana', lead_status: 'novo' },
      isGroup: false,
      knowledge: [],
      quickReplies: [],
      functions: [],
      fetch,
      modelTimeoutMs: 2_000,
      functionTimeoutMs: 1_000,
      maxSteps: 4,
      ...extra,
    });

  it.each<[AgentProvider, string, number]>([
    ['openai', '/openai/v1/chat/completions', 1],
    ['deepseek', '/deepseek/chat/completions', 0],
    ['custom', '/custom/v1/chat/completions', 1],
  ])('%s: OpenAI-style chat completions with the mapped parameters', async (provider, path, penalties) => {
    const result = await plan(agent(provider));
    expect(result.failed).toBe(false);
    expect(result.sends.map((send) => send.content)).toEqual([{ kind: 'text', text: 'echo: hello there', linkPreview: null }]);
    const [request] = models.chats();
    expect(request.path).toBe(path);
    expect(request.headers.authorization).toBe('Bearer sk-test-key');
    expect(request.body).toMatchObject({ model: `${provider}-model`, max_tokens: 321, temperature: 1, top_p: 0.9 });
    // DeepSeek's provider takes no penalties: not sent, and recorded as 0.
    expect([request.body.frequency_penalty ?? 0, request.body.presence_penalty ?? 0]).toEqual([0.5 * penalties, penalties]);
    expect(request.body.messages[0]).toEqual({ role: 'system', content: expect.stringContaining('You are the shop assistant.') });
    expect(request.body.messages[0].content).toContain('lead_status: "novo"');
    expect(result.metadata.request.options).toEqual({
      model: `${provider}-model`,
      temperature: 1,
      maxTokens: 321,
      topP: 0.9,
      frequencyPenalty: 0.5 * penalties,
      presencePenalty: penalties,
    });
  });

  it('anthropic: the messages API, temperature on its 0–1 scale, no penalties', async () => {
    const result = await plan(agent('anthropic'));
    expect(result.sends).toHaveLength(1);
    const [request] = models.chats();
    expect(request.path).toBe('/anthropic/v1/messages');
    expect(request.headers['x-api-key']).toBe('sk-test-key');
    expect(request.body).toMatchObject({ model: 'anthropic-model', max_tokens: 321, temperature: 0.5, top_p: 0.9 });
    expect(request.body).not.toHaveProperty('frequency_penalty');
    expect(request.body.system).toBeDefined();
    expect(result.metadata.request.options).toMatchObject({ temperature: 0.5, frequencyPenalty: 0, presencePenalty: 0 });
  });

  it('gemini: generateContent with its generationConfig', async () => {
    const result = await plan(agent('gemini'));
    expect(result.sends).toHaveLength(1);
    const [request] = models.chats();
    expect(request.path).toBe('/gemini/v1beta/models/gemini-model:generateContent');
    expect(request.headers['x-goog-api-key']).toBe('sk-test-key');
    expect(request.body.generationConfig).toMatchObject({ maxOutputTokens: 321, temperature: 1, topP: 0.9, frequencyPenalty: 0.5, presencePenalty: 1 });
  });

  it.each<AgentProvider>(['openai', 'anthropic', 'gemini'])('%s: a tool call (menu), its result back to the model, then the answer', async (provider) => {
    models.handler = (request) =>
      hasToolResult(request)
        ? { text: 'Pick one:' }
        : { toolCalls: [{ name: 'send_menu', args: { type: 'button', text: 'Which size?', choices: ['Small', 'Large'] } }] };
    const result = await plan(agent(provider));
    expect(models.chats()).toHaveLength(2);
    expect(result.sends.map((send) => send.kind)).toEqual(['text', 'menu']);
    expect(result.sends[1].content).toMatchObject({ kind: 'proto' });
    expect(result.metadata.outcome).toMatchObject({ status: 'sent', texts: 1, menus: 1, files: 0 });
    expect(result.metadata.response.toolResults).toEqual([
      expect.objectContaining({ toolName: 'send_menu', input: { type: 'button', text: 'Which size?', choices: ['Small', 'Large'] } }),
    ]);
  });

  it('splits a long answer at maxMessageLength and signs the first part', async () => {
    models.handler = () => ({ text: `${'a'.repeat(30)}. ${'b'.repeat(30)}. ${'c'.repeat(10)}` });
    const result = await plan(agent('openai', { maxMessageLength: 40, signMessages: true }));
    const texts = result.sends.map((send) => (send.content as { text: string }).text);
    expect(texts).toEqual([`*Bot*\n${'a'.repeat(30)}.`, `${'b'.repeat(30)}.`, 'c'.repeat(10)]);
    expect(new Set(result.sends.map((send) => send.messageId)).size).toBe(3);
  });

  it('a provider error ends the plan with status error, the error recorded and nothing to send', async () => {
    models.handler = () => ({ status: 500, error: 'upstream exploded' });
    const result = await plan(agent('openai'));
    expect(result.failed).toBe(true);
    expect(result.sends).toEqual([]);
    expect(result.metadata.outcome.status).toBe('error');
    expect(result.metadata.response.error).toContain('upstream exploded');
  });

  it('a model that does not answer in time ends the plan with status timeout', async () => {
    models.handler = () => ({ text: 'too late', delayMs: 1_500 });
    const started = Date.now();
    const result = await plan(agent('openai'), 'hi', { modelTimeoutMs: 300 });
    expect(Date.now() - started).toBeLessThan(1_400);
    expect(result.metadata.outcome.status).toBe('timeout');
    expect(result.metadata.response.error).toMatch(/timeout/);
    expect(result.sends).toEqual([]);
  });

  it('refuses a model URL the SSRF guard refuses (no allow-list for loopback)', async () => {
    const strict = guardedFetch(new SsrfGuard());
    const settings = agent('openai');
    const result = await planRound({
      agent: settings,
      model: languageModel(settings, { baseUrls }, strict),
      turn: 'MSG1',
      history: history('hi'),
      chat: {},
      isGroup: false,
      knowledge: [],
      quickReplies: [],
      functions: [],
      fetch: strict,
      modelTimeoutMs: 2_000,
      functionTimeoutMs: 1_000,
      maxSteps: 2,
    });
    expect(result.metadata.outcome.status).toBe('error');
    expect(result.metadata.response.error).toMatch(/private or reserved address/);
    expect(models.chats()).toHaveLength(0);
  });
});
