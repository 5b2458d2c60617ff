import { capture, keysOf, typesOf } from './support/captures';
import { nextPhone, Stack, waitFor } from './support/stack';

/** `groups` and `call` events from what simulated phones do. */
describe('groups and call events (simulated phones → Baileys → outbox)', () => {
  const stack = new Stack();
  let owner: string;
  let admin: string;
  let newcomer: string;

  const events = (type: string) =>
    stack.db.dataSource
      .query(`SELECT payload FROM outbox_events WHERE event_type = $1 ORDER BY id`, [type])
      .then((rows: Array<{ payload: Record<string, any> }>) => rows.map((row) => row.payload));

  beforeAll(async () => {
    await stack.start();
    ({ phone: owner } = await stack.connectedInstance('groups'));
    admin = nextPhone('5581');
    newcomer = nextPhone('5582');
    await stack.control('POST', '/sim/accounts', { phone: admin, name: 'Admin' });
    await stack.control('POST', '/sim/accounts', { phone: newcomer, name: 'Newcomer' });
  }, 60_000);
  afterAll(() => stack.stop());

  it('should announce who joined a group the instance is in, in the captures’ shape', async () => {
    const group = await stack.control<{ jid: string }>('POST', '/sim/groups', { creator: admin, subject: 'Clientes VIP', participants: [owner] });
    await stack.control('POST', `/sim/groups/${encodeURIComponent(group.jid)}/participants`, { actor: admin, action: 'add', participants: [newcomer] });
    const joined = await waitFor(
      () => events('groups'),
      (list) => list.some((event) => event.event.Join?.includes(`${newcomer}@s.whatsapp.net`)),
      15_000,
      'groups event',
    );
    const event = joined.find((entry) => entry.event.Join?.includes(`${newcomer}@s.whatsapp.net`))!;
    expect(event).toMatchObject({
      EventType: 'groups',
      type: 'Group',
      event: { JID: group.jid, Notify: 'Clientes VIP', SenderPN: `${admin}@s.whatsapp.net`, Leave: null },
    });
    expect(event.event.JoinLid[0]).toMatch(/@lid$/);
    // The capture of a member added by an admin: the same keys (the outbox is jsonb: no key order), values of the same types.
    const reference = capture('groups/join.added.other.json');
    expect(keysOf(event)).toEqual(keysOf(reference).filter((key) => key !== 'BaseUrl' && key !== 'token'));
    expect(keysOf(event.event)).toEqual(keysOf(reference.event));
    expect(typesOf(event.event)).toEqual(typesOf(reference.event));
    await stack.control('POST', `/sim/groups/${encodeURIComponent(group.jid)}/participants`, { actor: admin, action: 'remove', participants: [newcomer] });
    await waitFor(
      () => events('groups'),
      (list) => list.some((event) => event.event.Leave?.includes(`${newcomer}@s.whatsapp.net`)),
      15_000,
      'leave event',
    );
  });

  it('should announce the instance joining a group as JoinedGroup with the whole group, as the capture', async () => {
    const group = await stack.control<{ jid: string }>('POST', '/sim/groups', { creator: admin, subject: 'Equipe Vendas', participants: [newcomer] });
    await stack.control('POST', `/sim/groups/${encodeURIComponent(group.jid)}/participants`, { actor: admin, action: 'add', participants: [owner] });
    const list = await waitFor(
      () => events('groups'),
      (entries) => entries.some((entry) => entry.type === 'JoinedGroup' && entry.event.JID === group.jid),
      15_000,
      'JoinedGroup event',
    );
    const joined = list.find((entry) => entry.type === 'JoinedGroup' && entry.event.JID === group.jid)!;
    // No participant-change event for our own join.
    expect(list.filter((entry) => entry.event.JID === group.jid)).toHaveLength(1);

    const reference = capture('groups/join.link.me.json');
    expect(keysOf(joined)).toEqual(keysOf(reference).filter((key) => key !== 'BaseUrl' && key !== 'token'));
    expect(keysOf(joined.event)).toEqual(keysOf(reference.event));
    expect(keysOf(joined.event.Participants[0])).toEqual(keysOf(reference.event.Participants[0]));
    // Added by an admin (not by link): the sender is the admin, and the reason is empty.
    const { Sender, SenderPN, Reason, Notify, ...rest } = joined.event;
    expect({ Sender, SenderPN, Reason, Notify }).toEqual({
      Sender: `${admin}@s.whatsapp.net`,
      SenderPN: `${admin}@s.whatsapp.net`,
      Reason: '',
      Notify: 'Equipe Vendas',
    });
    const { Sender: _s, SenderPN: _p, Reason: _r, Notify: _n, ...referenceRest } = reference.event;
    expect(typesOf(rest)).toEqual(typesOf(referenceRest));
    expect(joined).toMatchObject({
      EventType: 'groups',
      type: 'JoinedGroup',
      instanceName: 'groups',
      owner,
      event: { JID: group.jid, Name: 'Equipe Vendas', ParticipantCount: 3 },
    });
    const phones = joined.event.Participants.map((participant: { PhoneNumber: string }) => participant.PhoneNumber).sort();
    expect(phones).toEqual([admin, newcomer, owner].map((phone) => `${phone}@s.whatsapp.net`).sort());
    const creator = joined.event.Participants.find((participant: { PhoneNumber: string }) => participant.PhoneNumber === `${admin}@s.whatsapp.net`);
    expect(creator).toMatchObject({ IsAdmin: true, LID: expect.stringMatching(/@lid$/) });
    expect(joined.event.GroupCreated).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  it('should announce an incoming call and how it ended', async () => {
    const call = await stack.control<{ id: string }>('POST', `/sim/accounts/${admin}/call`, { to: owner, video: true });
    await waitFor(
      () => events('call'),
      (list) => list.some((event) => event.event.id === call.id && event.event.status === 'offer'),
      15_000,
      'call offer event',
    );
    await stack.control('POST', `/sim/calls/${call.id}/end`, { reason: 'timeout' });
    const list = await waitFor(
      () => events('call'),
      (entries) => entries.filter((event) => event.event.id === call.id).length >= 2,
      15_000,
      'call end event',
    );
    const offer = list.find((event) => event.event.id === call.id)!;
    expect(offer).toMatchObject({ EventType: 'call', event: { from: `${admin}@s.whatsapp.net`, isVideo: true, isGroup: false } });
  });
});
