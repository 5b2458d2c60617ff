import { Api, ApiFailure, errorText } from './api';
import { loadCredentials, saveCredentials } from './session';

/** A fetch double answering by `METHOD path` with a status and a JSON body, recording what was sent. */
function fakeFetch(routes: Record<string, [number, unknown]>) {
  const calls: Array<{ url: string; init: RequestInit }> = [];
  const fetcher = async (url: string, init: RequestInit = {}) => {
    calls.push({ url, init });
    const [status, body] = routes[`${init.method} ${url.split('?')[0]}`] ?? [404, { error: 'Not Found' }];
    return new Response(body === undefined ? '' : JSON.stringify(body), { status });
  };
  return { calls, fetcher };
}

describe('the console API client', () => {
  it('should send the admin token as admintoken, an instance token as token, and JSON bodies', async () => {
    const { calls, fetcher } = fakeFetch({ 'POST /send/text': [200, { messageid: 'X' }] });
    const api = new Api('', fetcher);
    expect(await api.call('POST', '/send/text', { token: 'abc', body: { number: '1', text: 'hi' } })).toEqual({ messageid: 'X' });
    const headers = calls[0].init.headers as Record<string, string>;
    expect(headers.token).toBe('abc');
    expect(headers.admintoken).toBeUndefined();
    expect(headers['content-type']).toBe('application/json');
    expect(calls[0].init.body).toBe('{"number":"1","text":"hi"}');
    await api.call('GET', '/sender/listfolders', { admin: 'root', query: { status: 'Active', empty: '' } }).catch(() => undefined);
    expect(calls[1].url).toBe('/sender/listfolders?status=Active');
    expect((calls[1].init.headers as Record<string, string>).admintoken).toBe('root');
  });

  it('should turn a 4xx into an ApiFailure carrying the gateway {error} text', async () => {
    const { fetcher } = fakeFetch({ 'POST /instance/connect': [409, { error: 'Instance already connected' }] });
    const failure = await new Api('', fetcher).call('POST', '/instance/connect', { token: 't' }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ApiFailure);
    expect([(failure as ApiFailure).status, (failure as ApiFailure).message]).toEqual([409, 'Instance already connected']);
    expect(errorText(500, { message: ['a', 'b'] })).toBe('a; b');
    expect(errorText(502, '')).toBe('HTTP 502');
  });

  it('should tell an admin token from an instance token, and refuse neither', async () => {
    const admin = new Api('', fakeFetch({ 'GET /instance/all': [200, []] }).fetcher);
    expect(await admin.identify(' root ')).toBe('admin');
    const tenant = new Api('', fakeFetch({ 'GET /instance/all': [401, { error: 'Invalid AdminToken Header' }], 'GET /instance/status': [200, {}] }).fetcher);
    expect(await tenant.identify('t')).toBe('instance');
    const neither = new Api('', fakeFetch({ 'GET /instance/all': [401, {}], 'GET /instance/status': [401, { error: 'Invalid token' }] }).fetcher);
    await expect(neither.identify('x')).rejects.toThrow('neither the admin token nor an instance token');
    await expect(neither.identify('  ')).rejects.toThrow('Enter a token');
    // A gateway that does not answer is not a wrong token.
    const down = new Api('', async () => {
      throw new TypeError('fetch failed');
    });
    await expect(down.identify('x')).rejects.toThrow('did not answer');
  });

  it('should keep the credentials in the given storage, and ignore anything malformed there', () => {
    const store = new Map<string, string>();
    const storage = {
      getItem: (key: string) => store.get(key) ?? null,
      setItem: (key: string, value: string) => void store.set(key, value),
      removeItem: (key: string) => void store.delete(key),
    };
    expect(loadCredentials(storage)).toBeNull();
    saveCredentials({ role: 'admin', token: 'root' }, storage);
    expect(loadCredentials(storage)).toEqual({ role: 'admin', token: 'root' });
    store.set([...store.keys()][0], '{"role":"superuser","token":"x"}');
    expect(loadCredentials(storage)).toBeNull();
    store.set([...store.keys()][0], 'not json');
    expect(loadCredentials(storage)).toBeNull();
    saveCredentials(null, storage);
    expect(store.size).toBe(0);
  });
});
