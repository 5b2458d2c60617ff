/**
 * What several benches do with the simulator alike: drive its control API, provision linked devices,
 * and open bare Baileys sockets with in-memory auth (the baseline our stack is measured against).
 */

/** One call to the simulator's control API; a non-2xx answer throws. */
export async function simControl<T>(sim: { controlUrl: string }, method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${sim.controlUrl}${path}`, {
    method,
    headers: body ? { 'content-type': 'application/json' } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

/** Provisions `count` linked devices (no QR needed) and returns their creds, BufferJSON-serialised. */
export async function provisionDevices(sim: { controlUrl: string }, count: number, prefix: string): Promise<Array<{ phone: string; creds: unknown }>> {
  const devices: Array<{ phone: string; creds: unknown }> = [];
  for (let i = 0; i < count; i++) {
    const phone = `${prefix}${String(i).padStart(6, '0')}`;
    await simControl(sim, 'POST', '/sim/accounts', { phone });
    const { creds } = await simControl<{ creds: unknown }>(sim, 'POST', `/sim/accounts/${phone}/provision`, {});
    devices.push({ phone, creds });
  }
  return devices;
}

/** A Signal key store in memory, as a bare Baileys script would keep it. */
export function memoryKeyStore(): never {
  const keys: Record<string, Record<string, unknown>> = {};
  return {
    get: async (type: string, ids: string[]) => Object.fromEntries(ids.map((id) => [id, keys[type]?.[id]]).filter(([, value]) => value !== undefined)),
    set: async (data: Record<string, Record<string, unknown>>) => {
      for (const [type, entries] of Object.entries(data)) for (const [id, value] of Object.entries(entries)) (keys[type] ??= {})[id] = value ?? undefined;
    },
  } as never;
}

/**
 * WhatsApp's server acks of the messages a bare socket sends, by message id: set a callback under an id
 * before sending; it is called once with the ack's `error` attribute (undefined when none) and removed.
 */
export function serverAcks(sock: { ws: unknown }): Map<string, (error: string | undefined) => void> {
  const waiting = new Map<string, (error: string | undefined) => void>();
  (sock.ws as { on(event: string, fn: (node: { attrs: Record<string, string> }) => void): void }).on('CB:ack,class:message', (node) => {
    const callback = waiting.get(node.attrs.id);
    if (!callback) return;
    waiting.delete(node.attrs.id);
    callback(node.attrs.error);
  });
  return waiting;
}

type Baileys = typeof import('@whiskeysockets/baileys');
type Socket = ReturnType<Baileys['makeWASocket']>;

/**
 * Bare Baileys sockets for provisioned devices, opened 20 at a time; each waits for `open` (at most
 * 60 s). `onSocket` sees each socket before it connects (listeners for what arrives at once: offline
 * messages, a history). Returns the sockets and how many opened.
 */
export async function openBareSockets(
  baileys: Baileys,
  devices: Array<{ creds: unknown }>,
  websocketUrl: string,
  logger: unknown,
  onSocket?: (sock: Socket) => void,
): Promise<{ sockets: Socket[]; open: number }> {
  const sockets: Socket[] = [];
  let open = 0;
  const batch = 20;
  for (let i = 0; i < devices.length; i += batch) {
    await Promise.all(
      devices.slice(i, i + batch).map(
        (device) =>
          new Promise<void>((resolve) => {
            const creds = JSON.parse(JSON.stringify(device.creds), baileys.BufferJSON.reviver);
            const sock = baileys.makeWASocket({
              auth: { creds, keys: memoryKeyStore() },
              waWebSocketUrl: websocketUrl,
              logger: logger as never,
              markOnlineOnConnect: false,
              syncFullHistory: false,
            });
            sockets.push(sock);
            onSocket?.(sock);
            sock.ev.on('connection.update', (update) => {
              if (update.connection === 'open') {
                open++;
                resolve();
              }
            });
            setTimeout(resolve, 60_000);
          }),
      ),
    );
  }
  return { sockets, open };
}
