/** `--hibernated <h>`: hibernated instances on our session worker, against connected ones. */
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { provisionDevices } from '../support/sim-clients';
import { mb, settledMemory, snapshot } from './memory';
import { HIBERNATED, type SimInfo, sleep } from './options';

/** The worker without the h instances, with them connected, and with them hibernated (KB per instance against `without`). */
export interface HibernatedResult {
  count: number;
  hibernated: number;
  withoutRssMb: number;
  connectedRssMb: number;
  hibernatedRssMb: number;
  /** KB per instance while connected, and once hibernated (RSS; the allocator may keep freed pages). */
  perConnectedKb: number;
  perHibernatedKb: number;
  /** The same for the JS heap (used): what the worker still holds for a hibernated instance. */
  heapPerConnectedKb: number;
  heapPerHibernatedKb: number;
  hibernateSeconds: number;
}

const WARM_UP = 3;

export async function runHibernated(sim: SimInfo, databaseUrl: string): Promise<HibernatedResult> {
  const { openDatabase } = await import('@gw/persistence');
  const { InProcessBus } = await import('@gw/bus');
  const { Subjects } = await import('@gw/contracts');
  const { SessionWorker, sessionWorkerConfig } = await import('@gw/sessions');
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const dataSource = await openDatabase({ url: databaseUrl, schema, poolSize: 10 });
  const count = async (status: string, ids: string[]) =>
    ((await dataSource.query(`SELECT count(*)::int AS n FROM instances WHERE status = $1 AND id = ANY($2)`, [status, ids])) as Array<{ n: number }>)[0].n;
  const until = async (status: string, ids: string[]) => {
    const deadline = Date.now() + 600_000;
    while (Date.now() < deadline && (await count(status, ids)) < ids.length) await sleep(250);
    return count(status, ids);
  };
  try {
    const devices = await provisionDevices(sim, HIBERNATED + WARM_UP, '5533');
    const ids = devices.map((_, index) => `hbench${String(index).padStart(8, '0')}`);
    for (const [index, device] of devices.entries()) {
      // Paired; only the warm-up ones want a session at first.
      await dataSource.query(`INSERT INTO instances (id, token, name, desired_state, paired, owner) VALUES ($1, $2, $3, $4, true, $5)`, [
        ids[index],
        `tok-${ids[index]}`,
        `hbench-${index}`,
        index < WARM_UP ? 'connected' : 'disconnected',
        device.phone,
      ]);
      await dataSource.query(`INSERT INTO auth_creds (instance_id, value) VALUES ($1, $2)`, [ids[index], JSON.stringify(device.creds)]);
    }
    const bus = new InProcessBus();
    const worker = new SessionWorker({
      dataSource,
      bus,
      logger: pino({ level: 'silent' }),
      config: sessionWorkerConfig({
        workerId: 'bench-hibernated',
        capacity: HIBERNATED + WARM_UP,
        reconcileIntervalMs: 500,
        simulator: { websocketUrl: sim.websocketUrl, rootPublicKey: Buffer.from(sim.rootPublicKey, 'base64') },
      }),
    });
    const hibernate = async (some: string[]) => {
      for (let i = 0; i < some.length; i += 20)
        await Promise.all(some.slice(i, i + 20).map((id) => bus.request(Subjects.instance(id, 'hibernate'), { instanceId: id }, { timeoutMs: 30_000 })));
      return until('hibernated', some);
    };
    await worker.start();
    const warm = ids.slice(0, WARM_UP);
    const measured = ids.slice(WARM_UP);
    await until('connected', warm);
    await hibernate(warm);
    await sleep(3000);
    const without = await settledMemory();
    snapshot('hibernated.without');
    await dataSource.query(`UPDATE instances SET desired_state = 'connected' WHERE id = ANY($1)`, [measured]);
    const connected = await until('connected', measured);
    await sleep(3000);
    const withConnected = await settledMemory();
    const started = Date.now();
    const hibernated = await hibernate(measured);
    const hibernateSeconds = (Date.now() - started) / 1000;
    await sleep(3000);
    const withHibernated = await settledMemory();
    snapshot('hibernated.with');
    await worker.stop();
    await bus.close();
    const kb = (bytes: number) => Math.round(bytes / 1024 / Math.max(1, measured.length));
    return {
      count: connected,
      hibernated,
      withoutRssMb: mb(without.rss),
      connectedRssMb: mb(withConnected.rss),
      hibernatedRssMb: mb(withHibernated.rss),
      perConnectedKb: kb(withConnected.rss - without.rss),
      perHibernatedKb: kb(withHibernated.rss - without.rss),
      heapPerConnectedKb: kb(withConnected.heapUsed - without.heapUsed),
      heapPerHibernatedKb: kb(withHibernated.heapUsed - without.heapUsed),
      hibernateSeconds,
    };
  } finally {
    await dataSource.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await dataSource.destroy();
  }
}

export const HIBERNATED_GOAL = 'hibernated.heapPerHibernatedKb <= 0.05 * hibernated.heapPerConnectedKb';
export function hibernatedMet(result: HibernatedResult): boolean {
  return result.count === HIBERNATED && result.hibernated === HIBERNATED && result.heapPerHibernatedKb <= 0.05 * result.heapPerConnectedKb;
}
