import type { Logger } from '@gw/platform';
import { AppStateRecovery, MAX_RECOVERIES } from './app-state-recovery';

const LTHASH = 'LTHash verification failed, skipping remaining patches';
const SNAPSHOT = 'LTHash verification failed on snapshot, continuing with partial state';
const settle = (ms = 50) => new Promise((resolve) => setTimeout(resolve, ms));
/** Waits until `done` holds (up to 2 s), then a little longer, so that what would follow has happened too. */
async function until(done: () => boolean): Promise<void> {
  for (const deadline = Date.now() + 2_000; !done() && Date.now() < deadline;) await settle(10);
  await settle();
}

function fakeLogger(): Logger & { warned: unknown[][] } {
  const warned: unknown[][] = [];
  const logger = { warned, level: 'warn', warn: (...args: unknown[]) => warned.push(args), child: () => logger };
  return logger as unknown as Logger & { warned: unknown[][] };
}

/** A socket whose stored versions and resyncs are recorded; `during` runs inside each resync (rc14 warning again). */
function fakeSocket(during?: (round: number) => void, fails = 0) {
  const calls: string[] = [];
  const versions: Record<string, unknown> = { regular_high: { version: 3 } };
  let round = 0;
  const socket = {
    authState: {
      creds: { me: { id: 'me@s.whatsapp.net' } },
      keys: {
        transaction: async (work: () => Promise<unknown>) => work(),
        set: async (data: { 'app-state-sync-version': Record<string, unknown> }) => {
          for (const [name, state] of Object.entries(data['app-state-sync-version'])) {
            versions[name] = state;
            calls.push(`forget ${name}`);
          }
        },
      },
    },
    resyncAppState: async (names: string[]) => {
      calls.push(`resync ${names.join(',')} from ${JSON.stringify(versions[names[0]])}`);
      round += 1;
      during?.(round);
      if (round <= fails) throw new TypeError('fetch failed');
    },
  };
  return { socket, calls };
}

describe('AppStateRecovery (a patch whose MACs do not match: the collection fetched again)', () => {
  it('should forget the collection’s version and sync it again from scratch when rc14 warns of a mismatch, not on other warnings', async () => {
    const recovery = new AppStateRecovery(fakeLogger());
    const baileys = recovery.watch(fakeLogger());
    const { socket, calls } = fakeSocket();
    recovery.attach(socket as never);

    baileys.warn({ name: 'regular_high' }, 'something else');
    baileys.warn({ name: 'regular_high', version: 4 }, LTHASH);
    await until(() => calls.length >= 2);
    expect(calls).toEqual(['forget regular_high', 'resync regular_high from null']);
    // Still logged as rc14 said it.
    expect((baileys as unknown as { warned: unknown[][] }).warned.map((args) => args[1])).toEqual(['something else', LTHASH]);
  });

  it('should fetch once more when what it fetched again did not match either (a snapshot), and stop after MAX_RECOVERIES in a minute', async () => {
    const recovery = new AppStateRecovery(fakeLogger());
    const baileys = recovery.watch(fakeLogger());
    // Every fetch again finds the snapshot short again.
    const { socket, calls } = fakeSocket(() => baileys.warn({ name: 'regular_high', version: 1 }, SNAPSHOT));
    recovery.attach(socket as never);

    baileys.warn({ name: 'regular_high', version: 4 }, 'failed to decode patch, skipping');
    await until(() => calls.filter((call) => call.startsWith('resync')).length >= MAX_RECOVERIES);
    expect(calls.filter((call) => call.startsWith('resync'))).toHaveLength(MAX_RECOVERIES);
  });

  it('should try again after a delay when the fetch again fails (its snapshot blob not downloaded), within MAX_RECOVERIES', async () => {
    const logger = fakeLogger();
    const recovery = new AppStateRecovery(logger, 20);
    const baileys = recovery.watch(fakeLogger());
    // The first fetch again throws, as rc14 does when the snapshot blob's download fails; the next one succeeds.
    const { socket, calls } = fakeSocket(undefined, 1);
    recovery.attach(socket as never);

    baileys.warn({ name: 'regular_high', version: 4 }, LTHASH);
    await until(() => calls.filter((call) => call.startsWith('resync')).length >= 2);
    expect(calls).toEqual(['forget regular_high', 'resync regular_high from null', 'forget regular_high', 'resync regular_high from null']);
    expect(logger.warned.map((args) => args[1])).toContain('app state could not be fetched again');

    // Failing every time: MAX_RECOVERIES fetches in all, then it stops.
    const stubborn = new AppStateRecovery(fakeLogger(), 20);
    const warns = stubborn.watch(fakeLogger());
    const failing = fakeSocket(undefined, Number.POSITIVE_INFINITY);
    stubborn.attach(failing.socket as never);
    warns.warn({ name: 'regular_high', version: 4 }, LTHASH);
    await until(() => failing.calls.filter((call) => call.startsWith('resync')).length >= MAX_RECOVERIES);
    await settle(100);
    expect(failing.calls.filter((call) => call.startsWith('resync'))).toHaveLength(MAX_RECOVERIES);
  });
});
