import { createServer, Socket, type Server } from 'node:net';
import { nextPhone, Stack, waitFor } from './support/stack';

/** Where Baileys 7.0.0-rc14 downloads app-state blobs from: `https://mmg.whatsapp.net<directPath>` (its DEF_MEDIA_HOST). */
const BLOB_HOST = 'mmg.whatsapp.net:443';

/**
 * A minimal HTTP CONNECT proxy on loopback that counts its tunnels. It resolves the media host
 * WhatsApp's blobs are fetched from to the simulator's media server (as its DNS would to WhatsApp's),
 * so a blob can only be fetched through it.
 */
async function startConnectProxy(mediaHost: string): Promise<{ url: string; tunnels: string[]; close(): Promise<void> }> {
  const tunnels: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.once('close', () => sockets.delete(client));
    client.once('data', (head) => {
      const match = /^CONNECT ([^\s]+):(\d+) HTTP/.exec(head.toString('latin1'));
      if (!match) return client.destroy();
      const target = `${match[1]}:${match[2]}`;
      tunnels.push(target);
      const [host, port] = (target === BLOB_HOST ? mediaHost : target).split(':');
      const upstream = new Socket();
      sockets.add(upstream);
      upstream.once('close', () => sockets.delete(upstream));
      upstream.connect(Number(port), host, () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.pipe(client);
        client.pipe(upstream);
      });
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    tunnels,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * Issue 34, mode 8: app state as WhatsApp's server sends it, through HTTP with real Baileys. A fresh
 * device's first sync comes as snapshots and patches as external mutations, blobs on the media server
 * (the `app-state-external` fault), fetched through the instance's proxy.
 */
describe('app state as the server sends it (snapshots, external blobs)', () => {
  const stack = new Stack();
  afterAll(() => stack.stop());
  beforeAll(() => stack.start(), 60_000);

  const events = (type: string) =>
    stack.db.dataSource
      .query(`SELECT payload FROM outbox_events WHERE event_type = $1 ORDER BY id`, [type])
      .then((rows: Array<{ payload: Record<string, any> }>) => rows.map((row) => row.payload));

  it('should complete a fresh device’s first sync from snapshot blobs and take external patches, every blob through the instance’s proxy', async () => {
    const proxy = await startConnectProxy(stack.sim.mediaHost!);
    try {
      const phone = nextPhone();
      const contact = nextPhone('5561');
      await stack.control('POST', '/sim/accounts', { phone, name: 'Snapshot' });
      await stack.control('POST', '/sim/accounts', { phone: contact, name: 'Cliente' });
      // The account's state before the device links: a label (regular) and a pinned chat (regular_low).
      await stack.control('POST', `/sim/accounts/${phone}/app-state`, { mod: { addLabel: { id: '5', name: 'VIP', color: 2 } } });
      await stack.control('POST', `/sim/accounts/${phone}/app-state`, { jid: `${contact}@s.whatsapp.net`, mod: { pin: true } });
      await stack.control('POST', '/sim/faults', { kind: 'app-state-external', device: phone });

      const { token } = await stack.gw.createInstance('snapshot');
      const set = await stack.gw.call('POST', '/instance/proxy', { token, body: { mode: 'custom', proxy_url: proxy.url } });
      expect(set.status).toBe(200);
      const connect = await stack.gw.call('POST', '/instance/connect', { token, body: {} });
      expect(connect.status).toBe(200);
      await stack.control('POST', '/sim/scan', { phone, qr: connect.body.instance.qrcode });

      // The label came in the `regular` snapshot: no patch carried it.
      const labels = await waitFor(
        () => events('labels'),
        (list) => list.some((event) => event.label?.id === '5'),
        30_000,
        'the label of the snapshot',
      );
      expect(labels.find((event) => event.label.id === '5')).toMatchObject({ label: { name: 'VIP', color: 2, deleted: false } });
      expect((await stack.gw.call('GET', '/labels', { token })).body).toEqual(expect.arrayContaining([expect.objectContaining({ labelid: '5', name: 'VIP' })]));

      // A change after the first sync: a patch whose mutations are a blob.
      await stack.control('POST', `/sim/accounts/${phone}/app-state`, { mod: { addLabel: { id: '6', name: 'Externo', color: 3 } } });
      await waitFor(
        () => events('labels'),
        (list) => list.some((event) => event.label?.id === '6'),
        20_000,
        'the label of the external patch',
      );
      // The socket went through the proxy, and so did the blobs: the media host is reachable only there.
      expect(proxy.tunnels).toContain(BLOB_HOST);
      expect(proxy.tunnels.some((tunnel) => tunnel !== BLOB_HOST)).toBe(true);
      await stack.control('POST', '/sim/faults', { kind: 'clear' });
    } finally {
      await proxy.close();
    }
  }, 90_000);
});
