import { Writable } from 'node:stream';
import { runInNewContext } from 'node:vm';
import pino from 'pino';
import { createLogger, redactUrl, serviceLogger } from './logger';

/** A destination that keeps every line written. */
function sink(): { stream: Writable; lines: () => string[] } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  return { stream, lines: () => chunks.join('').split('\n').filter(Boolean) };
}

describe('createLogger', () => {
  it('should write one JSON object per line with a single service key, also for an embedded service', () => {
    const out = sink();
    const logger = createLogger('gateway', 'info', { destination: out.stream });
    logger.info({ instanceId: 'i1' }, 'hello');
    serviceLogger(logger, 'session-worker').child({ component: 'lease' }).warn('moved');
    const lines = out.lines();
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(line.match(/"service":/g)).toHaveLength(1);
    expect(lines.map((line) => (JSON.parse(line) as { service: string }).service)).toEqual(['gateway', 'session-worker']);
  });

  it('should mask secrets under the known keys', () => {
    const out = sink();
    const logger = createLogger('gateway', 'info', { destination: out.stream });
    logger.info({ token: 'tok-secret', instance: { token: 'tok-2', openai_apikey: 'sk-123' }, headers: { admintoken: 'adm-1' } }, 'x');
    expect(out.lines().join('')).not.toMatch(/tok-secret|tok-2|sk-123|adm-1/);
    expect(out.lines().join('')).toContain('[masked]');
  });

  it('should mask the credentials a logged URL carries in its path, query or user info', () => {
    const out = sink();
    const logger = createLogger('gateway', 'info', { destination: out.stream });
    logger.info({ url: '/chatwoot/webhook/r1a2b3/cw_SECRETPATH' }, 'request');
    logger.error({ url: '/sse?events=messages&token=TOKQUERY&excludeMessages=x' }, 'request failed');
    logger.info({ url: '/x?ADMINTOKEN=ADMQUERY' }, 'request');
    const text = out.lines().join('');
    expect(text).not.toMatch(/SECRETPATH|TOKQUERY|ADMQUERY/);
    expect(text).toContain('/chatwoot/webhook/r1a2b3/[masked]');
    expect(text).toContain('/sse?events=messages&token=[masked]&excludeMessages=x');
  });
});

describe('redactUrl', () => {
  it.each([
    ['/chatwoot/webhook/r1/cw_abc', '/chatwoot/webhook/r1/[masked]'],
    ['/chatwoot/webhook/r1/cw_abc/more?x=1', '/chatwoot/webhook/r1/[masked]?x=1'],
    ['//Chatwoot/webhook/r1/cw_abc', '//Chatwoot/webhook/r1/[masked]'],
    ['/%63hatwoot/webhook/r1/%63w_abc', '/chatwoot/webhook/r1/[masked]'],
    ['/sse?token=abc', '/sse?token=[masked]'],
    ['/sse?%74oken=abc&events=x', '/sse?token=[masked]&events=x'],
    ['/a?admintoken=abc#f', '/a?admintoken=[masked]#f'],
    ['nats://user:pass@127.0.0.1:4222', 'nats://user:[masked]@127.0.0.1:4222'],
    ['/send/text', '/send/text'],
    ['/chatwoot/config', '/chatwoot/config'],
  ])('should show %s as %s', (url, shown) => {
    expect(redactUrl(url)).toBe(shown);
  });
});

describe('LOG_FORMAT=pretty', () => {
  it('should write readable lines with the service and message, secrets still masked', () => {
    const out = sink();
    const logger = createLogger('gateway', 'info', { format: 'pretty', destination: out.stream });
    logger.info({ token: 'tok-secret', instanceId: 'r1' }, 'instance connected');
    const text = out.lines().join('\n');
    expect(text).toMatch(/INFO.*instance connected/);
    expect(text).toContain('service: "gateway"');
    expect(text).not.toContain('tok-secret');
    expect(() => JSON.parse(out.lines()[0])).toThrow();
  });
});

describe('serializeError', () => {
  it('should log a failed query by its statement and constraint, not by the row it carried', () => {
    const out = sink();
    const logger = createLogger('gateway', 'info', { destination: out.stream });
    // Shaped as TypeORM's QueryFailedError with pg's fields.
    class QueryFailedError extends Error {}
    const failed = Object.assign(new QueryFailedError('null value in column "fields_map" of relation "instances" violates not-null constraint'), {
      query: 'UPDATE "instances" SET "fields_map" = $1 WHERE "id" = $2',
      parameters: [null, 'r1234567', 'token-4f9a1c2e', 'sk-live-planted'],
      driverError: { detail: 'Failing row contains (r1234567, token-4f9a1c2e, sk-live-planted)' },
      detail: 'Failing row contains (r1234567, token-4f9a1c2e, sk-live-planted)',
      code: '23502',
      table: 'instances',
      column: 'fields_map',
    });
    logger.error({ err: failed, requestId: 'q1' }, 'request failed');
    const line = out.lines()[0];
    expect(line).not.toMatch(/token-4f9a1c2e|sk-live-planted|r1234567/);
    expect(JSON.parse(line).err).toMatchObject({
      type: 'QueryFailedError',
      code: '23502',
      table: 'instances',
      column: 'fields_map',
      query: expect.stringContaining('UPDATE'),
    });
  });

  it('should log an error made in another realm by its type, message and cause, not as {}', () => {
    const out = sink();
    const logger = createLogger('gateway', 'info', { destination: out.stream });
    // As Node's fetch fails when the code runs in a VM context (Jest): its TypeError is not this realm's Error.
    const failed = runInNewContext(
      `Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('getaddrinfo ENOTFOUND mmg.whatsapp.net'), { code: 'ENOTFOUND' }) })`,
    ) as unknown;
    expect(failed instanceof Error).toBe(false);
    logger.warn({ err: failed }, 'app state could not be fetched again');
    expect(JSON.parse(out.lines()[0]).err).toMatchObject({
      type: 'TypeError',
      message: expect.stringContaining('fetch failed'),
      cause: { message: 'getaddrinfo ENOTFOUND mmg.whatsapp.net', code: 'ENOTFOUND' },
    });
  });
});

describe('serviceLogger', () => {
  it('should keep the level of the logger it was made from', () => {
    const logger = createLogger('gateway', 'warn', { destination: sink().stream });
    expect(serviceLogger(logger, 'dispatcher').level).toBe('warn');
  });

  it('should fall back to a child for a logger not made by createLogger', () => {
    const plain = pino({ level: 'silent' });
    expect(serviceLogger(plain, 'relay').bindings()).toEqual({ service: 'relay' });
  });
});
