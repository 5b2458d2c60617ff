import { nextPhone, sleep, Stack, waitFor } from './support/stack';

type SimGroup = { jid: string; subject: string; reads: number };

/** `/group/info` and `/group/list` answer from the worker's groups cache, kept fresh by WhatsApp's group notifications; `force` reads WhatsApp. */
describe('groups cache (HTTP → worker → Baileys → simulator)', () => {
  const stack = new Stack();
  let token: string;
  let owner: string;
  let friend: string;

  const call = (method: 'GET' | 'POST', path: string, body?: unknown) => stack.gw.call(method, path, { token, body });
  const simGroup = (jid: string) => stack.control<SimGroup>('GET', `/sim/groups/${encodeURIComponent(jid)}`);
  const listReads = async () => (await stack.control<{ participating: number }>('GET', `/sim/accounts/${owner}/group-reads`)).participating;
  /**
   * A read count once the worker's own reads (the group's name for its chat, a list after a change) are done:
   * the same in three looks 150 ms apart. A fixed sleep was too short on a loaded machine and too long on a quiet one.
   */
  const settled = async (count: () => Promise<number>): Promise<number> => {
    let last = await count();
    let same = 0;
    for (const deadline = Date.now() + 5_000; same < 2 && Date.now() < deadline;) {
      await sleep(150);
      const now = await count();
      same = now === last ? same + 1 : 0;
      last = now;
    }
    return last;
  };

  beforeAll(async () => {
    await stack.start();
    ({ token, phone: owner } = await stack.connectedInstance('groups-cache'));
    friend = nextPhone('5586');
    await stack.control('POST', '/sim/accounts', { phone: friend, name: 'Friend' });
  }, 60_000);
  afterAll(() => stack.stop());

  it('should answer /group/info from the cache until a notification about the group, and read WhatsApp with force', async () => {
    const group = await stack.control<SimGroup>('POST', '/sim/groups', { creator: friend, subject: 'Antes', participants: [owner] });
    const first = await call('POST', '/group/info', { groupjid: group.jid });
    expect(first.body.Name).toBe('Antes');
    // Reads of the worker's own (the group's name for its chat) are done before counting.
    const reads = await settled(async () => (await simGroup(group.jid)).reads);
    expect((await call('POST', '/group/info', { groupjid: group.jid })).body).toEqual(first.body);
    expect((await call('POST', '/group/info', { groupjid: group.jid, noparticipants: true })).body.Name).toBe('Antes');
    expect((await simGroup(group.jid)).reads).toBe(reads);

    // Another member renames it: the w:gp2 notification drops the cached group, the next read asks WhatsApp.
    await stack.control('POST', `/sim/groups/${encodeURIComponent(group.jid)}/subject`, { actor: friend, subject: 'Depois' });
    await waitFor(
      () => call('POST', '/group/info', { groupjid: group.jid }),
      (reply) => reply.body.Name === 'Depois',
      10_000,
      'the renamed group',
    );
    const afterRename = await settled(async () => (await simGroup(group.jid)).reads);
    expect(afterRename).toBeGreaterThan(reads);

    expect((await call('POST', '/group/info', { groupjid: group.jid, force: true })).body.Name).toBe('Depois');
    expect((await simGroup(group.jid)).reads).toBe(afterRename + 1);
    expect((await call('POST', '/group/info', { groupjid: group.jid })).body.Name).toBe('Depois');
    expect((await simGroup(group.jid)).reads).toBe(afterRename + 1);
  });

  it('should answer /group/list from the cache, refresh it when the instance is added to a group, and read WhatsApp with force', async () => {
    const listed = await call('GET', '/group/list?force=true');
    expect(listed.status).toBe(200);
    const reads = await settled(listReads);
    const again = await call('POST', '/group/list', { limit: 100 });
    expect(again.body.pagination.totalRecords).toBe(listed.body.groups.length);
    expect(await listReads()).toBe(reads);

    // Added to a new group by someone else: the list follows without force.
    const added = await stack.control<SimGroup>('POST', '/sim/groups', { creator: friend, subject: 'Novo grupo', participants: [owner] });
    const grown = await waitFor(
      () => call('GET', '/group/list'),
      (reply) => reply.body.groups.some((entry: any) => entry.JID === added.jid),
      10_000,
      'the new group in the list',
    );
    expect(grown.body.groups).toHaveLength(listed.body.groups.length + 1);
    expect(await listReads()).toBe(reads + 1);
    await call('GET', '/group/list');
    expect(await listReads()).toBe(reads + 1);
    await call('GET', '/group/list?force=1');
    expect(await listReads()).toBe(reads + 2);

    // Leaving drops it at once; a change the instance makes is seen in the next read.
    expect((await call('POST', '/group/leave', { groupjid: added.jid })).status).toBe(200);
    expect((await call('GET', '/group/list')).body.groups.some((entry: any) => entry.JID === added.jid)).toBe(false);
    const mine = (await call('POST', '/group/create', { name: 'Meu', participants: [friend] })).body.JID;
    expect((await call('GET', '/group/list')).body.groups.some((entry: any) => entry.JID === mine)).toBe(true);
    await call('POST', '/group/updateName', { groupjid: mine, name: 'Meu renomeado' });
    expect((await call('POST', '/group/info', { groupjid: mine })).body.Name).toBe('Meu renomeado');
    expect((await call('GET', '/group/list?force=maybe')).status).toBe(400);
  });
});
