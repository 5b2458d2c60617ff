import type { WAMessage, WAMessageUpdate, WASocket } from '@whiskeysockets/baileys';
import { startSimulator } from '../src';
import type { InboxEntry, OutboxEntry, RunningSimulator } from '../src';
import { endSocket, getJson, memoryAuth, pairWithQr, postJson, provisionAndConnect, sleep, trustSimulator, waitFor } from './helpers';

jest.setTimeout(30_000);

const GATEWAY = '5511900000101';
const CONTACT = '5511988880101';

async function waitForInbox(running: RunningSimulator, phone: string, predicate: (e: InboxEntry) => boolean, timeoutMs = 8_000): Promise<InboxEntry> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const { body } = await getJson<InboxEntry[]>(running, `/sim/accounts/${phone}/inbox?waitMs=500`);
    const hit = body.find(predicate);
    if (hit) return hit;
  }
  throw new Error('inbox entry not found');
}

async function waitForOutbox(running: RunningSimulator, phone: string, id: string, status: OutboxEntry['status'], timeoutMs = 8_000): Promise<OutboxEntry> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const { body } = await getJson<OutboxEntry[]>(running, `/sim/accounts/${phone}/outbox`);
    const hit = body.find((e) => e.id === id && e.status === status);
    if (hit) return hit;
    await sleep(50);
  }
  throw new Error(`outbox ${id} never reached ${status}`);
}

/** Status updates may arrive as messages.update or merged into the upsert (event buffering). */
function waitForStatus(sock: WASocket, id: string, status: number, timeoutMs = 8_000): Promise<number> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`status ${status} for ${id} not seen`)), timeoutMs);
    const done = (value: number): void => {
      clearTimeout(timer);
      sock.ev.off('messages.update', onUpdate);
      sock.ev.off('messages.upsert', onUpsert);
      resolve(value);
    };
    const onUpdate = (updates: WAMessageUpdate[]): void => {
      for (const u of updates) if (u.key.id === id && (u.update.status ?? 0) >= status) done(u.update.status ?? 0);
    };
    const onUpsert = ({ messages }: { messages: WAMessage[] }): void => {
      for (const m of messages) if (m.key.id === id && (m.status ?? 0) >= status) done(m.status ?? 0);
    };
    sock.ev.on('messages.update', onUpdate);
    sock.ev.on('messages.upsert', onUpsert);
  });
}

