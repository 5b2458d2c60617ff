import { startSimulator, type RunningSimulator } from '@gw/wa-sim';
import pino from 'pino';
import {
  BufferJSON,
  disconnectStatusCode,
  initAuthCreds,
  makeWASocket,
  proto,
  WA_CERT_DETAILS,
  type AuthenticationCreds,
  type SignalDataSet,
  type SignalDataTypeMap,
  type WASocket,
} from '../src/baileys';
import { SocketReader } from '../src/messaging/socket-reader';
import type { SocketContext } from '../src/session/socket-observer';
import { nextPhone } from './support/harness';

jest.setTimeout(60_000);

/** Baileys ends a socket it received nothing from for keepAliveIntervalMs + 5 s (Socket/socket.js). */
const KEEP_ALIVE_MS = 1_000;
const LOST_AFTER_MS = KEEP_ALIVE_MS + 5_000;
const silent = pino({ level: 'silent' });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A provisioned device of a new simulator account, with its keys in memory, connected with a short keep-alive. */
async function connectedDevice(running: RunningSimulator): Promise<{ sock: WASocket; phone: string; closed: () => number | undefined }> {
  const phone = nextPhone();
  const post = (path: string, body: unknown) =>
    fetch(`${running.controlUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(
      (response) => response.json() as Promise<Record<string, unknown>>,
    );
  await post('/sim/accounts', { phone, name: 'Loja' });
  const { creds } = await post(`/sim/accounts/${phone}/provision`, {});
  const state = { creds: { ...initAuthCreds(), ...JSON.parse(JSON.stringify(creds), BufferJSON.reviver) } as AuthenticationCreds };
  const keys = new Map<string, unknown>();
  const sock = makeWASocket({
    auth: {
      creds: state.creds,
      keys: {
        get: async <T extends keyof SignalDataTypeMap>(type: T, ids: string[]) => {
          const found: { [id: string]: SignalDataTypeMap[T] } = {};
          for (const id of ids) {
            let value = keys.get(`${type}:${id}`) as SignalDataTypeMap[T] | undefined;
            if (value && type === 'app-state-sync-key')
              value = proto.Message.AppStateSyncKeyData.fromObject(value as Record<string, unknown>) as unknown as SignalDataTypeMap[T];
            if (value !== undefined) found[id] = value;
          }
          return found;
        },
        set: async (data: SignalDataSet) => {
          for (const [type, entries] of Object.entries(data))
            for (const [id, value] of Object.entries(entries ?? {})) {
              if (value == null) keys.delete(`${type}:${id}`);
              else keys.set(`${type}:${id}`, value);
            }
        },
      },
    },
    waWebSocketUrl: running.websocketUrl,
    logger: silent,
    keepAliveIntervalMs: KEEP_ALIVE_MS,
    markOnlineOnConnect: false,
  });
  let closedWith: number | undefined;
  await new Promise<void>((resolve, reject) => {
    sock.ev.on('connection.update', (update) => {
      if (update.connection === 'open') resolve();
      if (update.connection === 'close') {
        closedWith = disconnectStatusCode(update.lastDisconnect?.error) ?? -1;
        reject(new Error(`closed with ${closedWith}`));
      }
    });
  });
  return { sock, phone, closed: () => closedWith };
}

describe("SocketReader and Baileys' keep-alive (our patch of Socket/socket.js)", () => {
  let running: RunningSimulator;
  const sockets: WASocket[] = [];

  beforeAll(async () => {
    running = await startSimulator({ wsPort: 0 });
    (WA_CERT_DETAILS as { PUBLIC_KEY: Buffer }).PUBLIC_KEY = Buffer.from(running.rootPublicKey, 'base64');
  });
  afterAll(async () => {
    // Terminated, not closed: a websocket not read would wait 30 s for the server's closing frame.
    for (const sock of sockets) (sock.ws as unknown as { socket: { terminate(): void } | null }).socket?.terminate();
    await running.stop();
  });

  it('should keep a socket the reader does not read (its backpressure) open past the keep-alive window, and read it again after', async () => {
    const device = await connectedDevice(running);
    sockets.push(device.sock);
    const reader = new SocketReader({ ws: device.sock.ws } as unknown as SocketContext['socket'], 1_000, () => 0, silent);
    const open = watchOpen(device.sock);

    reader.pause();
    await sleep(LOST_AFTER_MS + 3_000);
    expect(open.everClosed()).toBe(false);

    reader.resume();
    // Read again: the keep-alive's pings are answered, the window starts over, and the session stays up.
    await sleep(LOST_AFTER_MS + 1_000);
    expect(open.everClosed()).toBe(false);
    expect(device.closed()).toBeUndefined();
    open.stop();
    reader.close();
  });

  it('should still end, as connection lost, a socket nobody holds whose server went silent (the check is not simply off)', async () => {
    const device = await connectedDevice(running);
    sockets.push(device.sock);
    const open = watchOpen(device.sock);
    // The TCP socket not read, but not by the reader: Baileys hears nothing and must conclude the connection is lost
    // (it starts closing the websocket; the close event itself waits for the closing handshake nobody reads).
    (device.sock.ws as unknown as { socket: { pause(): void } }).socket.pause();
    const deadline = Date.now() + LOST_AFTER_MS + 5_000;
    while (!open.everClosed() && Date.now() < deadline) await sleep(100);
    expect(open.everClosed()).toBe(true);
    open.stop();
  });
});

/** Samples whether Baileys still has the websocket open (it starts closing it the moment its keep-alive gives up). */
function watchOpen(sock: WASocket): { everClosed: () => boolean; stop: () => void } {
  let closed = false;
  const timer = setInterval(() => (closed ||= !sock.ws.isOpen), 50);
  return { everClosed: () => closed, stop: () => clearInterval(timer) };
}
