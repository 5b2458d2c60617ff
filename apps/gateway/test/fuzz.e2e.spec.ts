import { runFuzz, type FuzzReport } from './fuzz/fuzz-runner';
import { Stack } from './support/stack';

/**
 * Hostile input over every route of our own /openapi.json, against the whole stack with a connected
 * instance: a fixed seed, a few thousand requests. Every answer must be a success or a clear 4xx: no 5xx,
 * no request left hanging, no dropped connection. `npm run fuzz` runs the same with more requests and
 * prints the report (FUZZ_REQUESTS, FUZZ_SEED).
 */
jest.retryTimes(0);

const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 3000);
const SEED = Number(process.env.FUZZ_SEED ?? 20261124);

describe('fuzz (every served route, hostile input)', () => {
  const stack = new Stack();
  let report: FuzzReport;

  beforeAll(async () => {
    // The limiter has its own tests; here it would only turn the flood into 429s and hide the routes.
    await stack.start({ RATE_LIMIT_INSTANCE: 'off', RATE_LIMIT_ADMIN: 'off', RATE_LIMIT_UNAUTHENTICATED: 'off' });
    const instance = await stack.connectedInstance('fuzz');
    const document = await stack.gw.call('GET', '/openapi.json');
    report = await runFuzz({
      baseUrl: stack.gw.baseUrl,
      document: document.body,
      token: instance.token,
      admintoken: stack.gw.adminToken,
      count: REQUESTS,
      seed: SEED,
    });
    if (process.env.FUZZ_REPORT) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  }, 30 * 60_000);

  afterAll(() => stack.stop());

  it('should send every family to every served route', () => {
    expect(report.operations).toBeGreaterThanOrEqual(60);
    expect(report.requests).toBeGreaterThanOrEqual(REQUESTS * 0.9);
    expect(Object.keys(report.byFamily)).toHaveLength(16);
  });

  it('should answer no hostile request with a 5xx', () => {
    expect(report.serverErrors).toEqual([]);
  });

  it('should answer every error with the catalogue’s body, whatever layer refused it', () => {
    expect(report.foreignErrorBodies).toEqual([]);
  });

  it('should leave no request hanging and drop no connection', () => {
    expect(report.hangs).toEqual([]);
    expect(report.connectionErrors).toEqual([]);
  });

  it('should still serve after the run', async () => {
    expect((await stack.gw.call('GET', '/health')).status).toBe(200);
  });
});
