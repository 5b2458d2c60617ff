import { nextPhone, Stack, waitFor } from './support/stack';

interface SseFrame {
  id: string;
  event: string;
  data: Record<string, any>;
}

/** A reader of `GET /sse`: collects every data frame until closed. */
async function openSse(url: string, token: string) {
  const controller = new AbortController();
  const response = await fetch(url, { headers: { token }, signal: controller.signal });
  const frames: SseFrame[] = [];
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let pending = '';
  const pump = (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        pending += decoder.decode(value, { stream: true });
        let end: number;
        while ((end = pending.indexOf('\n\n')) >= 0) {
          const lines = pending.slice(0, end).split('\n');
          pending = pending.slice(end + 2);
          const field = (name: string) => lines.find((line) => line.startsWith(`${name}: `))?.slice(name.length + 2);
          const data = field('data');
          if (data !== undefined) frames.push({ id: field('id') ?? '', event: field('event') ?? '', data: JSON.parse(data) });
        }
      }
    } catch {
      // closed by the test
    }
  })();
  return {
    status: response.status,
    frames,
    close: async () => {
      controller.abort();
      await pump;
    },
  };
}

/**
 * `presence`, `blocks`, and labels with their refresh: what simulated phones do reaches the outbox
 * and an SSE client; `/chat/block`, `/chat/blocklist`, `/labels` and `/labels/refresh` through the API.
 */
