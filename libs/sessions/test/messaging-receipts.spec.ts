import { randomBytes } from 'node:crypto';
import { Subjects, type SendRequest } from '@gw/contracts';
import { quietLibsignalConsole } from '@gw/wa-sim';
import type { SessionWorker } from '../src/session-worker';
import { Harness, nextPhone, sleep, waitFor } from './support/harness';
import { MessagingFixture, type SimAccount } from './support/messaging-fixtures';

jest.setTimeout(30_000);
quietLibsignalConsole();

describe('Receipts move the status of sent messages forward, never back', () => {
  const harness = new Harness();
  const fixture = new MessagingFixture(harness);
  const instanceId = 'receipts';
  let worker: SessionWorker;
  let me: SimAccount;
  let bea: SimAccount;
  let carl: SimAccount;
  let dina: SimAccount;

  const states = async (messageId: string) => (await fixture.updateEvents(instanceId, messageId)).map((event) => event.payload.state as string);

  beforeAll(async () => {
    await harness.start();
    worker = await harness.startWorker('w-receipts', { leaseTtlMs: 20_000 }); // no takeover here: a long lease keeps a loaded machine from fencing the worker
    me = await fixture.account(nextPhone(), 'Loja');
    bea = await fixture.account(nextPhone(), 'Bea');
    carl = await fixture.account(nextPhone(), 'Carl');
    dina = await fixture.account(nextPhone(), 'Dina');
    // Receipts only when a test sends them.
    for (const account of [bea, carl, dina]) await fixture.autoReceipts(account.phone, null);
    await harness.newInstance(instanceId);
    await harness.pairByQr(instanceId, me.phone);
    await fixture.settled(instanceId, dina.phone, me.phone);
  }, 90_000);
  afterAll(() => harness.stop());

  it('should go Sent → Delivered → Read → Played with one messages_update per step', async () => {
    const sent = await fixture.socket(worker, instanceId).sendMessage(bea.jid, { text: 'chegou?' });
    const id = sent!.key.id!;
    // The server ack (not an event in Baileys) makes it Sent.
    expect(await fixture.waitMessage(instanceId, id, (row) => row.status === 'Sent')).toMatchObject({
      fromMe: true,
      chatId: bea.jid,
      chatLid: bea.lid,
      sender: me.lid,
      senderPn: me.jid,
    });
    expect((await fixture.messageEvent(instanceId, id)).payload.message).toMatchObject({ messageid: id, fromMe: true, chatid: bea.jid, chatlid: bea.lid });

    for (const [type, status] of [
      ['delivered', 'Delivered'],
      ['read', 'Read'],
      ['played', 'Played'],
    ] as const) {
      await fixture.receipts(bea.phone, me.phone, [id], type);
      await fixture.waitMessage(instanceId, id, (row) => row.status === status);
    }
    await waitFor(
      () => states(id),
      (list) => list.length === 3,
      5_000,
      'three receipt events',
    );
    expect(await states(id)).toEqual(['Delivered', 'Read', 'Played']);

    const [, read] = await fixture.updateEvents(instanceId, id);
    expect(read.chatId).toBe(bea.jid);
    expect(Object.keys(read.payload).sort()).toEqual(['EventType', 'event', 'instanceName', 'owner', 'state', 'type']);
    expect(read.payload).toEqual({
      EventType: 'messages_update',
      type: 'ReadReceipt',
      state: 'Read',
      event: {
        MessageIDs: [id],
        Chat: bea.jid,
        Sender: bea.jid,
        sender_pn: bea.jid,
        sender_lid: bea.lid,
        IsFromMe: 'True',
        IsGroup: 'False',
        Timestamp: expect.stringMatching(/^\d{10}$/),
        Type: 'Read',
      },
      instanceName: `name-${instanceId}`,
      owner: me.phone,
    });
  });

  it('should ignore receipts that arrive after a more advanced one', async () => {
    const sent = await fixture
      .socket(worker, instanceId)
      .sendMessage(bea.jid, { audio: Buffer.from('OggS voice'), ptt: true, mimetype: 'audio/ogg; codecs=opus', seconds: 2 });
    const id = sent!.key.id!;
    await fixture.waitMessage(instanceId, id, (row) => row.status === 'Sent');
    await fixture.receipts(bea.phone, me.phone, [id], 'played');
    await fixture.waitMessage(instanceId, id, (row) => row.status === 'Played');
    await fixture.receipts(bea.phone, me.phone, [id], 'delivered');
    await fixture.receipts(bea.phone, me.phone, [id], 'read');
    await sleep(500);
    expect((await fixture.message(instanceId, id))!.status).toBe('Played');
    expect(await states(id)).toEqual(['Played']);
  });

  it('should take a delivery receipt that Baileys merged into the upsert (or sent apart) once', async () => {
    await fixture.autoReceipts(bea.phone, 0);
    try {
      const sent = await fixture.socket(worker, instanceId).sendMessage(bea.jid, { text: 'rápido' });
      const id = sent!.key.id!;
      await fixture.waitMessage(instanceId, id, (row) => row.status === 'Delivered');
      await waitFor(
        () => states(id),
        (list) => list.length > 0,
        5_000,
        'Delivered event',
      );
      await sleep(300);
      expect(await states(id)).toEqual(['Delivered']);
    } finally {
      await fixture.autoReceipts(bea.phone, null);
    }
  });

  it('should mark a message WhatsApp refused Failed with the reason and announce it', async () => {
    await harness.control('POST', '/sim/faults', { kind: 'ack', mode: 'error', error: '463', device: me.phone, count: 1 });
    try {
      const sent = await fixture.socket(worker, instanceId).sendMessage(bea.jid, { text: 'bloqueado?' });
      const id = sent!.key.id!;
      const row = await fixture.waitMessage(instanceId, id, (r) => r.status === 'Failed');
      // Worded as the send path words an error ack, whichever path records it first.
      expect(row.error).toBe('WhatsApp refused the message (error 463: account restricted or missing privacy token)');
      const events = await waitFor(
        () => fixture.updateEvents(instanceId, id),
        (list) => list.length > 0,
        5_000,
        'Failed event',
      );
      expect(events).toHaveLength(1);
      expect(events[0].payload).toMatchObject({
        type: 'Failed',
        state: 'Failed',
        error: row.error,
        event: { MessageIDs: [id], Type: 'Failed', IsFromMe: 'True' },
      });
    } finally {
      await harness.control('POST', '/sim/faults', { kind: 'clear' }).catch(() => undefined);
    }
  });

  it('should leave to the send an error ack it took, however late Baileys hands it over', async () => {
    // A 475 from a new-chat cap that is over (the cap in force has room): the send relays the message
    // again at once, the server acks it, the send writes Sent. Baileys' event buffer (held here, as an
    // incoming stanza holds it) merges its Failed announcement of the 475 into the message's upsert and
    // hands both over only after that.
    await harness.control('POST', '/sim/faults', { kind: 'new-chat-cap', device: me.phone, limit: 1_000, cycleMs: 3_600_000 });
    await harness.control('POST', '/sim/faults', { kind: 'ack', mode: 'error', error: '475', device: me.phone, count: 1 });
    const socket = fixture.socket(worker, instanceId);
    socket.ev.buffer();
    let flushed = false;
    try {
      const messageId = `3EB0${randomBytes(9).toString('hex').toUpperCase()}`;
      const request: SendRequest = {
        instanceId,
        recordId: `r${messageId.slice(-8).toLowerCase()}`,
        messageId,
        chatJid: carl.jid,
        content: { kind: 'text', text: 'de novo, na hora', linkPreview: null },
        record: { sendFunction: '/send/text', sendPayload: { number: carl.phone, text: 'de novo, na hora' }, trackSource: '', trackId: '', sendFolderId: '' },
      };
      const reply = (await harness.bus.request(Subjects.instance(instanceId, 'send'), request, { timeoutMs: 15_000 })) as { status?: string };
      expect(reply.status).toBe('Sent');
      socket.ev.flush();
      flushed = true;
      const row = await fixture.waitMessage(instanceId, messageId, (r) => r.raw !== null);
      await sleep(500);
      expect({ status: (await fixture.message(instanceId, messageId))!.status, error: row.error }).toEqual({ status: 'Sent', error: '' });
      expect(await states(messageId)).toEqual([]);
    } finally {
      if (!flushed) socket.ev.flush();
      await harness.control('POST', '/sim/faults', { kind: 'clear' }).catch(() => undefined);
    }
  });

  it('should keep the id and API fields of a message sent through the send op, and announce it once', async () => {
    const messageId = `3EB0${randomBytes(9).toString('hex').toUpperCase()}`;
    const request: SendRequest = {
      instanceId,
      recordId: 'rapi0001',
      messageId,
      chatJid: bea.jid,
      content: { kind: 'text', text: 'enviado pela API', linkPreview: null },
      record: {
        sendFunction: '/send/text',
        sendPayload: { number: bea.phone, text: 'enviado pela API' },
        trackSource: 'crm',
        trackId: 'lead-42',
        sendFolderId: '',
      },
    };
    await harness.bus.request(Subjects.instance(instanceId, 'send'), request, { timeoutMs: 15_000 });
    const row = await fixture.waitMessage(instanceId, messageId, (r) => r.raw !== null);
    expect(row).toMatchObject({
      id: 'rapi0001',
      wasSentByApi: true,
      sendFunction: '/send/text',
      trackSource: 'crm',
      trackId: 'lead-42',
      chatId: bea.jid,
      chatLid: bea.lid,
      text: 'enviado pela API',
    });
    const event = await fixture.messageEvent(instanceId, messageId);
    expect(event.payload.message).toMatchObject({ id: 'rapi0001', wasSentByApi: true, track_source: 'crm', track_id: 'lead-42', fromMe: true });
    await fixture.receipts(bea.phone, me.phone, [messageId], 'read');
    await fixture.waitMessage(instanceId, messageId, (r) => r.status === 'Read');
    expect((await fixture.events(instanceId, 'messages')).filter((item) => item.payload.message.messageid === messageId)).toHaveLength(1);
    await waitFor(
      () => states(messageId),
      (list) => list.length > 0,
      5_000,
      'the Read event',
    );
    expect(await states(messageId)).toEqual(['Read']);
  });

  it('should show the most advanced participant in a group and one event per participant receipt', async () => {
    const group = await harness.control<{ jid: string }>('POST', '/sim/groups', {
      creator: carl.phone,
      subject: 'Equipe',
      participants: [me.phone, dina.phone],
    });
    const sent = await fixture.socket(worker, instanceId).sendMessage(group.jid, { text: 'bom dia, equipe' });
    const id = sent!.key.id!;
    const row = await fixture.waitMessage(instanceId, id, (r) => r.status === 'Sent');
    expect(row).toMatchObject({ isGroup: true, chatId: group.jid, chatLid: '', fromMe: true });
    expect((await fixture.messageEvent(instanceId, id)).payload.message).toMatchObject({ groupName: 'Equipe', isGroup: true });

    await fixture.receipts(dina.phone, group.jid, [id], 'delivered');
    await fixture.waitMessage(instanceId, id, (r) => r.status === 'Delivered');
    await fixture.receipts(carl.phone, group.jid, [id], 'read');
    await fixture.waitMessage(instanceId, id, (r) => r.status === 'Read');
    // Another participant catching up does not move the message back.
    await fixture.receipts(carl.phone, group.jid, [id], 'delivered');
    await fixture.receipts(dina.phone, group.jid, [id], 'read');
    await sleep(500);
    expect((await fixture.message(instanceId, id))!.status).toBe('Read');
    // `played` in groups reaches Baileys as a read; the worker reads the stanza itself.
    await fixture.receipts(dina.phone, group.jid, [id], 'played');
    await fixture.waitMessage(instanceId, id, (r) => r.status === 'Played');

    const events = await waitFor(
      () => fixture.updateEvents(instanceId, id),
      (list) => list.length >= 3,
      5_000,
      'three receipt events',
    );
    expect(events.map((event) => event.payload.state)).toEqual(['Delivered', 'Read', 'Played']);
    expect(events[1].payload.event).toMatchObject({
      Chat: group.jid,
      Sender: carl.lid,
      sender_pn: carl.jid,
      sender_lid: carl.lid,
      IsFromMe: 'True',
      IsGroup: 'True',
      Type: 'Read',
    });
    expect(events[1].chatId).toBe(group.jid);
  });
});
