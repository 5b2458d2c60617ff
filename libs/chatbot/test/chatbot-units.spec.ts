import { deflateSync } from 'node:zlib';
import { callFunction } from '../src/functions';
import { chunkText, csvToText, htmlToText, localEmbedding, pdfToText } from '../src/knowledge';
import { ChatbotAdmissionRepository } from '@gw/persistence';
import { admitEvents, matchesLead, matchesWords } from '../src/admission';
import { modelOptions } from '../src/providers';
import { AGENT_DEFAULTS, isMaskOf, maskSecret, type AgentSettings, type FunctionSettings } from '../src/records';
import { splitMessage } from '../src/round-planner';

/** Admission's repository bound to a test's stand-in for the follower's transaction. */
function admissionsOn(db: unknown): ChatbotAdmissionRepository {
  return new ChatbotAdmissionRepository({} as never).within(db as never);
}

describe('trigger matching', () => {
  it('matches start words as whole words, without case or accents', () => {
    expect(matchesWords('oi|olá|bom dia', 'Olá, tudo bem?')).toBe(true);
    expect(matchesWords('oi|olá|bom dia', 'BOM DIA!')).toBe(true);
    expect(matchesWords('oi', 'oitenta reais')).toBe(false);
    expect(matchesWords('preço', 'qual o preco?')).toBe(true);
    expect(matchesWords('', 'anything')).toBe(true);
    expect(matchesWords('a.b', 'axb')).toBe(false);
  });

  it.each([
    ['equals', 'novo', { lead_status: 'Novo' }, true],
    ['equals', 'novo', { lead_status: 'cliente' }, false],
    ['not_equals', 'cliente', { lead_status: 'novo' }, true],
    ['contains', 'vip', { lead_tags: ['loja', 'VIP'] }, true],
    ['not_contains', 'vip', { lead_tags: ['loja'] }, true],
    ['greater', '10', { lead_field01: '12' }, true],
    ['greater', '10', { lead_field01: 'abc' }, false],
    ['less', '10', { lead_field01: '9.5' }, true],
    ['empty', '', { lead_email: '' }, true],
    ['empty', '', { lead_tags: [] }, true],
    ['not_empty', '', { lead_email: 'a@b.c' }, true],
  ])('lead condition %s %s on %j is %s', (operator, value, chat, expected) => {
    const field = Object.keys(chat)[0];
    expect(matchesLead({ lead_field: field, lead_operator: operator as never, lead_value: value }, chat)).toBe(expected);
  });

  it('reads a lead field named without its lead_ prefix, and no condition matches everything', () => {
    expect(matchesLead({ lead_field: 'status', lead_operator: 'equals', lead_value: 'novo' }, { lead_status: 'novo' })).toBe(true);
    expect(matchesLead({ lead_field: '', lead_operator: '', lead_value: '' }, {})).toBe(true);
  });
});

describe('answers and parameters', () => {
  it('splits long answers at sentence or word ends, never above the limit', () => {
    const text = 'Primeira frase curta. Segunda frase um pouco maior que a primeira. Terceira.';
    const parts = splitMessage(text, 30);
    expect(parts.every((part) => part.length <= 30)).toBe(true);
    expect(parts.join(' ')).toBe(text);
    expect(splitMessage('x'.repeat(25), 10)).toEqual(['x'.repeat(10), 'x'.repeat(10), 'x'.repeat(5)]);
    expect(splitMessage('  ', 10)).toEqual([]);
    expect(splitMessage('no limit here', 0)).toEqual(['no limit here']);
  });

  it('maps the 0–100 settings to each provider’s ranges', () => {
    const agent: AgentSettings = {
      ...AGENT_DEFAULTS,
      name: 'a',
      provider: 'openai',
      model: 'm',
      apikey: 'k',
      temperature: 35,
      diversityLevel: 50,
      frequencyPenalty: 100,
      presencePenalty: 0,
    };
    expect(modelOptions(agent)).toEqual({ model: 'm', temperature: 0.7, maxTokens: 1000, topP: 0.5, frequencyPenalty: 2, presencePenalty: 0 });
    expect(modelOptions({ ...agent, provider: 'anthropic' })).toMatchObject({ temperature: 0.35, frequencyPenalty: 0 });
    expect(modelOptions({ ...agent, provider: 'deepseek' })).toMatchObject({ temperature: 0.7, frequencyPenalty: 0 });
    expect(modelOptions({ ...agent, provider: 'gemini' })).toMatchObject({ frequencyPenalty: 2 });
  });

  it('masks secrets and recognises its own mask', () => {
    expect(maskSecret('sk-abcdefghijkl')).toBe('sk-************');
    expect(isMaskOf(maskSecret('sk-abcdefghijkl'), 'sk-abcdefghijkl')).toBe(true);
    expect(isMaskOf('sk-new-key', 'sk-abcdefghijkl')).toBe(false);
    expect(isMaskOf('', '')).toBe(false);
  });
});

