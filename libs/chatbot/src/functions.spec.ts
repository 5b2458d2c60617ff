import { callFunction } from './functions';
import type { FunctionSettings } from './records';

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
