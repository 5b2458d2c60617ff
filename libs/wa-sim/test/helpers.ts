// Test helpers: real Baileys sockets with an in-memory auth state, pointed at the simulator.
import { Boom } from '@hapi/boom';
import makeWASocket, { Browsers, BufferJSON, initAuthCreds, proto, WA_CERT_DETAILS } from '@whiskeysockets/baileys';
import type {
  AuthenticationCreds,
  BaileysEventMap,
  ConnectionState,
  SignalDataSet,
  SignalDataTypeMap,
  UserFacingSocketConfig,
  WASocket,
} from '@whiskeysockets/baileys';
import pino from 'pino';
import QRCode from 'qrcode';
import type { RunningSimulator } from '../src';

export interface MemoryAuth {
  state: {
    creds: AuthenticationCreds;
    keys: {
      get: <T extends keyof SignalDataTypeMap>(type: T, ids: string[]) => Promise<{ [id: string]: SignalDataTypeMap[T] }>;
      set: (data: SignalDataSet) => Promise<void>;
    };
  };
  /** What a persistent store would have saved (creds JSON round-trip, like a real database). */
  saved: () => AuthenticationCreds;
}

/** Map-backed auth state; creds are round-tripped through BufferJSON like a database would. */
export function memoryAuth(): MemoryAuth {
  const creds = initAuthCreds();
  const data = new Map<string, unknown>();
  const keys = {
    async get<T extends keyof SignalDataTypeMap>(type: T, ids: string[]): Promise<{ [id: string]: SignalDataTypeMap[T] }> {
      const out: { [id: string]: SignalDataTypeMap[T] } = {};
      for (const id of ids) {
        const raw = data.get(`${type}:${id}`);
        if (raw === undefined) continue;
        let value = JSON.parse(raw as string, BufferJSON.reviver);
        if (type === 'app-state-sync-key' && value) value = proto.Message.AppStateSyncKeyData.fromObject(value);
        out[id] = value;
      }
      return out;
    },
    async set(set: SignalDataSet): Promise<void> {
      for (const [type, entries] of Object.entries(set)) {
        for (const [id, value] of Object.entries(entries ?? {})) {
          if (value === null || value === undefined) data.delete(`${type}:${id}`);
          else data.set(`${type}:${id}`, JSON.stringify(value, BufferJSON.replacer));
        }
      }
    },
  };
  return {
    state: { creds, keys },
    saved: () => JSON.parse(JSON.stringify(creds, BufferJSON.replacer), BufferJSON.reviver),
  };
}

export const silent = pino({ level: 'silent' });

export function trustSimulator(running: RunningSimulator): void {
  // The seam the session worker applies from WA_CERT_ROOT_PUBLIC_KEY.
  (WA_CERT_DETAILS as { PUBLIC_KEY: Buffer }).PUBLIC_KEY = Buffer.from(running.rootPublicKey, 'base64');
}

export function connect(running: RunningSimulator, auth: MemoryAuth, config: Partial<UserFacingSocketConfig> = {}): WASocket {
  return makeWASocket({
    auth: auth.state,
    waWebSocketUrl: running.websocketUrl,
    logger: silent,
    browser: Browsers.ubuntu('Chrome'),
    markOnlineOnConnect: false,
    ...config,
  });
}

export function waitFor<E extends keyof BaileysEventMap, T>(
  sock: WASocket,
  event: E,
  predicate: (value: BaileysEventMap[E]) => T | undefined | false,
  timeoutMs = 10_000,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      sock.ev.off(event, listener);
      reject(new Error(`timed out waiting for ${String(event)}`));
    }, timeoutMs);
    const listener = (value: BaileysEventMap[E]): void => {
      const result = predicate(value);
      if (result !== undefined && result !== false) {
        clearTimeout(timer);
        sock.ev.off(event, listener);
        resolve(result as T);
      }
    };
    sock.ev.on(event, listener);
  });
}