describe('knowledge', () => {
  it('chunks text with overlap at word ends', () => {
    const text = Array.from({ length: 300 }, (_, i) => `palavra${i}`).join(' ');
    const chunks = chunkText(text, 200, 40);
    expect(chunks.length).toBeGreaterThan(5);
    expect(chunks.every((chunk) => chunk.length <= 200)).toBe(true);
    expect(chunks.every((chunk) => /^palavra\d+/.test(chunk))).toBe(true);
    // Every word is in some chunk.
    for (const i of [0, 150, 299]) expect(chunks.some((chunk) => chunk.split(' ').includes(`palavra${i}`))).toBe(true);
  });

  it('reads html, csv and text PDFs', () => {
    expect(htmlToText('<html><style>x{}</style><h1>Horário</h1><p>9h &amp; 18h&nbsp;— seg&#224;sex</p><script>evil()</script>')).toBe(
      'Horário\n 9h & 18h — segàsex',
    );
    expect(csvToText('produto;preço\n"camisa; azul";50\ncalça;80\n')).toBe('produto: camisa; azul; preço: 50\n\nproduto: calça; preço: 80');
    const stream = deflateSync(Buffer.from('BT /F1 12 Tf 72 712 Td (Entrega em tr\\352s dias) Tj T* [(Trocas ) -300 (em 30 dias)] TJ ET', 'latin1'));
    const pdf = Buffer.concat([
      Buffer.from('%PDF-1.4\n1 0 obj << /Length ' + stream.length + ' /Filter /FlateDecode >>\nstream\n', 'latin1'),
      stream,
      Buffer.from('\nendstream\nendobj\n%%EOF', 'latin1'),
    ]);
    expect(pdfToText(pdf)).toBe('Entrega em três dias\nTrocas  em 30 dias');
  });

  it('the local embedding puts texts that share words close, others far', () => {
    const dot = (a: number[], b: number[]) => a.reduce((sum, value, i) => sum + value * b[i], 0);
    const question = localEmbedding('Quanto custa a entrega para o Rio?');
    const delivery = localEmbedding('A entrega para o Rio de Janeiro custa dez reais.');
    const returns = localEmbedding('Trocas em até trinta dias com nota fiscal.');
    expect(dot(question, question)).toBeCloseTo(1, 6);
    expect(dot(question, delivery)).toBeGreaterThan(dot(question, returns) + 0.2);
  });
});

describe('HTTP functions', () => {
  const fn = (extra: Partial<FunctionSettings>): FunctionSettings => ({
    name: 'f',
    active: true,
    description: 'd',
    method: 'GET',
    endpoint: 'https://api.example/orders/{{id}}',
    headers: { Authorization: 'Bearer {{token}}' },
    body: '',
    parameters: [],
    ...extra,
  });
  const recording = () => {
    const calls: Array<{ url: string; init: RequestInit }> = [];
    const fetch = (async (url: string, init: RequestInit) => {
      calls.push({ url, init });
      return new Response(JSON.stringify({ ok: 1 }), { status: 200 });
    }) as unknown as typeof globalThis.fetch;
    return { calls, fetch };
  };

  it('fills the endpoint (encoded), the headers and a JSON body template with the model’s arguments', async () => {
    const { calls, fetch } = recording();
    expect(await callFunction(fn({}), { id: 'a/b c', token: 't1' }, fetch, 1_000)).toEqual({ status: 200, ok: true, body: { ok: 1 } });
    expect(calls[0].url).toBe('https://api.example/orders/a%2Fb%20c');
    expect(calls[0].init.headers).toEqual({ Authorization: 'Bearer t1' });
    await callFunction(
      fn({ method: 'POST', endpoint: 'https://api.example/orders', body: { order: '{{id}}', note: 'id {{id}}', qty: '{{qty}}' } }),
      { id: 'x', qty: 3 },
      fetch,
      1_000,
    );
    expect(JSON.parse(calls[1].init.body as string)).toEqual({ order: 'x', note: 'id x', qty: 3 });
    expect(calls[1].init.headers).toMatchObject({ 'content-type': 'application/json' });
    await callFunction(fn({ endpoint: 'https://api.example/search' }), { q: 'camisa azul' }, fetch, 1_000);
    expect(calls[2].url).toBe('https://api.example/search?q=camisa+azul');
  });

  it('a function that does not answer in time is an error the model sees', async () => {
    const slow = ((_url: string, init: RequestInit) =>
      new Promise((_resolve, reject) => init.signal?.addEventListener('abort', () => reject(new Error('aborted'))))) as unknown as typeof globalThis.fetch;
    expect(await callFunction(fn({}), { id: '1' }, slow, 50)).toEqual({ error: 'the function did not answer within 50 ms' });
  });
});

