import type { Bus } from '@gw/bus';
import {
  AGENT_DEFAULTS,
  audioApi,
  boundedFetch,
  CHATBOT_DEFAULTS,
  guardedFetch,
  languageModel,
  MAX_AUDIO_ANSWER_BYTES,
  MAX_TRANSCRIPTION_BYTES,
  planRound,
  Voice,
  type AgentProvider,
  type AgentSettings,
  type ChatbotConfig,
  type RoundPlan,
  type Stored,
} from '@gw/chatbot';
import type { ChatbotTranscriptRepository, FileRepository, MessageRow } from '@gw/persistence';
import { createLogger, SsrfGuard, toOpusVoiceNote } from '@gw/platform';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FakeModels, hasToolResult, lastUserText, sineWav } from '@gw/testing';

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
  const plan = async (settings: Stored<AgentSettings>, text = 'hello there', extra: Partial<Parameters<typeof planRound>[0]> = {}) =>
    planRound({
      agent: settings,
      model: await languageModel(settings, { baseUrls }, fetch),
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
      model: await languageModel(settings, { baseUrls }, strict),
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

  it('update_lead: the custom fields named as the instance named them, lead_tags, and /chat/editLead’s limits', async () => {
    const calls: unknown[] = [];
    models.handler = (request) => {
      calls.push(request.body.tools);
      const results = request.turns.filter((turn) => turn.role === 'tool');
      if (results.length === 0) return { toolCalls: [{ name: 'update_lead', args: { lead_field03: 'x'.repeat(2_001), lead_tags: ['vip'] } }] };
      if (results.length === 1)
        return { toolCalls: [{ name: 'update_lead', args: { lead_field03: 'Recife', lead_tags: ['vip', 'frete'], lead_name: 'Ana', wa_name: 'no' } }] };
      return { text: 'ok' };
    };
    const result = await plan(agent('openai'), 'moro em Recife', { fieldsMap: { lead_field03: 'cidade', lead_field07: '' }, chat: { lead_field03: 'Olinda' } });
    const tool = (calls[0] as Array<{ function: { name: string; description: string; parameters: any } }>).find(
      (entry) => entry.function.name === 'update_lead',
    )!;
    expect(tool.function.description).toContain('lead_field03 = cidade');
    expect(tool.function.parameters.properties.lead_field03).toEqual({ type: 'string', description: 'custom field "cidade"', maxLength: 2_000 });
    expect(tool.function.parameters.properties.lead_field07.description).toMatch(/unnamed/);
    expect(tool.function.parameters.properties.lead_tags).toMatchObject({ type: 'array', items: { type: 'string', maxLength: 100 }, maxItems: 100 });
    expect(Object.keys(tool.function.parameters.properties)).toHaveLength(6 + 20 + 1);
    // The contact's current custom field, by its name, in the prompt.
    expect(result.metadata.request.messages[0]).toMatchObject({ content: expect.stringContaining('- lead_field03 (cidade): "Olinda"') });
    // The first call is refused whole (as /chat/editLead answers 400), the second written.
    const [refused, written] = result.metadata.response.toolResults as Array<{ output: any }>;
    expect(refused.output).toEqual({ error: 'lead_field03 must be at most 2000 characters', updated: [] });
    expect(written.output).toEqual({ updated: ['lead_field03', 'lead_tags', 'lead_name'], ignored: ['wa_name'] });
    expect(result.lead).toEqual({ lead_field03: 'Recife', lead_tags: ['vip', 'frete'], lead_name: 'Ana' });
    expect(result.metadata.outcome.lead).toEqual(['lead_field03', 'lead_tags', 'lead_name']);
  });

  describe('voice', () => {
    const logger = createLogger('voice-test', 'silent');
    const config: ChatbotConfig = { ...(CHATBOT_DEFAULTS as ChatbotConfig), baseUrls: undefined as never, ssrf: guard, runnerId: 't' };
    let stored: Map<string, { data: Buffer; mimetype: string }>;
    let transcripts: Map<string, string>;
    let downloads: string[];
    let downloadRequests: Array<{ data: Record<string, unknown>; timeoutMs: number }>;
    /** How long the worker's media.download takes, the size it answers (default: the bytes'), and how many ran at once (now, most). */
    let download: { delayMs: number; size?: number; now?: number; most?: number };
    /** The file store's failure, when it fails. */
    let failStore: Error | null;
    const voice = (replies: 'auto' | 'off' = 'auto') => {
      const files = {
        store: async (_instance: string, data: Buffer, mimetype: string) => {
          if (failStore) throw failStore;
          const id = `f${stored.size + 1}`;
          stored.set(id, { data, mimetype });
          return id;
        },
        read: async (id: string) => (stored.has(id) ? { ...stored.get(id)!, fileName: 'x' } : null),
      } as unknown as FileRepository;
      const repo = {
        find: async (_instance: string, ids: string[]) => new Map(ids.filter((id) => transcripts.has(id)).map((id) => [id, transcripts.get(id)!])),
        store: async (_instance: string, id: string, text: string) => void transcripts.set(id, text),
      } as unknown as ChatbotTranscriptRepository;
      // The worker's media.download: the contact's voice note into the file store.
      const bus = {
        request: async (subject: string, data: { messageId: string }, options: { timeoutMs: number }) => {
          expect(subject).toBe('instance.rinst.media.download');
          downloads.push(data.messageId);
          downloadRequests.push({ data, timeoutMs: options.timeoutMs });
          download.now = (download.now ?? 0) + 1;
          download.most = Math.max(download.most ?? 0, download.now);
          if (download.delayMs) await new Promise((resolve) => setTimeout(resolve, download.delayMs));
          download.now--;
          const bytes = Buffer.from(`OggS voice of ${data.messageId}`);
          stored.set(`dl-${data.messageId}`, { data: bytes, mimetype: 'audio/ogg; codecs=opus' });
          return { fileId: `dl-${data.messageId}`, size: download.size ?? bytes.length };
        },
      } as unknown as Bus;
      return new Voice(files, repo, bus, { ...config, baseUrls, voice: { ...config.voice, replies } }, fetch, logger);
    };
    const textPlan = (...texts: string[]): RoundPlan => ({
      metadata: {
        agent_id: 'a',
        turn: 'T',
        flow_id: '',
        request: { messages: [], tools: [], options: {} as never },
        response: { choices: [], toolResults: [], error: '' },
        outcome: { status: 'sent', texts: texts.length, audio: false, menus: 1, files: 0, handoff: '', lead: [], detail: '' },
      },
      sends: [
        ...texts.map((text) => ({
          recordId: 'r',
          messageId: `M${text}`,
          kind: 'text',
          content: { kind: 'text' as const, text, linkPreview: null },
          payload: { text },
        })),
        { recordId: 'r', messageId: 'MENU', kind: 'menu', content: { kind: 'text', text: 'menu', linkPreview: null }, payload: {} },
      ],
      handoff: '',
      failed: false,
      lead: {},
      modelStartedAt: 0,
      modelEndedAt: 0,
    });
    beforeEach(() => {
      stored = new Map();
      transcripts = new Map();
      downloads = [];
      downloadRequests = [];
      download = { delayMs: 0 };
      failStore = null;
    });

    it('picks the agent’s own audio API, else the instance’s openai_apikey, else none', () => {
      expect(audioApi(agent('openai'), 'sk-inst', { baseUrls })).toMatchObject({ apiKey: 'sk-test-key', baseURL: baseUrls.openai });
      expect(audioApi(agent('custom'), 'sk-inst', { baseUrls })).toMatchObject({ apiKey: 'sk-test-key', baseURL: `${models.baseUrl}/custom/v1` });
      expect(audioApi(agent('anthropic'), 'sk-inst', { baseUrls })).toMatchObject({ apiKey: 'sk-inst', baseURL: baseUrls.openai });
      for (const provider of ['anthropic', 'gemini', 'deepseek'] as const) expect(audioApi(agent(provider), '', { baseUrls })).toBeNull();
    });

    it('hears a voice note once: downloaded by the worker, sent to /audio/transcriptions, stored; without an API nothing is heard', async () => {
      models.transcription = (upload) => ({ text: ` ${upload.file!.bytes.toString()} ` });
      const api = audioApi(agent('openai'), '', { baseUrls });
      expect(await voice().hear('rinst', ['V1', 'V2'], api, 2_000)).toEqual(
        new Map([
          ['V1', 'OggS voice of V1'],
          ['V2', 'OggS voice of V2'],
        ]),
      );
      const [request] = models.audio('transcription');
      expect(request.path).toBe('/openai/v1/audio/transcriptions');
      expect(request.headers.authorization).toBe('Bearer sk-test-key');
      expect(request.body).toMatchObject({ model: 'whisper-1', file: { name: 'audio.ogg', type: 'audio/ogg', size: 'OggS voice of V1'.length } });
      // Stored: heard again without a request.
      expect(await voice().hear('rinst', ['V1'], api, 2_000)).toEqual(new Map([['V1', 'OggS voice of V1']]));
      expect(models.audio('transcription')).toHaveLength(2);
      expect(downloads).toEqual(['V1', 'V2']);
      expect(await voice().hear('rinst', ['V3'], null, 2_000)).toEqual(new Map());
      // A failing transcription leaves the message without one (the model sees the placeholder).
      models.transcription = () => ({ status: 500, error: 'broken' });
      expect(await voice().hear('rinst', ['V4'], api, 2_000)).toEqual(new Map());
    });

    it('hearing holds a round up to the timeout once: the download and the transcription share one deadline', async () => {
      const api = audioApi(agent('openai'), '', { baseUrls });
      // Each step alone is within the timeout, both together are not.
      download = { delayMs: 700 };
      models.transcription = () => new Promise((resolve) => setTimeout(() => resolve({ text: 'late' }), 700));
      expect(await voice().hear('rinst', ['V1'], api, 1_000)).toEqual(new Map());
      expect(downloadRequests[0].timeoutMs).toBeLessThanOrEqual(1_000);
      expect(transcripts.has('V1')).toBe(false);
    });

    it('downloads and transcribes a round’s voice notes two at a time, not all at once (each may be 25 MB)', async () => {
      const api = audioApi(agent('openai'), '', { baseUrls });
      models.transcription = (upload) => ({ text: upload.file!.bytes.toString() });
      download = { delayMs: 20 };
      const heard = await voice().hear('rinst', ['A', 'B', 'C', 'D', 'E'], api, 5_000);
      expect([...heard.keys()].sort()).toEqual(['A', 'B', 'C', 'D', 'E']);
      expect(download.most).toBe(2);
    });

    it('an audio larger than the transcription takes (25 MB) is refused by the worker, never read nor sent', async () => {
      const api = audioApi(agent('openai'), '', { baseUrls });
      download = { delayMs: 0, size: MAX_TRANSCRIPTION_BYTES + 1 };
      expect(await voice().hear('rinst', ['BIG'], api, 2_000)).toEqual(new Map());
      expect(downloadRequests[0].data).toMatchObject({ messageId: 'BIG', maxBytes: MAX_TRANSCRIPTION_BYTES });
      expect(models.audio('transcription')).toEqual([]);
    });

    it('speaks the answer: /audio/speech asked for opus, an Ogg answer sent as is, the menu kept, outcome.audio', async () => {
      const ogg = await toOpusVoiceNote(sineWav(440));
      models.speech = () => ({ audio: ogg, contentType: 'audio/ogg' });
      const spoken = await voice().speak('rinst', textPlan('Olá!', 'Tudo bem?'), agent('openai'), audioApi(agent('openai'), '', { baseUrls }), 5_000);
      const [request] = models.audio('speech');
      expect(request.path).toBe('/openai/v1/audio/speech');
      expect(request.body).toEqual({ model: 'tts-1', input: 'Olá!\n\nTudo bem?', voice: 'alloy', response_format: 'opus' });
      expect(spoken.sends.map((send) => send.kind)).toEqual(['audio', 'menu']);
      const content = spoken.sends[0].content as Extract<RoundPlan['sends'][number]['content'], { kind: 'media' }>;
      expect(content).toMatchObject({ kind: 'media', mediaType: 'audio', ptt: true, mimetype: 'audio/ogg; codecs=opus' });
      expect(stored.get((content.source as { fileId: string }).fileId)!.data.equals(ogg)).toBe(true);
      expect(spoken.metadata.outcome).toMatchObject({ texts: 0, audio: true, menus: 1, detail: '' });
    });

    it('converts a speech answer that is not Ogg (an OpenAI-compatible server answering WAV) to Ogg/Opus', async () => {
      models.speech = () => ({ audio: sineWav(330), contentType: 'audio/wav' });
      const spoken = await voice().speak('rinst', textPlan('Oi'), agent('custom'), audioApi(agent('custom'), '', { baseUrls }), 5_000);
      expect(models.audio('speech')[0].path).toBe('/custom/v1/audio/speech');
      const content = spoken.sends[0].content as { source: { fileId: string } };
      expect(stored.get(content.source.fileId)!.data.subarray(0, 4).toString('latin1')).toBe('OggS');
      expect(spoken.metadata.outcome.audio).toBe(true);
    });

    it('a file store that fails to keep the spoken answer costs the voice, not the round: the answer goes as text', async () => {
      models.speech = async () => ({ audio: await toOpusVoiceNote(sineWav(440)), contentType: 'audio/ogg' });
      failStore = new Error('S3 is unreachable');
      const result = await voice().speak('rinst', textPlan('Olá!'), agent('openai'), audioApi(agent('openai'), '', { baseUrls }), 5_000);
      expect(result.sends.map((send) => send.kind)).toEqual(['text', 'menu']);
      expect(result.metadata.outcome).toMatchObject({
        audio: false,
        texts: 1,
        detail: 'answered in text: the spoken answer could not be stored: S3 is unreachable',
      });
    });

    it('a speech error that echoes the key keeps it out of outcome.detail', async () => {
      models.speech = (request) => ({ status: 401, error: `Incorrect API key provided: ${String(request.headers.authorization).replace(/^Bearer /, '')}` });
      const result = await voice().speak('rinst', textPlan('Olá!'), agent('custom'), audioApi(agent('custom'), '', { baseUrls }), 5_000);
      expect(result.metadata.outcome.detail).toMatch(/Incorrect API key provided: \[masked\]/);
      expect(JSON.stringify(result)).not.toContain('sk-test-key');
    });

    it('a speech answer larger than 25 MB (another server’s) is refused, not read whole: the answer goes as text', async () => {
      models.speech = () => ({ audio: Buffer.alloc(MAX_AUDIO_ANSWER_BYTES + 1), contentType: 'audio/wav' });
      const result = await voice().speak('rinst', textPlan('Oi'), agent('custom'), audioApi(agent('custom'), '', { baseUrls }), 5_000);
      expect(result.sends.map((send) => send.kind)).toEqual(['text', 'menu']);
      expect(result.metadata.outcome).toMatchObject({ audio: false, detail: expect.stringMatching(/larger than 26214400 bytes/) });
      expect(stored.size).toBe(0);
    });

    it('boundedFetch: an answer streamed without a length fails once it grows past the bound', async () => {
      const server = createServer((_req, res) => {
        res.setHeader('transfer-encoding', 'chunked');
        for (let i = 0; i < 8; i++) res.write(Buffer.alloc(1024));
        res.end();
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
        expect((await (await boundedFetch(fetch, 8 * 1024)(url)).arrayBuffer()).byteLength).toBe(8 * 1024);
        await expect((await boundedFetch(fetch, 4 * 1024)(url)).arrayBuffer()).rejects.toThrow(/larger than 4096 bytes/);
      } finally {
        server.close();
      }
    });

    it.each([
      ['no audio API (anthropic, no openai_apikey)', 'anthropic', 'auto', /anthropic has no speech API and no OpenAI key/],
      ['voice replies off', 'openai', 'off', /CHATBOT_VOICE_REPLIES=off/],
      ['the speech call failing', 'openai', 'auto', /text to speech failed through the agent’s OpenAI key: .*overloaded/],
    ] as const)('answers in text when it cannot speak: %s', async (_case, provider, replies, detail) => {
      models.speech = () => ({ status: 503, error: 'overloaded' });
      const settings = agent(provider);
      const result = await voice(replies).speak('rinst', textPlan('Olá!'), settings, audioApi(settings, '', { baseUrls }), 5_000);
      expect(result.sends.map((send) => send.kind)).toEqual(['text', 'menu']);
      expect(result.metadata.outcome).toMatchObject({ texts: 1, audio: false, detail: expect.stringMatching(detail) });
    });
  });
});
