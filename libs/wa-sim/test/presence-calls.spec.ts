import { getJson, postJson, sleep, waitFor } from './helpers';
import { linkedPhoneWithContact } from './linked-phone';

jest.setTimeout(30_000);

const GATEWAY = '5511900000601';
const CONTACT = '5511988880601';

describe('presence and calls', () => {
  const linked = linkedPhoneWithContact(GATEWAY, CONTACT);

  it('should report presence after subscribing and forward typing indicators', async () => {
    const available = waitFor(linked.sock, 'presence.update', (u) =>
      u.presences[`${CONTACT}@s.whatsapp.net`]?.lastKnownPresence === 'available' ? u : undefined,
    );
    await linked.sock.presenceSubscribe(`${CONTACT}@s.whatsapp.net`);
    await sleep(50);
    await postJson(linked.running, `/sim/accounts/${CONTACT}/presence`, { type: 'available' });
    await available;
    const typing = waitFor(linked.sock, 'presence.update', (u) => (u.presences[linked.contactLid]?.lastKnownPresence === 'composing' ? u : undefined));
    await postJson(linked.running, `/sim/accounts/${CONTACT}/presence`, { type: 'composing', to: GATEWAY });
    expect((await typing).id).toBe(linked.contactLid);
  });

  it('should ring the linked device and record its rejection', async () => {
    const ringing = waitFor(linked.sock, 'call', (calls) => calls.find((c) => c.status === 'offer'));
    const offer = await postJson<{ id: string }>(linked.running, `/sim/accounts/${CONTACT}/call`, { to: GATEWAY, video: true });
    const call = await ringing;
    expect(call.id).toBe(offer.body.id);
    expect(call.isVideo).toBe(true);
    expect(call.callerPn).toBe(`${CONTACT}@s.whatsapp.net`);
    await linked.sock.rejectCall(call.id, call.from);
    await sleep(50);
    const calls = await getJson<Array<{ id: string; status: string }>>(linked.running, `/sim/accounts/${CONTACT}/calls`);
    expect(calls.body.find((c) => c.id === offer.body.id)?.status).toBe('reject');
  });

  it('should report a missed call when the phone gives up', async () => {
    const missed = waitFor(linked.sock, 'call', (calls) => calls.find((c) => c.status === 'timeout'));
    await postJson(linked.running, `/sim/accounts/${CONTACT}/call`, { to: GATEWAY, timeoutMs: 100 });
    expect((await missed).from).toBe(linked.contactLid);
  });
});