describe('admission', () => {
  const event = (message: Record<string, unknown>) => ({
    id: '1',
    instanceId: 'i1',
    eventType: 'messages',
    chatId: '5511999990000@s.whatsapp.net',
    payload: { EventType: 'messages', chat: {}, message: { messageid: 'M1', chatid: '5511999990000@s.whatsapp.net', fromMe: false, text: 'oi', ...message } },
    createdAt: new Date(),
  });
  const settings = {
    instance_id: 'i1',
    id: 'i1',
    name: 'n',
    owner: '',
    chatbot_enabled: true,
    chatbot_ignore_groups: true,
    chatbot_stop_conversation: 'parar',
  };
  /** A manager that answers the batch's settings query (no triggers, no agents), the chat's pause query, and records every statement. */
  const manager = () => {
    const statements: string[] = [];
    return {
      statements,
      query: async (sql: string) => {
        statements.push(sql);
        if (sql.includes('FROM instances')) return [{ settings, records: null }];
        if (sql.includes('chatbot_disableUntil') && sql.startsWith('SELECT')) return [{ until: null }];
        return [];
      },
    };
  };

  it.each([
    [{ wasSentByApi: true, fromMe: true }, 'sent through the API'],
    [{ messageTimestamp: Date.now() - 20 * 60_000 }, 'too old to answer'],
    [{ messageType: 'ReactionMessage' }, 'not a new turn'],
    [{ isGroup: true }, 'groups are ignored'],
    [{ text: 'olá' }, 'no trigger matched'],
  ])('ignores %j (%s) without writing anything', async (message, reason) => {
    const db = manager();
    const [result] = await admitEvents(admissionsOn(db), 'i1', [event(message) as never], { defaultPauseMinutes: 60 });
    expect(result).toEqual({ action: 'ignored', reason });
    expect(db.statements.filter((sql) => /^\s*(INSERT|UPDATE|DELETE|WITH)/i.test(sql))).toEqual([]);
  });

  it("reads the pause of every chat of a batch with its settings, and a chat's own again after a pause", async () => {
    const [a, b] = ['5511999990001@s.whatsapp.net', '5511999990002@s.whatsapp.net'];
    const statements: string[] = [];
    const db = {
      query: async (sql: string, params: unknown[]) => {
        statements.push(sql);
        // Both chats paused far ahead when read with the batch; not paused when read alone.
        if (sql.includes('FROM instances'))
          return [{ settings, records: null, chats: (params[1] as string[]).map((chat) => ({ chat_id: chat, until: 4_000_000_000 })) }];
        if (sql.includes('chatbot_disableUntil') && sql.startsWith('SELECT')) return [{ until: null }];
        return [];
      },
    };
    const of = (chatId: string, messageid: string, text = 'oi') => ({ ...event({ messageid, chatid: chatId, text }), chatId });
    const batch = [of(a, 'M1'), of(b, 'M2'), of(a, 'M3')];
    const results = await admitEvents(admissionsOn(db), 'i1', batch as never, { defaultPauseMinutes: 60 });
    // One read for the batch: each chat's first event uses it; a chat's second event reads its own.
    expect(results.map((result) => (result.action === 'ignored' ? result.reason : result.action))).toEqual([
      'chatbot_disableUntil',
      'chatbot_disableUntil',
      'no trigger matched',
    ]);
    expect(statements.filter((sql) => sql.includes('FROM instances'))).toHaveLength(1);
    expect(statements.filter((sql) => !sql.includes('FROM instances'))).toHaveLength(1);

    // After a pause (the stop word in chat a), chat b's context is read anew, not taken from the batch.
    statements.length = 0;
    const paused = await admitEvents(admissionsOn(db), 'i1', [of(a, 'M4', 'parar'), of(b, 'M5')] as never, { defaultPauseMinutes: 60 });
    expect(paused.map((result) => (result.action === 'ignored' ? result.reason : result.action))).toEqual(['paused', 'no trigger matched']);
  });

  it('pauses the chat on the stop word, whatever its case and accents', async () => {
    const db = manager();
    const [result] = await admitEvents(admissionsOn(db), 'i1', [event({ text: ' PARAR ' }) as never], { defaultPauseMinutes: 60, now: () => 1_000_000 });
    expect(result).toEqual({ action: 'paused', reason: 'stop word', until: 1_000 + 3_600 });
    expect(db.statements.some((sql) => sql.includes('UPDATE chats SET lead'))).toBe(true);
  });
});