export function waitForConnection(
  sock: WASocket,
  predicate: (update: Partial<ConnectionState>) => boolean,
  timeoutMs = 10_000,
): Promise<Partial<ConnectionState>> {
  return waitFor(sock, 'connection.update', (update) => (predicate(update) ? update : undefined), timeoutMs);
}

export function closeCode(update: Partial<ConnectionState>): number | undefined {
  return (update.lastDisconnect?.error as Boom | undefined)?.output?.statusCode;
}

export async function waitForClose(sock: WASocket, timeoutMs = 10_000): Promise<number | undefined> {
  const update = await waitForConnection(sock, (u) => u.connection === 'close', timeoutMs);
  return closeCode(update);
}

export async function postJson<T = Record<string, unknown>>(running: RunningSimulator, path: string, body: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`${running.controlUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as T };
}

export async function getJson<T = Record<string, unknown>>(running: RunningSimulator, path: string): Promise<{ status: number; body: T }> {
  const res = await fetch(`${running.controlUrl}${path}`);
  return { status: res.status, body: (await res.json()) as T };
}

/** Creds updates are applied in place by Baileys; track them so a reconnect reuses them. */
function trackCreds(sock: WASocket, auth: MemoryAuth): void {
  sock.ev.on('creds.update', (update) => Object.assign(auth.state.creds, update));
}

/**
 * Full QR flow: connect unregistered, scan the PNG of the first QR through the control API,
 * follow the 515 restart, and log in. Returns the logged-in socket.
 */
export async function pairWithQr(
  running: RunningSimulator,
  phone: string,
  auth: MemoryAuth,
  config: Partial<UserFacingSocketConfig> = {},
  options: { png?: boolean } = {},
): Promise<WASocket> {
  const first = connect(running, auth, config);
  trackCreds(first, auth);
  const qr = await waitFor(first, 'connection.update', (u) => u.qr);
  const closed = waitForClose(first, 15_000);
  // The PNG path is what a gateway hands out; the raw string is quicker for tests that only need a linked device.
  const scan = await postJson(running, '/sim/scan', { phone, qr: options.png ? await QRCode.toDataURL(qr) : qr });
  if (scan.status !== 200) throw new Error(`scan failed: ${JSON.stringify(scan.body)}`);
  const code = await closed;
  if (code !== 515) throw new Error(`expected 515 after pairing, got ${code}`);
  return reconnect(running, auth, config);
}

/** Connects with stored auth and waits for `open`. */
export async function reconnect(
  running: RunningSimulator,
  auth: MemoryAuth,
  config: Partial<UserFacingSocketConfig> = {},
  timeoutMs = 10_000,
): Promise<WASocket> {
  const sock = connect(running, auth, config);
  trackCreds(sock, auth);
  const update = await waitForConnection(sock, (u) => u.connection === 'open' || u.connection === 'close', timeoutMs);
  if (update.connection !== 'open') {
    throw new Error(`login failed with ${closeCode(update)}`);
  }
  return sock;
}

export function endSocket(sock: WASocket | undefined): void {
  if (!sock) return;
  try {
    sock.end(undefined);
  } catch {
    // already closed
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A device linked through `POST /sim/accounts/{phone}/provision` (no QR), logged in and open. */
export async function provisionAndConnect(
  running: RunningSimulator,
  phone: string,
  config: Partial<UserFacingSocketConfig> = {},
): Promise<{ sock: WASocket; auth: MemoryAuth }> {
  const res = await postJson<{ creds: unknown }>(running, `/sim/accounts/${phone}/provision`, {});
  if (res.status !== 200) throw new Error(`provision failed: ${JSON.stringify(res.body)}`);
  const auth = memoryAuth();
  Object.assign(auth.state.creds, JSON.parse(JSON.stringify(res.body.creds), BufferJSON.reviver));
  return { sock: await reconnect(running, auth, config), auth };
}
