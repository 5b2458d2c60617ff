import type { WASocket } from '@whiskeysockets/baileys';
import { startSimulator } from '../src';
import type { RunningSimulator } from '../src';
import { endSocket, getJson, postJson, provisionAndConnect, sleep, trustSimulator, waitFor } from './helpers';

jest.setTimeout(30_000);

const GATEWAY = '5511900000601';
const CONTACT = '5511988880601';

describe('presence and calls', () => {
  let running: RunningSimulator;
  let sock: WASocket;
  let contactLid: string;

  beforeAll(async () => {
    running = await startSimulator();
    trustSimulator(running);
    await postJson(running, '/sim/accounts', { phone: GATEWAY });
    contactLid = (await postJson<{ lid: string }>(running, '/sim/accounts', { phone: CONTACT, name: 'Rita' })).body.lid;
    sock = (await provisionAndConnect(running, GATEWAY)).sock;
  });

  afterAll(async () => {
    endSocket(sock);
    await running.stop();
  });

  it('should report presence after subscribing and forward typing indicators', async () => {
    const available = waitFor(sock, 'presence.update', (u) => (u.presences[`${CONTACT}@s.whatsapp.net`]?.lastKnownPresence === 'available' ? u : undefined));
    await sock.presenceSubscribe(`${CONTACT}@s.whatsapp.net`);
    await sleep(50);
    await postJson(running, `/sim/accounts/${CONTACT}/presence`, { type: 'available' });
    await available;
    const typing = waitFor(sock, 'presence.update', (u) => (u.presences[contactLid]?.lastKnownPresence === 'composing' ? u : undefined));
    await postJson(running, `/sim/accounts/${CONTACT}/presence`, { type: 'composing', to: GATEWAY });
    expect((await typing).id).toBe(contactLid);
  });

  it('should ring the linked device and record its rejection', async () => {
    const ringing = waitFor(sock, 'call', (calls) => calls.find((c) => c.status === 'offer'));
    const offer = await postJson<{ id: string }>(running, `/sim/accounts/${CONTACT}/call`, { to: GATEWAY, video: true });
    const call = await ringing;
    expect(call.id).toBe(offer.body.id);
    expect(call.isVideo).toBe(true);
    expect(call.callerPn).toBe(`${CONTACT}@s.whatsapp.net`);
    await sock.rejectCall(call.id, call.from);
    await sleep(50);
    const calls = await getJson<Array<{ id: string; status: string }>>(running, `/sim/accounts/${CONTACT}/calls`);
    expect(calls.body.find((c) => c.id === offer.body.id)?.status).toBe('reject');
  });

  it('should report a missed call when the phone gives up', async () => {
    const missed = waitFor(sock, 'call', (calls) => calls.find((c) => c.status === 'timeout'));
    await postJson(running, `/sim/accounts/${CONTACT}/call`, { to: GATEWAY, timeoutMs: 100 });
    expect((await missed).from).toBe(contactLid);
  });
});