describe('1:1 messaging', () => {
  let running: RunningSimulator;
  let sock: WASocket;

  beforeAll(async () => {
    running = await startSimulator();
    trustSimulator(running);
    await postJson(running, '/sim/accounts', { phone: GATEWAY, name: 'Gateway' });
    await postJson(running, '/sim/accounts', { phone: CONTACT, name: 'Maria' });
    sock = await pairWithQr(running, GATEWAY, memoryAuth());
  });

  afterAll(async () => {
    endSocket(sock);
    await running.stop();
  });

  it('should deliver a text from the linked device to the contact phone and report delivery', async () => {
    const statusSeen = (async () => {
      const sent = await sock.sendMessage(`${CONTACT}@s.whatsapp.net`, { text: 'hello from the gateway' });
      return waitForStatus(sock, sent!.key.id!, 3);
    })();
    const entry = await waitForInbox(running, CONTACT, (e) => JSON.stringify(e.message).includes('hello from the gateway'));
    expect(entry.from).toBe(`${GATEWAY}@s.whatsapp.net`);
    expect(entry.fromDevice).toMatch(new RegExp(`^${GATEWAY}:\\d+@s\\.whatsapp\\.net$`));
    expect(entry.message).toMatchObject({ extendedTextMessage: { text: 'hello from the gateway' } });
    expect(await statusSeen).toBeGreaterThanOrEqual(3);
  });

  it('should deliver a text from the contact phone addressed by LID with sender_pn', async () => {
    const contact = (await getJson<{ lid: string }>(running, `/sim/accounts/${CONTACT}`)).body;
    const received = waitFor(sock, 'messages.upsert', ({ messages, type }: { messages: WAMessage[]; type: string }) =>
      type === 'notify' ? messages.find((m) => m.message?.conversation === 'oi, tudo bem?') : undefined,
    );
    const sent = await postJson<{ id: string }>(running, `/sim/accounts/${CONTACT}/send`, { to: GATEWAY, text: 'oi, tudo bem?' });
    expect(sent.status).toBe(200);
    const msg = await received;
    expect(msg.key.id).toBe(sent.body.id);
    expect(msg.key.remoteJid).toBe(contact.lid);
    expect(msg.key.remoteJidAlt).toBe(`${CONTACT}@s.whatsapp.net`);
    expect(msg.pushName).toBe('Maria');
    // Baileys acknowledges with a delivery receipt, which reaches the contact's phone.
    await waitForOutbox(running, CONTACT, sent.body.id, 'delivered');
    // The linked device reads it; the read receipt reaches the phone too.
    await sock.readMessages([msg.key]);
    await waitForOutbox(running, CONTACT, sent.body.id, 'read');
  });

  it('should report read and played receipts sent on demand by the contact', async () => {
    await postJson(running, `/sim/accounts/${CONTACT}/auto-receipts`, { deliveredMs: null });
    const sent = await sock.sendMessage(`${CONTACT}@s.whatsapp.net`, { text: 'read me' });
    const id = sent!.key.id!;
    await waitForInbox(running, CONTACT, (e) => e.id === id);
    const read = waitForStatus(sock, id, 4);
    const receipt = await postJson<{ sent: number }>(running, `/sim/accounts/${CONTACT}/receipts`, { chat: GATEWAY, ids: [id], type: 'read' });
    expect(receipt.body.sent).toBe(1);
    expect(await read).toBe(4);
    const played = waitForStatus(sock, id, 5);
    await postJson(running, `/sim/accounts/${CONTACT}/receipts`, { chat: `${GATEWAY}@s.whatsapp.net`, ids: [id], type: 'played' });
    expect(await played).toBe(5);
    await postJson(running, `/sim/accounts/${CONTACT}/auto-receipts`, { deliveredMs: 0 });
  });

  it('should keep a Signal session across several messages both ways', async () => {
    for (let i = 0; i < 3; i++) {
      const received = waitFor(sock, 'messages.upsert', ({ messages }: { messages: WAMessage[] }) =>
        messages.find((m) => m.message?.conversation === `ping ${i}`),
      );
      await postJson(running, `/sim/accounts/${CONTACT}/send`, { to: `${GATEWAY}@s.whatsapp.net`, text: `ping ${i}` });
      await received;
      await sock.sendMessage(`${CONTACT}@s.whatsapp.net`, { text: `pong ${i}` });
      await waitForInbox(running, CONTACT, (e) => JSON.stringify(e.message).includes(`pong ${i}`));
    }
  });

  it('should accept any WAProto message as JSON', async () => {
    const received = waitFor(sock, 'messages.upsert', ({ messages }: { messages: WAMessage[] }) => messages.find((m) => m.message?.locationMessage));
    const res = await postJson(running, `/sim/accounts/${CONTACT}/send`, {
      to: GATEWAY,
      message: { locationMessage: { degreesLatitude: -23.55, degreesLongitude: -46.63, name: 'Av. Paulista' } },
    });
    expect(res.status).toBe(200);
    const msg = await received;
    expect(msg.message?.locationMessage?.name).toBe('Av. Paulista');
  });
});

describe('1:1 messaging with PN addressing', () => {
  let running: RunningSimulator;
  let sock: WASocket;

  beforeAll(async () => {
    running = await startSimulator({ incomingAddressing: 'pn' });
    trustSimulator(running);
    await postJson(running, '/sim/accounts', { phone: GATEWAY });
    await postJson(running, '/sim/accounts', { phone: CONTACT, name: 'Maria' });
    sock = (await provisionAndConnect(running, GATEWAY)).sock;
  });

  afterAll(async () => {
    endSocket(sock);
    await running.stop();
  });

  it('should deliver PN-addressed messages carrying sender_lid', async () => {
    const contact = (await getJson<{ lid: string }>(running, `/sim/accounts/${CONTACT}`)).body;
    const received = waitFor(sock, 'messages.upsert', ({ messages }) => messages.find((m) => m.message?.conversation === 'pn hello'));
    await postJson(running, `/sim/accounts/${CONTACT}/send`, { to: GATEWAY, text: 'pn hello' });
    const msg = await received;
    expect(msg.key.remoteJid).toBe(`${CONTACT}@s.whatsapp.net`);
    expect(msg.key.remoteJidAlt).toBe(contact.lid);
    await sock.sendMessage(msg.key.remoteJid!, { text: 'pn reply' });
    await waitForInbox(running, CONTACT, (e) => JSON.stringify(e.message).includes('pn reply'));
  });
});
