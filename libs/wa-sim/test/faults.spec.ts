import { proto } from '@whiskeysockets/baileys';
import type { WAMessage, WAMessageUpdate, WASocket } from '@whiskeysockets/baileys';
import { startSimulator } from '../src';
import type { RunningSimulator } from '../src';
import { connect, endSocket, getJson, postJson, provisionAndConnect, reconnect, sleep, trustSimulator, waitFor, waitForClose } from './helpers';
import type { MemoryAuth } from './helpers';

jest.setTimeout(30_000);

const GATEWAY = '5511900000201';
const CONTACT = '5511988880201';

describe('faults', () => {
  let running: RunningSimulator;
  let auth: MemoryAuth;
  let sock: WASocket;
  let deviceJid: string;

  /** Reconnects the shared socket with its stored auth (no pairing). */
  async function relogin(): Promise<void> {
    endSocket(sock);
    sock = await reconnect(running, auth);
  }

  beforeAll(async () => {
    running = await startSimulator();
    trustSimulator(running);
    await postJson(running, '/sim/accounts', { phone: GATEWAY, name: 'Gateway' });
    await postJson(running, '/sim/accounts', { phone: CONTACT, name: 'Joao' });
    ({ sock, auth } = await provisionAndConnect(running, GATEWAY));
    deviceJid = sock.user!.id;
  });

  afterAll(async () => {
    endSocket(sock);
    await running.stop();
  });

  afterEach(async () => {
    await fetch(`${running.controlUrl}/sim/faults`, { method: 'DELETE' });
  });

  it('should drop the connection (428) and let the client log in again', async () => {
    const closed = waitForClose(sock);
    expect((await postJson(running, `/sim/devices/${encodeURIComponent(deviceJid)}/drop`, {})).status).toBe(200);
    expect(await closed).toBe(428);
    await relogin();
  });

  it('should replace the session with stream error conflict (440)', async () => {
    const closed = waitForClose(sock);
    await postJson(running, '/sim/faults', { kind: 'conflict', device: deviceJid });
    expect(await closed).toBe(440);
    await relogin();
  });

  it('should send 440 to the old socket when the same device logs in twice', async () => {
    const closed = waitForClose(sock);
    const second = await reconnect(running, auth);
    expect(await closed).toBe(440);
    sock = second;
  });

  it('should ask for a restart with stream error 515', async () => {
    const closed = waitForClose(sock);
    await postJson(running, '/sim/faults', { kind: 'stream-error', device: deviceJid, code: 515 });
    expect(await closed).toBe(515);
    await relogin();
  });

  it('should fail an ack with error 463 and mark the message as failed', async () => {
    await postJson(running, '/sim/faults', { kind: 'ack', mode: 'error', error: '463', device: deviceJid, count: 1 });
    // The error status arrives as messages.update, or merged into the 'append' upsert when the
    // nack lands while Baileys still buffers the send (event-buffer consolidation).
    const failed = new Promise<string[]>((resolve) => {
      sock.ev.on('messages.update', (updates: WAMessageUpdate[]) => {
        const hit = updates.find((u) => u.update.status === proto.WebMessageInfo.Status.ERROR);
        if (hit) resolve(hit.update.messageStubParameters ?? []);
      });
      sock.ev.on('messages.upsert', ({ messages }: { messages: WAMessage[] }) => {
        const hit = messages.find((m) => m.key.fromMe && m.status === proto.WebMessageInfo.Status.ERROR);
        if (hit) resolve(hit.messageStubParameters ?? []);
      });
    });
    await sock.sendMessage(`${CONTACT}@s.whatsapp.net`, { text: 'this one bounces' });
    // Baileys reads 463 as "sender reachout timelocked" and adds its own explanation.
    expect((await failed)[0]).toBe('463');
    const inbox = await getJson<unknown[]>(running, `/sim/accounts/${CONTACT}/inbox`);
    expect(JSON.stringify(inbox.body)).not.toContain('this one bounces');
  });

  it('should garble a delivery, get a retry receipt and resend', async () => {
    await postJson(running, '/sim/faults', { kind: 'corrupt', device: deviceJid, count: 1 });
    const received = waitFor(
      sock,
      'messages.upsert',
      ({ messages }: { messages: WAMessage[] }) => messages.find((m) => m.message?.conversation === 'survives a retry'),
      15_000,
    );
    const sent = await postJson<{ id: string }>(running, `/sim/accounts/${CONTACT}/send`, { to: GATEWAY, text: 'survives a retry' });
    const msg = await received;
    expect(msg.key.id).toBe(sent.body.id);
    const outbox = await getJson<Array<{ id: string; receipts: Array<{ type: string }> }>>(running, `/sim/accounts/${CONTACT}/outbox`);
    expect(outbox.body.find((e) => e.id === sent.body.id)?.receipts.some((r) => r.type === 'retry')).toBe(true);
  });

  it('should let a Baileys sender honour a retry receipt from another Baileys device', async () => {
    await postJson(running, '/sim/accounts', { phone: '5511900000299', name: 'Other gateway' });
    const { sock: other } = await provisionAndConnect(running, '5511900000299');
    try {
      await postJson(running, '/sim/faults', { kind: 'corrupt', device: other.user!.id, count: 1 });
      const received = waitFor(other, 'messages.upsert', ({ messages }) => messages.find((m) => m.message?.extendedTextMessage?.text === 'retry me'), 15_000);
      await sock.sendMessage('5511900000299@s.whatsapp.net', { text: 'retry me' });
      const msg = await received;
      expect(msg.key.remoteJidAlt).toBe(`${GATEWAY}@s.whatsapp.net`);
    } finally {
      endSocket(other);
    }
  });

  it('should queue messages while the device is offline and deliver them on login', async () => {
    const closed = waitForClose(sock);
    await postJson(running, `/sim/devices/${encodeURIComponent(deviceJid)}/drop`, {});
    await closed;
    const sent = await postJson<{ id: string }>(running, `/sim/accounts/${CONTACT}/send`, { to: GATEWAY, text: 'sent while you were away' });
    const next = connect(running, auth);
    const received = waitFor(next, 'messages.upsert', ({ messages }: { messages: WAMessage[] }) => messages.find((m) => m.key.id === sent.body.id));
    sock = next;
    const msg = await received;
    expect(msg.message?.conversation).toBe('sent while you were away');
  });

  it('should refuse a login with <failure reason=403>', async () => {
    await postJson(running, '/sim/faults', { kind: 'reject-login', reason: 403, device: deviceJid, count: 1 });
    endSocket(sock);
    const next = connect(running, auth);
    expect(await waitForClose(next)).toBe(403);
    await relogin();
  });

  it('should restart the server: every socket closes, stored auth logs straight back in', async () => {
    const closed = waitForClose(sock);
    const res = await postJson(running, '/sim/restart', { downMs: 200 });
    expect(res.status).toBe(200);
    expect(await closed).toBe(428);
    await relogin();
    const devices = await getJson<Array<{ jid: string; connected: boolean }>>(running, `/sim/devices?phone=${GATEWAY}`);
    expect(devices.body.find((d) => d.jid === deviceJid)?.connected).toBe(true);
  });

  it('should close with 408 when keepalive pings go unanswered', async () => {
    endSocket(sock);
    await postJson(running, '/sim/faults', { kind: 'ignore-pings', device: deviceJid });
    const next = await reconnect(running, auth, { keepAliveIntervalMs: 200 });
    expect(await waitForClose(next, 10_000)).toBe(408);
    await fetch(`${running.controlUrl}/sim/faults`, { method: 'DELETE' });
    await relogin();
  });

  it('should log the device out from the server side (401)', async () => {
    const closed = waitForClose(sock);
    await postJson(running, `/sim/devices/${encodeURIComponent(deviceJid)}/logout`, {});
    expect(await closed).toBe(401);
    await sleep(50);
    const next = connect(running, auth);
    expect(await waitForClose(next)).toBe(401);
    sock = next;
  });
});
