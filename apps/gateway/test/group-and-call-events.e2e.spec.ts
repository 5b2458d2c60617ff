import { nextPhone, Stack, waitFor } from './support/stack';

/** `groups` and `call` events from what simulated phones do. */
describe('groups and call events (simulated phones → Baileys → outbox)', () => {
  const stack = new Stack();
  let owner: string;
  let admin: string;
  let newcomer: string;

  const events = (type: string) =>
    stack.db.dataSource.query(`SELECT payload FROM outbox_events WHERE event_type = $1 ORDER BY id`, [type]).then((rows: Array<{ payload: Record<string, any> }>) => rows.map((row) => row.payload));

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
    const joined = await waitFor(() => events('groups'), (list) => list.some((event) => event.event.Join?.includes(`${newcomer}@s.whatsapp.net`)), 15_000, 'groups event');
    const event = joined.find((entry) => entry.event.Join?.includes(`${newcomer}@s.whatsapp.net`))!;
    expect(event).toMatchObject({ EventType: 'groups', type: 'Group', event: { JID: group.jid, Notify: 'Clientes VIP', SenderPN: `${admin}@s.whatsapp.net`, Leave: null } });
    expect(event.event.JoinLid[0]).toMatch(/@lid$/);
    await stack.control('POST', `/sim/groups/${encodeURIComponent(group.jid)}/participants`, { actor: admin, action: 'remove', participants: [newcomer] });
    await waitFor(() => events('groups'), (list) => list.some((event) => event.event.Leave?.includes(`${newcomer}@s.whatsapp.net`)), 15_000, 'leave event');
  });

  it('should announce an incoming call and how it ended', async () => {
    const call = await stack.control<{ id: string }>('POST', `/sim/accounts/${admin}/call`, { to: owner, video: true });
    await waitFor(() => events('call'), (list) => list.some((event) => event.event.id === call.id && event.event.status === 'offer'), 15_000, 'call offer event');
    await stack.control('POST', `/sim/calls/${call.id}/end`, { reason: 'timeout' });
    const list = await waitFor(() => events('call'), (entries) => entries.filter((event) => event.event.id === call.id).length >= 2, 15_000, 'call end event');
    const offer = list.find((event) => event.event.id === call.id)!;
    expect(offer).toMatchObject({ EventType: 'call', event: { from: `${admin}@s.whatsapp.net`, isVideo: true, isGroup: false } });
  });
});
