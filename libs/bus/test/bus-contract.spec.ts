import { ErrorCode } from '@gw/contracts';
import { testNatsUrl } from '@gw/testing';
import { type Bus, InProcessBus, NatsBus, subjectMatches } from '@gw/bus';

/** The same contract for both transports: the embedded default must behave like NATS. */
const transports: Array<[string, () => Promise<Bus | null>]> = [
  ['in-process', async () => new InProcessBus()],
  [
    'NATS',
    async () => {
      const url = await testNatsUrl();
      return url ? NatsBus.connect(url, 'bus-contract-test') : null;
    },
  ],
];

describe.each(transports)('Bus contract over %s', (_name, open) => {
  let bus: Bus | null;
  const prefix = `t${Date.now()}${Math.floor(Math.random() * 1e6)}`;

  beforeAll(async () => {
    bus = await open();
  });
  afterAll(async () => {
    await bus?.close();
  });

  const itIf = (title: string, fn: (bus: Bus) => Promise<void>) =>
    it(title, async () => {
      if (!bus) return console.warn(`skipped (no NATS): ${title}`);
      await fn(bus);
    });

  itIf('should answer "no responders" at once as NoSession, marked not run (issue #39: safe to try again)', async (b) => {
    const started = Date.now();
    await expect(b.request(`${prefix}.nobody`, {}, { timeoutMs: 3000 })).rejects.toMatchObject({ code: ErrorCode.NoSession, notRun: true });
    expect(Date.now() - started).toBeLessThan(1000);
  });

  itIf('should reply through a wildcard subscription', async (b) => {
    const sub = b.subscribe(`${prefix}.instance.*.status`, (data, subject) => ({ data, subject }));
    await b.ping();
    await expect(b.request(`${prefix}.instance.abc.status`, { q: 1 }, { timeoutMs: 2000 })).resolves.toEqual({
      data: { q: 1 },
      subject: `${prefix}.instance.abc.status`,
    });
    sub.unsubscribe();
  });

  itIf('should time out a handler that answers too late', async (b) => {
    // Late, not never: a NATS bus's close waits (up to 10 s) for the handlers still answering.
    const sub = b.subscribe(`${prefix}.slow`, () => new Promise((resolve) => setTimeout(resolve, 1_000)));
    await b.ping();
    await expect(b.request(`${prefix}.slow`, {}, { timeoutMs: 200 })).rejects.toMatchObject({ code: ErrorCode.Timeout });
    sub.unsubscribe();
  });

  itIf('should give each request to one member of a queue group', async (b) => {
    const hits: string[] = [];
    const subs = ['a', 'b'].map((name) => b.subscribe(`${prefix}.place`, () => (hits.push(name), name), { queue: 'workers' }));
    await b.ping();
    for (let i = 0; i < 6; i++) await b.request(`${prefix}.place`, {}, { timeoutMs: 2000 });
    expect(hits).toHaveLength(6);
    subs.forEach((s) => s.unsubscribe());
  });

  itIf('should fan a publish out to every plain subscriber', async (b) => {
    const seen: number[] = [];
    const subs = [1, 2].map((n) => b.subscribe(`${prefix}.broadcast`, () => void seen.push(n)));
    await b.ping();
    b.publish(`${prefix}.broadcast`, { x: 1 });
    await b.ping();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(seen.sort()).toEqual([1, 2]);
    subs.forEach((s) => s.unsubscribe());
  });

  itIf('should reach every subscription a subject matches, whatever token its wildcard is in, and none unsubscribed', async (b) => {
    const seen: string[] = [];
    const patterns = [`${prefix}.inst.>`, `${prefix}.*.op`, `${prefix}.inst.op`, `${prefix}.>`, `${prefix}.inst.other`, `${prefix}.insta.op`];
    const subs = patterns.map((pattern) => b.subscribe(pattern, () => void seen.push(pattern)));
    await b.ping();
    b.publish(`${prefix}.inst.op`, {});
    await b.ping();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(seen.sort()).toEqual([`${prefix}.*.op`, `${prefix}.>`, `${prefix}.inst.>`, `${prefix}.inst.op`].sort());
    seen.length = 0;
    subs[0].unsubscribe();
    subs[2].unsubscribe();
    b.publish(`${prefix}.inst.op`, {});
    await b.ping();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(seen.sort()).toEqual([`${prefix}.*.op`, `${prefix}.>`].sort());
    subs.forEach((sub) => sub.unsubscribe());
  });
});

describe('InProcessBus', () => {
  it('should answer a request from the earliest subscription that matches, wherever it is kept', async () => {
    const bus = new InProcessBus();
    const answer = (name: string) => () => name;
    // A wildcard in the second token is checked for every subject; the others are kept under their first two tokens.
    const subs = [bus.subscribe('instance.*.status', answer('wildcard')), bus.subscribe('instance.a.>', answer('prefix'))];
    await expect(bus.request('instance.a.status', {}, { timeoutMs: 1000 })).resolves.toBe('wildcard');
    subs[0].unsubscribe();
    await expect(bus.request('instance.a.status', {}, { timeoutMs: 1000 })).resolves.toBe('prefix');
    subs[1].unsubscribe();
    await expect(bus.request('instance.a.status', {}, { timeoutMs: 1000 })).rejects.toMatchObject({ code: ErrorCode.NoSession });
    await bus.close();
  });
});

describe('subjectMatches', () => {
  it.each([
    ['a.*.c', 'a.b.c', true],
    ['a.*.c', 'a.b.d', false],
    ['a.>', 'a.b.c', true],
    ['a.>', 'a', false],
    ['a.b', 'a.b.c', false],
  ])('should match %s against %s: %s', (pattern, subject, expected) => {
    expect(subjectMatches(pattern, subject)).toBe(expected);
  });
});
