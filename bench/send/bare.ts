/** The simulator's process, and the bare side: Baileys `sendMessage` on M sockets with in-memory auth, awaited until the server's ack. */
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { loadBetween, loadMark } from '../support/processes';
import { openBareSockets, provisionDevices, serverAcks, simControl } from '../support/sim-clients';
import { warmUpThenMeasure } from './load';
import {
  INSTANCES,
  log,
  N,
  peerPhone,
  PEERS,
  round,
  send,
  type SideResult,
  type SimInfo,
  sleep,
  WARMUP,
  WINDOW_ALLOCATIONS,
  WINDOW_PROF,
  windowAllocations,
  windowProfile,
} from './options';

export async function runSim(): Promise<void> {
  const { startSimulator } = await import('@gw/wa-sim');
  const sim = await startSimulator({ logLevel: 'silent', phoneDecrypt: false, initialPrekeyCount: 1000, media: false });
  const info: SimInfo = { websocketUrl: sim.websocketUrl, controlUrl: sim.controlUrl, rootPublicKey: sim.rootPublicKey };
  // The peers every sender writes to: plain phone accounts.
  for (let i = 0; i < PEERS; i++) await simControl(info, 'POST', '/sim/accounts', { phone: peerPhone(i) });
  send(info);
  process.on('disconnect', () => void sim.stop().finally(() => process.exit(0)));
}

export async function runBare(sim: SimInfo): Promise<SideResult> {
  const baileys = await import('@whiskeysockets/baileys');
  baileys.WA_CERT_DETAILS.PUBLIC_KEY = Buffer.from(sim.rootPublicKey, 'base64');
  const devices = await provisionDevices(sim, INSTANCES, '5531');
  const logger = pino({ level: 'silent' });
  const started = Date.now();
  const { sockets, open } = await openBareSockets(baileys, devices, sim.websocketUrl, logger);
  const connectSeconds = (Date.now() - started) / 1000;
  log(`${open}/${INSTANCES} sockets open in ${connectSeconds} s`);
  await sleep(2000);

  // One ack listener per socket, dispatching by message id.
  const waiting = sockets.map((sock) => serverAcks(sock));
  const operation = async (index: number) => {
    const slot = index % INSTANCES;
    const messageId = `3EB0${randomBytes(9).toString('hex').toUpperCase()}`;
    const acked = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        waiting[slot].delete(messageId);
        reject(new Error('no server ack in 30 s'));
      }, 30_000);
      waiting[slot].set(messageId, (error) => {
        clearTimeout(timer);
        if (error) reject(new Error(`ack error ${error}`));
        else resolve();
      });
    });
    try {
      await sockets[slot].sendMessage(`${peerPhone(index)}@s.whatsapp.net`, { text: `bench message ${index}` }, { messageId });
    } catch (error) {
      waiting[slot].delete(messageId);
      acked.catch(() => undefined);
      throw error;
    }
    await acked;
  };
  const from = loadMark();
  if (WINDOW_PROF) await windowProfile.start();
  if (WINDOW_ALLOCATIONS) await windowAllocations.start();
  const result = await warmUpThenMeasure(operation);
  if (WINDOW_ALLOCATIONS) await windowAllocations.stop(`${WINDOW_ALLOCATIONS}/bare.window.heapprofile`);
  if (WINDOW_PROF) await windowProfile.stop(`${WINDOW_PROF}/bare.window.cpuprofile`);
  const used = loadBetween(from, loadMark());
  for (const sock of sockets) sock.end(undefined);
  const sends = N + WARMUP * INSTANCES;
  return {
    connected: open,
    connectSeconds,
    ...result,
    cpuMsPerSend: round(used.cpuMs / sends, 2),
    gcMsPerSend: round(used.gcMs / sends, 3),
    allocatedKbPerSend: round((used.allocatedMb * 1000) / sends, 1),
  };
}
