import { nextPhone, Stack, waitFor } from './support/stack';

type SimCall = {
  id: string;
  from: string;
  to: string;
  status: string;
  placedBy?: string;
  keyFor?: string[];
  callKeyLength?: number;
  rejectedBy?: string;
  video: boolean;
};

/** `/call/make` and `/call/reject` through HTTP, real Baileys against the simulator (call offer, terminate and reject stanzas). */
describe('call API (HTTP → worker → Baileys → simulator)', () => {
  const stack = new Stack();
  let instanceId: string;
  let token: string;
  let owner: string;
  let friend: string;
  let other: string;

  const call = (method: 'GET' | 'POST', path: string, body?: unknown) => stack.gw.call(method, path, { token, body });
  const phoneCalls = (phone: string) => stack.control<SimCall[]>('GET', `/sim/accounts/${phone}/calls`);
  const callEvents = () =>
    stack.db.dataSource
      .query(`SELECT payload FROM outbox_events WHERE instance_id = $1 AND event_type = 'call' ORDER BY id`, [instanceId])
      .then((rows: Array<{ payload: { event: { id: string; status: string } } }>) => rows.map((row) => row.payload.event));
  /** The friend's phone rings the instance; resolves once the instance stored the offer. */
  const ring = async (from: string) => {
    const offer = await stack.control<{ id: string }>('POST', `/sim/accounts/${from}/call`, { to: owner });
    await waitFor(callEvents, (events) => events.some((event) => event.id === offer.id && event.status === 'offer'), 15_000, 'call offer stored');
    return offer.id;
  };

  beforeAll(async () => {
    await stack.start();
    ({ id: instanceId, token, phone: owner } = await stack.connectedInstance('calls'));
    friend = nextPhone('5593');
    other = nextPhone('5594');
    await stack.control('POST', '/sim/accounts', { phone: friend, name: 'Amigo' });
    await stack.control('POST', '/sim/accounts', { phone: other, name: 'Outro' });
  }, 60_000);
  afterAll(() => stack.stop());

  it("should ring the contact's phone with a call offer carrying an encrypted call key, and hang up after call_duration", async () => {
    const made = await call('POST', '/call/make', { number: `+${friend}`, call_duration: 1 });
    expect(made).toEqual({
      status: 200,
      body: { response: 'Call successful', callId: expect.stringMatching(/^[0-9A-F]{32}$/), number: `${friend}@s.whatsapp.net`, call_duration: 1 },
    });
    const rung = (
      await waitFor(
        () => phoneCalls(friend),
        (entries) => entries.some((entry) => entry.id === made.body.callId && (entry.callKeyLength !== undefined || entry.status !== 'offer')),
        5_000,
        'the phone read the call key',
      )
    ).find((entry) => entry.id === made.body.callId)!;
    expect(rung).toMatchObject({ from: `${owner}@s.whatsapp.net`, to: `${friend}@s.whatsapp.net`, status: 'offer', placedBy: 'device', video: false });
    expect(rung.keyFor?.length).toBeGreaterThan(0);
    // The phone read its copy of the call key (Signal-encrypted for it, as WhatsApp clients send it).
    expect(rung.callKeyLength).toBe(32);
    const ended = await waitFor(
      () => phoneCalls(friend),
      (entries) => entries.find((entry) => entry.id === made.body.callId)?.status === 'terminate',
      10_000,
      'the call hung up',
    );
    expect(ended.find((entry) => entry.id === made.body.callId)?.status).toBe('terminate');
  });

  it('should ring as a video call when asked, and keep ringing without call_duration', async () => {
    const made = await call('POST', '/call/make', { number: friend, video: true });
    expect(made.status).toBe(200);
    expect(made.body).not.toHaveProperty('call_duration');
    const rung = (
      await waitFor(
        () => phoneCalls(friend),
        (entries) => entries.some((entry) => entry.id === made.body.callId),
        5_000,
        'the phone rang',
      )
    ).find((entry) => entry.id === made.body.callId)!;
    expect(rung).toMatchObject({ status: 'offer', video: true });
    await stack.control('POST', `/sim/calls/${made.body.callId}/end`, {});
  });

  it('should refuse a missing or malformed number, a bad call_duration, and a number not on WhatsApp', async () => {
    expect(await call('POST', '/call/make', {})).toEqual({ status: 400, body: { error: 'missing number in payload' } });
    expect(await call('POST', '/call/make', { number: 'abc' })).toEqual({ status: 400, body: { error: 'invalid number JID' } });
    expect(await call('POST', '/call/make', { number: '120363000000000000@g.us' })).toEqual({ status: 400, body: { error: 'invalid number JID' } });
    for (const call_duration of [0, -1, 601, 1.5, 'soon'])
      expect(await call('POST', '/call/make', { number: friend, call_duration })).toEqual({
        status: 400,
        body: { error: 'invalid call_duration: give whole seconds from 1 to 600' },
      });
    expect(await call('POST', '/call/make', { number: '5599988887777' })).toEqual({ status: 404, body: { error: 'the number is not on WhatsApp' } });
  });

  it('should reject the ringing call (an empty body), as the caller sees it, and say so in the call event', async () => {
    expect(await call('POST', '/call/reject', {})).toEqual({ status: 404, body: { error: 'no ringing call to reject' } });
    const id = await ring(friend);
    expect(await call('POST', '/call/reject', {})).toEqual({ status: 200, body: { response: 'Call rejected', id, number: `${friend}@s.whatsapp.net` } });
    const seen = (await phoneCalls(friend)).find((entry) => entry.id === id)!;
    expect(seen).toMatchObject({ status: 'reject', rejectedBy: `${owner}@s.whatsapp.net` });
    expect((await callEvents()).filter((event) => event.id === id).map((event) => event.status)).toEqual(['offer', 'reject']);
    // Rejected already: no longer ringing.
    expect(await call('POST', '/call/reject', { id })).toEqual({ status: 409, body: { error: 'the call is no longer ringing (reject)' } });
  });

  it('should reject the call of a given number or id, and 404 for calls it does not have', async () => {
    const fromFriend = await ring(friend);
    const fromOther = await ring(other);
    expect(await call('POST', '/call/reject', { number: nextPhone('5595') })).toMatchObject({ status: 404 });
    expect(await call('POST', '/call/reject', { number: friend })).toEqual({
      status: 200,
      body: { response: 'Call rejected', id: fromFriend, number: `${friend}@s.whatsapp.net` },
    });
    expect(await call('POST', '/call/reject', { id: 'NOPE123' })).toEqual({ status: 404, body: { error: 'call not found: NOPE123' } });
    expect(await call('POST', '/call/reject', { number: other, id: fromOther })).toMatchObject({ status: 200, body: { id: fromOther } });
    expect((await phoneCalls(other)).find((entry) => entry.id === fromOther)?.status).toBe('reject');
    expect(await call('POST', '/call/reject', { number: 'abc' })).toEqual({ status: 400, body: { error: 'invalid number' } });
    expect(await call('POST', '/call/reject', { id: 'has spaces' })).toEqual({ status: 400, body: { error: 'invalid call id' } });
  });
});