describe('presence, blocks and label refresh (simulated phones → Baileys → outbox → SSE)', () => {
  const stack = new Stack();
  let token: string;
  let phone: string;
  let contact: string;
  let contactLid: string;
  let sse: Awaited<ReturnType<typeof openSse>>;

  const events = (type: string) =>
    stack.db.dataSource
      .query(`SELECT payload FROM outbox_events WHERE event_type = $1 ORDER BY id`, [type])
      .then((rows: Array<{ payload: Record<string, any> }>) => rows.map((row) => row.payload));

  beforeAll(async () => {
    await stack.start();
    ({ token, phone } = await stack.connectedInstance('contact-state'));
    contact = nextPhone('5571');
    contactLid = (await stack.control<{ lid: string }>('POST', '/sim/accounts', { phone: contact, name: 'Rita' })).lid;
    sse = await openSse(`${stack.gw.baseUrl}/sse?events=presence,blocks,leads`, token);
    expect(sse.status).toBe(200);
    // The contact writes first: the chat exists, and the instance follows the contact's presence.
    await stack.control('POST', `/sim/accounts/${contact}/send`, { to: phone, text: 'oi' });
    await waitFor(
      () => stack.gw.call('POST', '/message/find', { token, body: { fromMe: false } }),
      (r) => r.body.returnedMessages > 0,
      20_000,
      'first message',
    );
  }, 90_000);
  afterAll(async () => {
    await sse?.close();
    await stack.stop();
  });

  it('should announce a contact coming online and typing, through the outbox and SSE', async () => {
    const contactJid = `${contact}@s.whatsapp.net`;
    // The subscription follows the first message; until it lands, WhatsApp has no one to tell.
    const online = await waitFor(
      async () => {
        await stack.control('POST', `/sim/accounts/${contact}/presence`, { type: 'available' });
        return events('presence');
      },
      (list) => list.some((event) => event.event.State === 'available'),
      30_000,
      'available presence event',
    );
    expect(online.find((event) => event.event.State === 'available')).toMatchObject({
      EventType: 'presence',
      type: 'Presence',
      event: { Chat: contactJid, Sender: contactJid, sender_pn: contactJid, IsGroup: false, LastSeen: null },
      instanceName: 'contact-state',
      owner: phone,
    });

    await stack.control('POST', `/sim/accounts/${contact}/presence`, { type: 'unavailable' });
    const offline = await waitFor(
      () => events('presence'),
      (list) => list.some((event) => event.event.State === 'unavailable' && event.event.LastSeen),
      20_000,
      'unavailable presence event',
    );
    expect(offline.find((event) => event.event.State === 'unavailable')!.event.LastSeen).toBeGreaterThan(1_700_000_000);

    await stack.control('POST', `/sim/accounts/${contact}/presence`, { type: 'composing', to: phone });
    const typing = await waitFor(
      () => events('presence'),
      (list) => list.some((event) => event.event.State === 'composing'),
      20_000,
      'composing presence event',
    );
    expect(typing.find((event) => event.event.State === 'composing')).toMatchObject({
      type: 'ChatPresence',
      event: { Chat: contactJid, Sender: contactJid, sender_lid: contactLid, IsGroup: false },
    });

    // In a group: the chat is the group, the sender the member.
    const group = await stack.control<{ jid: string }>('POST', '/sim/groups', { creator: contact, subject: 'Equipe', participants: [phone] });
    await stack.control('POST', `/sim/accounts/${contact}/presence`, { type: 'recording', to: group.jid });
    const inGroup = await waitFor(
      () => events('presence'),
      (list) => list.some((event) => event.event.Chat === group.jid),
      20_000,
      'group presence event',
    );
    expect(inGroup.find((event) => event.event.Chat === group.jid)).toMatchObject({
      type: 'ChatPresence',
      event: { Sender: contactJid, sender_lid: contactLid, IsGroup: true, State: 'recording' },
    });

    await waitFor(
      async () => sse.frames,
      (frames) => frames.some((frame) => frame.event === 'presence' && frame.data.event.State === 'composing'),
      20_000,
      'presence over SSE',
    );
    expect(sse.frames.find((frame) => frame.event === 'presence')!.data).toMatchObject({ EventType: 'presence', instanceName: 'contact-state' });
  });

  it('should block and unblock through the API and the phone, and announce each change once', async () => {
    const contactJid = `${contact}@s.whatsapp.net`;
    const blocked = await stack.gw.call('POST', '/chat/block', { token, body: { number: contact, block: true } });
    expect(blocked.status).toBe(200);
    expect(blocked.body).toEqual({ response: 'Blocked successfully', blockList: [contactJid] });
    // WhatsApp (the simulator) has it, by LID as Baileys sends it.
    expect((await stack.control<{ blocklist: string[] }>('GET', `/sim/accounts/${phone}/blocklist`)).blocklist).toEqual([contactLid]);
    expect((await stack.gw.call('GET', '/chat/blocklist', { token })).body).toEqual({ blockList: [contactJid] });
    const [chat] = await stack.db.dataSource.query(`SELECT blocked FROM chats WHERE wa_chatid = $1`, [contactJid]);
    expect(chat.blocked).toBe(true);

    const afterBlock = await waitFor(
      () => events('blocks'),
      (list) => list.length >= 1,
      15_000,
      'blocks event',
    );
    expect(afterBlock).toHaveLength(1);
    expect(afterBlock[0]).toMatchObject({
      EventType: 'blocks',
      changes: [{ jid: contactJid, lid: contactLid, action: 'block' }],
      blockList: [contactJid],
      owner: phone,
    });

    // The phone unblocks: the linked device is told, the store and the chat follow.
    await stack.control('POST', `/sim/accounts/${phone}/blocklist`, { jid: contact, action: 'unblock' });
    const afterUnblock = await waitFor(
      () => events('blocks'),
      (list) => list.length >= 2,
      15_000,
      'unblock event',
    );
    expect(afterUnblock[1]).toMatchObject({ changes: [{ jid: contactJid, action: 'unblock' }], blockList: [] });
    expect((await stack.gw.call('GET', '/chat/blocklist', { token })).body).toEqual({ blockList: [] });
    const [after] = await stack.db.dataSource.query(`SELECT blocked FROM chats WHERE wa_chatid = $1`, [contactJid]);
    expect(after.blocked).toBe(false);
    await waitFor(
      async () => sse.frames,
      (frames) => frames.filter((frame) => frame.event === 'blocks').length >= 2,
      15_000,
      'blocks over SSE',
    );
    expect(sse.frames.every((frame) => frame.event === 'presence' || frame.event === 'blocks')).toBe(true);
  });

  it('should refuse bad block requests with 4xx {error}', async () => {
    for (const body of [
      { block: true },
      { number: contact },
      { number: 'abc', block: true },
      { number: '120363000000000001@g.us', block: true },
      { number: contact, block: 'yes' },
    ]) {
      const response = await stack.gw.call('POST', '/chat/block', { token, body });
      expect(response.status).toBe(400);
      expect(typeof response.body.error).toBe('string');
    }
    const unknown = await stack.gw.call('POST', '/chat/block', { token, body: { number: '5599912345678', block: true } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatch(/not found/i);
  });

  it('should list labels from the store and re-announce them with the refresh’s request_id', async () => {
    await stack.control('POST', `/sim/accounts/${phone}/app-state`, { mod: { addLabel: { id: '5', name: 'Novo cliente', color: 2 } } });
    await stack.control('POST', `/sim/accounts/${phone}/app-state`, { jid: `${contact}@s.whatsapp.net`, mod: { addChatLabel: { labelId: '5' } } });
    await waitFor(
      () => events('chat_labels'),
      (list) => list.length > 0,
      20_000,
      'chat_labels from the phone',
    );
    const [fromPhone] = await events('labels');
    expect(fromPhone).toMatchObject({ label: { id: '5', name: 'Novo cliente' }, request_id: '' });

    const listed = await stack.gw.call('GET', '/labels', { token });
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual([
      expect.objectContaining({ labelid: '5', name: 'Novo cliente', color: 2, colorHex: '#fed428', owner: phone, id: expect.stringMatching(/^r/) }),
    ]);

    const refresh = await stack.gw.call('POST', '/labels/refresh', { token, body: { force: true }, headers: { 'x-request-id': 'refresh-42' } });
    expect(refresh.status).toBe(200);
    expect(refresh.body).toMatchObject({ success: true, request_id: 'refresh-42', force: true, fullSync: true });
    expect(['started', 'in_progress']).toContain(refresh.body.status);

    const relabelled = await waitFor(
      () => events('labels'),
      (list) => list.some((event) => event.request_id === 'refresh-42'),
      20_000,
      'labels event of the refresh',
    );
    expect(relabelled.find((event) => event.request_id === 'refresh-42')).toMatchObject({
      EventType: 'labels',
      label: { id: '5', name: 'Novo cliente', color: 2 },
    });
    const associations = await waitFor(
      () => events('chat_labels'),
      (list) => list.some((event) => event.request_id === 'refresh-42'),
      20_000,
      'chat_labels event of the refresh',
    );
    expect(associations.find((event) => event.request_id === 'refresh-42')).toMatchObject({
      event: { chatid: expect.stringContaining(contact), labelid: '5', action: 'add', labels: ['5'] },
    });

    // Without a header the gateway issues the id. While WhatsApp is slow to answer, a second call
    // finds the refresh running and answers its id.
    await stack.control('POST', '/sim/faults', { kind: 'latency', delayMs: 2_000, device: phone });
    try {
      const second = await waitFor(
        () => stack.gw.call('POST', '/labels/refresh', { token, body: {} }),
        (r) => r.status === 200 && r.body.status === 'started',
        20_000,
        'second refresh',
      );
      expect(second.body.request_id).toMatch(/^[0-9a-f-]{36}$/);
      const third = await stack.gw.call('POST', '/labels/refresh', { token, body: { force: true }, headers: { 'x-request-id': 'refresh-43' } });
      expect(third.body).toMatchObject({ status: 'in_progress', request_id: second.body.request_id, force: false });
    } finally {
      await stack.control('POST', '/sim/faults', { kind: 'clear' });
    }
    const wrong = await stack.gw.call('POST', '/labels/refresh', { token, body: { force: 'yes' } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toMatch(/force/);
  });

  it('should create, edit and delete labels and set a chat’s labels through the phone’s app state', async () => {
    const contactJid = `${contact}@s.whatsapp.net`;
    const created = await stack.gw.call('POST', '/label/edit', { token, body: { labelid: 'new', name: 'VIP', color: 4 } });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({ response: 'Label created', labelid: '6' }); // one past label 5
    const labelled = await stack.gw.call('GET', '/labels', { token });
    expect(labelled.body.find((label: any) => label.labelid === '6')).toMatchObject({ name: 'VIP', color: 4, colorHex: '#9ab6c1' });
    // It went to WhatsApp as an app-state patch, and was announced.
    const state = await stack.control<Record<string, { mutations: Array<{ index: string[] | null; action: Record<string, any> | null }> }>>(
      'GET',
      `/sim/accounts/${phone}/app-state`,
    );
    expect(
      state.regular.mutations.some(
        (mutation) => mutation.index?.[0] === 'label_edit' && mutation.index[1] === '6' && mutation.action?.labelEditAction?.name === 'VIP',
      ),
    ).toBe(true);
    expect((await events('labels')).some((event) => event.label.id === '6' && event.request_id === '')).toBe(true);

    expect((await stack.gw.call('POST', '/label/edit', { token, body: { labelid: '6', name: 'VIP+' } })).body).toEqual({ response: 'Label edited' });
    expect((await stack.gw.call('GET', '/labels', { token })).body.find((label: any) => label.labelid === '6')).toMatchObject({ name: 'VIP+', color: 4 });

    expect((await stack.gw.call('POST', '/chat/labels', { token, body: { number: contact, add_labelid: '6' } })).body).toEqual({
      response: 'Label added to chat',
    });
    const chatLabels = () =>
      stack.db.dataSource
        .query(`SELECT labels FROM chats WHERE wa_chatid = $1`, [contactJid])
        .then((rows: Array<{ labels: string[] }>) => [...rows[0].labels].sort());
    expect(await chatLabels()).toEqual(['5', '6']);
    const set = await stack.gw.call('POST', '/chat/labels', { token, body: { number: contact, labelids: ['6'] } });
    expect(set.body).toEqual({ response: 'Labels updated successfully', editions: ['Removed label 5 from chat'] });
    expect(await chatLabels()).toEqual(['6']);
    expect((await events('chat_labels')).some((event) => event.event.labelid === '5' && event.event.action === 'remove' && event.request_id === '')).toBe(true);

    expect((await stack.gw.call('POST', '/label/edit', { token, body: { labelid: '6', delete: true } })).body).toEqual({ response: 'Label edited' });
    expect((await stack.gw.call('GET', '/labels', { token })).body.map((label: any) => label.labelid)).toEqual(['5']);
    expect((await events('labels')).some((event) => event.label.id === '6' && event.label.deleted === true)).toBe(true);
  });

  it('should refuse bad label requests with 4xx {error}', async () => {
    const cases: Array<[string, Record<string, unknown>, number]> = [
      ['/label/edit', { labelid: 'new' }, 400],
      ['/label/edit', { labelid: 'new', name: 'x', delete: true }, 400],
      ['/label/edit', { name: 'x' }, 400],
      ['/label/edit', { labelid: '5', color: 25 }, 400],
      ['/label/edit', { labelid: '5', color: 'red' }, 400],
      ['/label/edit', { labelid: '999', name: 'x' }, 404],
      ['/chat/labels', { number: contact }, 400],
      ['/chat/labels', { number: contact, add_labelid: '5', remove_labelid: '5' }, 400],
      ['/chat/labels', { number: contact, add_labelid: '999' }, 400],
      ['/chat/labels', { number: contact, labelids: '5' }, 400],
      ['/chat/labels', { number: '120363000000000001@newsletter', add_labelid: '5' }, 400],
      ['/chat/labels', { add_labelid: '5' }, 400],
    ];
    for (const [path, body, status] of cases) {
      const response = await stack.gw.call('POST', path, { token, body });
      expect({ path, body, status: response.status }).toEqual({ path, body, status });
      expect(typeof response.body.error).toBe('string');
    }
  });

  it('should catch up at login with a block made while the instance was away', async () => {
    const contactJid = `${contact}@s.whatsapp.net`;
    const before = (await events('blocks')).length;
    // The phone's notification of the block is lost; the next login finds the block in WhatsApp's list.
    await stack.control('POST', '/sim/faults', { kind: 'drop-deliveries', device: phone, count: 1 });
    await stack.control('POST', `/sim/accounts/${phone}/blocklist`, { jid: contact, action: 'block' });
    expect((await stack.control<Array<{ rule: { kind: string } }>>('GET', '/sim/faults')).some((fault) => fault.rule.kind === 'drop-deliveries')).toBe(false);
    expect(await events('blocks')).toHaveLength(before);
    const [device] = await stack.control<Array<{ jid: string }>>('GET', `/sim/devices?phone=${phone}`);
    const asked = () => stack.control<{ loginCount: number; blocklistQueries: number }>('GET', `/sim/devices/${encodeURIComponent(device.jid)}`);
    const askedBefore = await asked();
    await stack.control('POST', `/sim/devices/${encodeURIComponent(device.jid)}/drop`);
    const list = await waitFor(
      () => events('blocks'),
      (entries) => entries.length > before,
      60_000,
      'blocks event after login',
    );
    expect(list[before]).toMatchObject({ changes: [{ jid: contactJid, lid: contactLid, action: 'block' }], blockList: [contactJid] });
    await waitFor(
      () => stack.gw.call('GET', '/instance/status', { token }),
      (r) => r.body.status?.connected === true,
      30_000,
      'reconnected',
    );
    // One blocklist query per login, as WhatsApp Web makes: Baileys' own at login, whose answer ours follows.
    // (A login whose query is still on its way is waited for.)
    const askedAfter = await waitFor(
      asked,
      (now) => now.blocklistQueries - askedBefore.blocklistQueries >= now.loginCount - askedBefore.loginCount,
      10_000,
      "each login's blocklist query",
    );
    expect(askedAfter.loginCount).toBeGreaterThan(askedBefore.loginCount);
    expect(askedAfter.blocklistQueries - askedBefore.blocklistQueries).toBe(askedAfter.loginCount - askedBefore.loginCount);
    expect((await stack.gw.call('GET', '/chat/blocklist', { token })).body).toEqual({ blockList: [contactJid] });
  }, 90_000);

  it('should accept `leads` (an older event name) in webhook and SSE event lists', async () => {
    const webhook = await stack.gw.call('POST', '/webhook', { token, body: { url: 'http://127.0.0.1:9/hook', events: ['leads', 'presence'] } });
    expect(webhook.status).toBe(200);
    expect(JSON.stringify(webhook.body)).toContain('leads');
    expect((await stack.gw.call('POST', '/webhook', { token, body: { url: 'http://127.0.0.1:9/hook', events: ['lead'] } })).status).toBe(400);
    expect(sse.status).toBe(200); // opened with events=presence,blocks,leads
    expect((await stack.gw.call('GET', '/sse?events=lead', { token })).status).toBe(400);
  });
});
