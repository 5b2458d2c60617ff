import { createLogger } from '@gw/platform';
import { Settling } from './settling';

const logger = createLogger('settling-spec', 'silent');

describe(Settling.name, () => {
  let now = 0;
  const facts = { looked: false, opening: 0, owed: 0 };
  let owedAsked = 0;
  const settling = (maxMs = 60_000) =>
    new Settling({
      maxMs,
      looked: () => facts.looked,
      opening: () => facts.opening,
      owed: async () => {
        owedAsked += 1;
        return facts.owed;
      },
      logger,
      now: () => now,
    });

  beforeEach(() => {
    now = 1_000;
    Object.assign(facts, { looked: false, opening: 0, owed: 0 });
    owedAsked = 0;
  });

  it('should wait for the first look, then the sessions opening, then what the others owe, saying which', async () => {
    const sut = settling();
    await expect(sut.check()).rejects.toThrow('its first look for instances has not run yet');
    Object.assign(facts, { looked: true, opening: 3, owed: 5 });
    await expect(sut.check()).rejects.toThrow('3 sessions opening');
    // The database is asked only once nothing local is left to wait for.
    expect(owedAsked).toBe(0);
    facts.opening = 0;
    await expect(sut.check()).rejects.toThrow("5 instances still to come (over another worker's share, or held by nobody)");
    facts.owed = 1;
    await expect(sut.check()).rejects.toThrow("1 instance still to come (over another worker's share, or held by nobody)");
    facts.owed = 0;
    await expect(sut.check()).resolves.toBeUndefined();
    expect(sut.settled).toBe(true);
  });

  it('should stay settled once settled, whatever moves later (a rollout gate, not a health check)', async () => {
    const sut = settling();
    facts.looked = true;
    await sut.check();
    Object.assign(facts, { looked: false, opening: 10, owed: 10 });
    await expect(sut.check()).resolves.toBeUndefined();
  });

  it('should count as settled at its bound whatever it still waits for, and at once with a bound of 0', async () => {
    const sut = settling(30_000);
    Object.assign(facts, { looked: true, opening: 1 });
    now += 29_999;
    await expect(sut.check()).rejects.toThrow('1 session opening');
    now += 1;
    await expect(sut.check()).resolves.toBeUndefined();
    await expect(settling(0).check()).resolves.toBeUndefined();
  });
});
