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

interface PhoneChat {
  jid: string;
  pinned: boolean;
  archived: boolean;
}

type Mutation = { index: unknown; action: Record<string, any> | null };

/**
 * Issue 34, mode 8: app state as WhatsApp's server sends it, through HTTP with real Baileys. A fresh
 * device's first sync comes as snapshots and patches as external mutations, blobs on the media server
 * (the `app-state-external` fault), fetched through the instance's proxy; an upload the server refuses as
 * stale (a 409 with the patches it missed, the `app-state-conflict` fault) is resynced and sent again,
 * and lands once.
 */
describe('app state as the server sends it (snapshots, external blobs, 409 conflicts)', () => {
  const stack = new Stack();
  afterAll(() => stack.stop());
  beforeAll(() => stack.start(), 60_000);

  const events = (type: string) =>
    stack.db.dataSource
      .query(`SELECT payload FROM outbox_events WHERE event_type = $1 ORDER BY id`, [type])
      .then((rows: Array<{ payload: Record<string, any> }>) => rows.map((row) => row.payload));
  const phoneChats = async (phone: string) => (await stack.control<{ chats: PhoneChat[] }>('GET', `/sim/accounts/${phone}/chats`)).chats;
  const mutations = async (phone: string, collection: string) =>
    (await stack.control<Record<string, { mutations: Mutation[] }>>('GET', `/sim/accounts/${phone}/app-state`))[collection]?.mutations ?? [];

  it('should complete a fresh device’s first sync from snapshot blobs and take external patches, every blob through the instance’s proxy (chat notes too)', async () => {
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

      // Chat notes are read beside Baileys (it drops them): their blobs come through the proxy too. The first
      // read of the socket starts from the regular_low snapshot, the next one takes a patch's external mutations.
      const chatJid = `${contact}@s.whatsapp.net`;
      await stack.control('POST', `/sim/accounts/${contact}/send`, { to: phone, text: 'oi' });
      await waitFor(
        async () => (await stack.gw.call('POST', '/chat/find', { token, body: { wa_chatid: chatJid } })).body.chats?.length ?? 0,
        (found) => found > 0,
        20_000,
        'the contact’s chat',
      );
      const refresh = (force: boolean) => stack.gw.call('POST', '/chat/notes/refresh', { token, body: { number: contact, force } });
      await stack.control('POST', `/sim/accounts/${phone}/notes`, { chatJid, text: 'Ligar amanhã' });
      expect(await refresh(true)).toMatchObject({ status: 200, body: { wa_notes: 'Ligar amanhã', source: 'appstate_reload' } });
      await stack.control('POST', `/sim/accounts/${phone}/notes`, { chatJid, text: 'Ligar às 11h' });
      expect(await refresh(false)).toMatchObject({ status: 200, body: { wa_notes: 'Ligar às 11h', source: 'appstate_reload' } });
      await stack.control('POST', '/sim/faults', { kind: 'clear' });
    } finally {
      await proxy.close();
    }
  }, 90_000);

  describe('an instance with two chats: a 409 on our own upload, a patch whose MAC does not match', () => {
    let token: string;
    let phone: string;
    let contact: string;
    let other: string;

    const storedChat = async (number: string) => {
      const { body } = await stack.gw.call('POST', '/chat/find', { token, body: { wa_chatid: `${number}@s.whatsapp.net` } });
      return body.chats?.[0] as Record<string, unknown> | undefined;
    };

    beforeAll(async () => {
      ({ token, phone } = await stack.connectedInstance('conflict'));
      contact = nextPhone('5571');
      other = nextPhone('5572');
      for (const number of [contact, other]) {
        await stack.control('POST', '/sim/accounts', { phone: number, name: `C${number.slice(-3)}` });
        await stack.control('POST', `/sim/accounts/${number}/send`, { to: phone, text: 'oi' });
        await waitFor(
          () => storedChat(number),
          (chat) => chat !== undefined,
          20_000,
          `the chat of ${number}`,
        );
      }
    }, 90_000);

    it('should resync and send /chat/archive again after a 409, the archive landing once and the phone’s own change arriving', async () => {
      // While our archive (regular_low) is in flight, the phone pins another chat (regular_low too).
      await stack.control('POST', '/sim/faults', { kind: 'app-state-conflict', device: phone, jid: `${other}@s.whatsapp.net`, mod: { pin: true } });

      const archived = await stack.gw.call('POST', '/chat/archive', { token, body: { number: contact, archive: true } });
      expect(archived).toMatchObject({ status: 200, body: { response: 'Chat updated successfully' } });
      // The fault played: our first upload was refused with a 409.
      expect(
        (await stack.control<Array<{ rule?: { kind?: string } }>>('GET', '/sim/faults')).filter((fault) => fault.rule?.kind === 'app-state-conflict'),
      ).toEqual([]);

      const chats = await phoneChats(phone);
      expect(chats.find((chat) => chat.jid === `${contact}@s.whatsapp.net`)).toMatchObject({ archived: true });
      expect(chats.find((chat) => chat.jid === `${other}@s.whatsapp.net`)).toMatchObject({ pinned: true });
      // Once: one archive mutation for the chat on the server.
      const archives = (await mutations(phone, 'regular_low')).filter(
        (mutation) => Array.isArray(mutation.index) && mutation.index[0] === 'archive' && mutation.index[1] === `${contact}@s.whatsapp.net`,
      );
      expect(archives).toHaveLength(1);

      expect(await storedChat(contact)).toMatchObject({ wa_archived: true });
      // The phone's pin, which the 409 carried, reached us too.
      await waitFor(
        () => storedChat(other),
        (chat) => chat?.wa_isPinned === true,
        15_000,
        'the phone’s pin on our side',
      );
    }, 60_000);

    it('should resync and send /label/edit again after a 409, the edit landing once and the phone’s new label arriving', async () => {
      const labels = async () => (await stack.gw.call('GET', '/labels', { token })).body as Array<{ labelid: string; name: string }>;
      // The label is the phone's (an unknown id is "Label not found"); we rename it while the phone adds another (regular too).
      await stack.control('POST', `/sim/accounts/${phone}/app-state`, { mod: { addLabel: { id: '30', name: 'Phone 30', color: 5 } } });
      await waitFor(labels, (list) => list.some((label) => label.labelid === '30'), 15_000, 'the phone’s label');
      await stack.control('POST', '/sim/faults', {
        kind: 'app-state-conflict',
        device: phone,
        jid: `${other}@s.whatsapp.net`,
        mod: { addLabel: { id: '31', name: 'Phone 31', color: 1 } },
      });

      expect(await stack.gw.call('POST', '/label/edit', { token, body: { labelid: '30', name: 'Ours', color: 5 } })).toMatchObject({
        status: 200,
        body: { response: 'Label edited' },
      });
      expect(
        (await stack.control<Array<{ rule?: { kind?: string } }>>('GET', '/sim/faults')).filter((fault) => fault.rule?.kind === 'app-state-conflict'),
      ).toEqual([]);

      const edits = (await mutations(phone, 'regular')).filter((mutation) => Array.isArray(mutation.index) && mutation.index[0] === 'label_edit');
      expect(edits.filter((mutation) => (mutation.index as string[])[1] === '30' && mutation.action?.labelEditAction?.name === 'Ours')).toHaveLength(1);
      expect(edits.filter((mutation) => (mutation.index as string[])[1] === '31')).toHaveLength(1);
      await waitFor(
        labels,
        (list) =>
          list.some((label) => label.labelid === '30' && label.name === 'Ours') && list.some((label) => label.labelid === '31' && label.name === 'Phone 31'),
        15_000,
        'our edit and the phone’s label listed',
      );
    }, 60_000);

    it('should refuse a patch whose MAC does not match, fetch the collection again and take the genuine change, then a later patch', async () => {
      const chatJid = `${other}@s.whatsapp.net`;
      // The phone mutes the chat (regular_high, which only Baileys' own sync reads); the server's next answer with
      // the collection carries the mutation forged: another mute end, the genuine MACs.
      const forged = 4_102_444_800_000;
      const genuine = Date.now() + 8 * 3_600_000;
      await stack.control('POST', '/sim/faults', {
        kind: 'app-state-bad-mac',
        device: phone,
        collection: 'regular_high',
        value: { muteAction: { muted: true, muteEndTimestamp: forged } },
      });
      await stack.control('POST', `/sim/accounts/${phone}/app-state`, { jid: chatJid, mod: { mute: genuine } });
      // Refused, the collection fetched again from the start: the genuine mute.
      await waitFor(
        () => storedChat(other),
        (chat) => chat?.wa_muteEndTime === genuine,
        20_000,
        'the genuine mute',
      );
      expect(
        (await stack.control<Array<{ rule?: { kind?: string } }>>('GET', '/sim/faults')).filter((fault) => fault.rule?.kind === 'app-state-bad-mac'),
      ).toEqual([]);

      // A later patch applies as usual.
      const later = Date.now() + 16 * 3_600_000;
      await stack.control('POST', `/sim/accounts/${phone}/app-state`, { jid: chatJid, mod: { mute: later } });
      await waitFor(
        () => storedChat(other),
        (chat) => chat?.wa_muteEndTime === later,
        15_000,
        'the later mute',
      );
      // The forged mute was never taken: no chats event ever carried it.
      expect((await events('chats')).filter((event) => JSON.stringify(event).includes(String(forged)))).toEqual([]);
    }, 60_000);

    it('should take the genuine change from the snapshot the collection is fetched again with, as WhatsApp answers a fetch from scratch', async () => {
      const chatJid = `${contact}@s.whatsapp.net`;
      // Answers to a fetch from scratch come as snapshots (mutations inline), as WhatsApp's do; the phone's patch is
      // forged as before. A snapshot is a blob rc14 downloads from its fixed media host (mmg.whatsapp.net), which
      // this machine reaches only through the proxy: without it the download fails ("fetch failed", ENOTFOUND),
      // rc14's whole sync throws and rolls back, and no chats.update comes — snapshot or not, forged or not.
      const proxy = await startConnectProxy(stack.sim.mediaHost!);
      expect((await stack.gw.call('POST', '/instance/proxy', { token, body: { mode: 'custom', proxy_url: proxy.url } })).status).toBe(200);
      // Reconnected through it.
      await waitFor(
        async () => proxy.tunnels.length > 0 && (await stack.gw.call('GET', '/instance/status', { token })).body.status?.connected === true,
        (connected) => connected,
        20_000,
        'the socket through the proxy',
      );
      await stack.control('POST', '/sim/faults', { kind: 'app-state-external', device: phone, snapshot: true, externalAbove: null });
      try {
        const forged = 4_102_444_800_000;
        const genuine = Date.now() + 4 * 3_600_000;
        await stack.control('POST', '/sim/faults', {
          kind: 'app-state-bad-mac',
          device: phone,
          collection: 'regular_high',
          value: { muteAction: { muted: true, muteEndTimestamp: forged } },
        });
        await stack.control('POST', `/sim/accounts/${phone}/app-state`, { jid: chatJid, mod: { mute: genuine } });
        // Refused, the collection fetched again from scratch: a snapshot, whose mute record is the genuine one.
        await waitFor(
          () => storedChat(contact),
          (chat) => chat?.wa_muteEndTime === genuine,
          15_000,
          'the genuine mute from the snapshot',
        );
        // It came as a snapshot: the only blob of this answer (patches are inline).
        expect(proxy.tunnels).toContain(BLOB_HOST);
        expect((await events('chats')).filter((event) => JSON.stringify(event).includes(String(forged)))).toEqual([]);
      } finally {
        await stack.control('POST', '/sim/faults', { kind: 'clear' });
        await stack.gw.call('DELETE', '/instance/proxy', { token });
        await proxy.close();
      }
    }, 40_000);
  });
});
