/**
 * What bench/inbound and bench/history share: a simulator child that phones (or a history) are driven
 * from, the worker child's measures (its peak RSS and its inbound backlog, read from its own metrics),
 * paired instances for ours, and a bare Baileys receiver that decrypts and counts only.
 */
import { loadBetween, loadMark } from './processes';
import type { DataSource } from 'typeorm';
import { openBareSockets, type provisionDevices } from './sim-clients';

export type Devices = Awaited<ReturnType<typeof provisionDevices>>;

/** The simulator as the benches' children are told it. */
export interface SimInfo {
  websocketUrl: string;
  controlUrl: string;
  rootPublicKey: string;
}

/** Peak resident set size of this process so far (MB). */
export const peakRssMb = (): number => Math.round(process.resourceUsage().maxRSS / 1024);

/** What the worker's inbound backlog did while sampled: its deepest, the most sockets paused, the pauses. */
export interface BacklogSample {
  depthMax: number;
  pausedSocketsMax: number;
  pauses: number;
  samples: number;
}

/**
 * Samples this process's inbound backlog every 50 ms from its own metrics (`wa_gateway_inbound_queue_depth`,
 * `_paused_connections`, `_pauses_total`: what a scrape of the worker reads).
 */
export async function sampleInboundBacklog(): Promise<{ stop(): Promise<BacklogSample> }> {
  const { metrics } = await import('@gw/platform');
  const read = async (name: string): Promise<number> => {
    const metric = metrics().registry.getSingleMetric(name);
    if (!metric) return 0;
    const { values } = await metric.get();
    return values.reduce((sum, value) => sum + Number(value.value), 0);
  };
  const pausesBefore = await read('wa_gateway_inbound_pauses_total');
  const sample: BacklogSample = { depthMax: 0, pausedSocketsMax: 0, pauses: 0, samples: 0 };
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    void Promise.all([read('wa_gateway_inbound_queue_depth'), read('wa_gateway_inbound_paused_connections')])
      .then(([depth, paused]) => {
        sample.depthMax = Math.max(sample.depthMax, depth);
        sample.pausedSocketsMax = Math.max(sample.pausedSocketsMax, paused);
        sample.samples++;
      })
      .finally(() => (busy = false));
  }, 50);
  return {
    stop: async () => {
      clearInterval(timer);
      sample.pauses = (await read('wa_gateway_inbound_pauses_total')) - pausesBefore;
      return sample;
    },
  };
}

/** Paired instances that want a session, one per device (what a worker adopts); returns their ids. */
export async function insertInstances(dataSource: DataSource, devices: Devices, idPrefix: string): Promise<string[]> {
  const ids: string[] = [];
  for (const [index, device] of devices.entries()) {
    const id = `${idPrefix}${String(index).padStart(8, '0')}`;
    await dataSource.query(`INSERT INTO instances (id, token, name, desired_state, paired, owner) VALUES ($1, $2, $3, 'connected', true, $4)`, [
      id,
      `tok-${id}`,
      `bench-${index}`,
      device.phone,
    ]);
    await dataSource.query(`INSERT INTO auth_creds (instance_id, value) VALUES ($1, $2)`, [id, JSON.stringify(device.creds)]);
    ids.push(id);
  }
  return ids;
}

/** What the bare receiver counted: items and when the first and the last arrived (ms since the epoch). */
export interface BareCount {
  open: number;
  openMs: number;
  /** When the last socket was open (ms since the epoch). */
  openedAt: number;
  count: number;
  firstAt: number;
  lastAt: number;
  peakRssMb: number;
  cpuMs: number;
  /** MB allocated on the JS heap over the same window as cpuMs (loadBetween). */
  allocatedMb: number;
}

/**
 * Bare Baileys on `devices` (in-memory auth), counting what `count` returns for each event it is given
 * (`messages.upsert` and `messaging-history.set`), until `expected` are counted or nothing came for
 * `idleMs`. Decrypts (Baileys does) and counts, nothing more.
 */
export async function bareReceive(
  sim: SimInfo,
  devices: Devices,
  expected: number,
  idleMs: number,
  count: (event: 'messages.upsert' | 'messaging-history.set', data: unknown) => number,
): Promise<BareCount> {
  const baileys = await import('@whiskeysockets/baileys');
  const pino = (await import('pino')).default;
  baileys.WA_CERT_DETAILS.PUBLIC_KEY = Buffer.from(sim.rootPublicKey, 'base64');
  const result: BareCount = { open: 0, openMs: 0, openedAt: 0, count: 0, firstAt: 0, lastAt: 0, peakRssMb: 0, cpuMs: 0, allocatedMb: 0 };
  const from = loadMark();
  let done: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (done = resolve));
  const add = (n: number) => {
    if (n <= 0) return;
    const now = Date.now();
    if (!result.count) result.firstAt = now;
    result.count += n;
    result.lastAt = now;
    if (result.count >= expected) done();
  };
  const started = Date.now();
  const { sockets, open } = await openBareSockets(baileys, devices, sim.websocketUrl, pino({ level: 'silent' }), (sock) => {
    sock.ev.on('messages.upsert', (data) => add(count('messages.upsert', data)));
    sock.ev.on('messaging-history.set', (data) => add(count('messaging-history.set', data)));
  });
  result.open = open;
  result.openedAt = Date.now();
  result.openMs = result.openedAt - started;
  const idle = setInterval(() => {
    if (Date.now() - Math.max(result.lastAt, started + result.openMs) > idleMs) done();
  }, 250);
  await finished;
  clearInterval(idle);
  const used = loadBetween(from, loadMark());
  result.cpuMs = Math.round(used.cpuMs);
  result.allocatedMb = Math.round(used.allocatedMb * 10) / 10;
  result.peakRssMb = peakRssMb();
  for (const sock of sockets) sock.end(undefined);
  return result;
}
