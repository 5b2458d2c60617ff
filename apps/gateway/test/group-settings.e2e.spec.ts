import { groupsEventOf } from './support/outbox-events';
import { nextPhone, Stack } from './support/stack';

type SimGroup = { jid: string; subject: string; description?: string; announce: boolean; locked: boolean };

/** A group's name, description and settings through HTTP, real Baileys against the simulator's groups. */
describe('group settings API (HTTP → worker → Baileys → simulator)', () => {
  const stack = new Stack();
  let token: string;
  let owner: string;
  let friend: string;
  let mine: string;
  let theirs: SimGroup;
  const missing = '120363000000000009@g.us';

  const call = (method: 'GET' | 'POST', path: string, body?: unknown) => stack.gw.call(method, path, { token, body });
  const simGroup = (jid: string) => stack.control<SimGroup>('GET', `/sim/groups/${encodeURIComponent(jid)}`);
  const eventOf = (groupJid: string, match: (event: Record<string, any>) => boolean, what: string) => groupsEventOf(stack, groupJid, match, what);
  const info = async (jid: string) => (await call('POST', '/group/info', { groupjid: jid })).body;

  beforeAll(async () => {
    await stack.start();
    ({ token, phone: owner } = await stack.connectedInstance('groups-settings'));
    friend = nextPhone('5588');
    await stack.control('POST', '/sim/accounts', { phone: friend, name: 'Friend' });
    mine = (await call('POST', '/group/create', { name: 'Configurações', participants: [friend] })).body.JID;
    // The instance is a plain member of a group whose info only admins edit.
    theirs = await stack.control<SimGroup>('POST', '/sim/groups', { creator: friend, subject: 'Só admins', participants: [owner] });
    await stack.control('POST', `/sim/groups/${encodeURIComponent(theirs.jid)}/settings`, { locked: true });
  }, 60_000);
  afterAll(() => stack.stop());

  /** A non-admin is a 403, a group that does not exist a 404. */
  const expectRefusals = async (path: string, body: Record<string, unknown>) => {
    const denied = await call('POST', path, { ...body, groupjid: theirs.jid });
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ error: expect.stringMatching(/not an admin/) });
    expect((await call('POST', path, { ...body, groupjid: missing })).status).toBe(404);
  };

  describe('POST /group/updateName', () => {
    it('should rename the group and answer it', async () => {
      const { status, body } = await call('POST', '/group/updateName', { groupjid: mine, name: '  Novo nome  ' });
      expect(status).toBe(200);
      expect(body).toMatchObject({ response: 'Group name updated successfully', group: { JID: mine, Name: 'Novo nome' }, needs_refresh: false });
      expect((await simGroup(mine)).subject).toBe('Novo nome');
      expect(await eventOf(mine, (event) => event.Name?.Name === 'Novo nome', 'rename event')).toMatchObject({
        EventType: 'groups',
        type: 'Group',
        event: { JID: mine, Name: { Name: 'Novo nome', NameSetByPN: `${owner}@s.whatsapp.net` }, Topic: null, Join: null },
      });
    });

    it('should answer 400 naming the field, 403 for a non-admin of a locked group, 404 for a missing group', async () => {
      expect(await call('POST', '/group/updateName', { groupjid: mine })).toEqual({ status: 400, body: { error: 'name is required' } });
      expect(await call('POST', '/group/updateName', { groupjid: mine, name: 'x'.repeat(101) })).toEqual({
        status: 400,
        body: { error: 'name must be at most 100 characters' },
      });
      expect((await call('POST', '/group/updateName', { name: 'Sem grupo' })).status).toBe(400);
      await expectRefusals('/group/updateName', { name: 'Tentativa' });
      expect((await simGroup(theirs.jid)).subject).toBe('Só admins');
    });
  });

  describe('POST /group/updateDescription', () => {
    it('should set the description and remove it with an empty one', async () => {
      const set = await call('POST', '/group/updateDescription', { groupjid: mine, description: 'Grupo oficial de suporte' });
      expect(set.status).toBe(200);
      expect(set.body).toMatchObject({ response: 'Group description updated successfully', group: { JID: mine, Topic: 'Grupo oficial de suporte' } });
      expect((await simGroup(mine)).description).toBe('Grupo oficial de suporte');
      const cleared = await call('POST', '/group/updateDescription', { groupjid: mine, description: '' });
      expect(cleared.status).toBe(200);
      expect(cleared.body.group.Topic).toBe('');
      expect((await simGroup(mine)).description).toBeUndefined();
      await eventOf(mine, (event) => event.Topic?.Topic === 'Grupo oficial de suporte', 'description event');
      await eventOf(mine, (event) => event.Topic?.TopicDeleted === true, 'description removed event');
    });

    it('should answer 400 naming the field, 403 and 404', async () => {
      expect(await call('POST', '/group/updateDescription', { groupjid: mine })).toEqual({ status: 400, body: { error: 'description is required' } });
      expect(await call('POST', '/group/updateDescription', { groupjid: mine, description: 5 })).toEqual({
        status: 400,
        body: { error: 'description must be a string' },
      });
      await expectRefusals('/group/updateDescription', { description: 'Tentativa' });
    });
  });

  describe('POST /group/updateAnnounce', () => {
    it('should let only admins send, then everyone again', async () => {
      const on = await call('POST', '/group/updateAnnounce', { groupjid: mine, announce: true });
      expect(on).toMatchObject({ status: 200, body: { response: 'Group announce enabled successfully', group: { JID: mine, IsAnnounce: true } } });
      expect((await simGroup(mine)).announce).toBe(true);
      const off = await call('POST', '/group/updateAnnounce', { groupjid: mine, announce: false });
      expect(off).toMatchObject({ status: 200, body: { response: 'Group announce disabled successfully', group: { IsAnnounce: false } } });
      expect((await simGroup(mine)).announce).toBe(false);
      await eventOf(mine, (event) => event.Announce?.IsAnnounce === true, 'announce on event');
      await eventOf(mine, (event) => event.Announce?.IsAnnounce === false, 'announce off event');
    });

    it('should answer 400 naming the field, 403 and 404', async () => {
      expect(await call('POST', '/group/updateAnnounce', { groupjid: mine })).toEqual({ status: 400, body: { error: 'announce is required' } });
      expect(await call('POST', '/group/updateAnnounce', { groupjid: mine, announce: 'yes' })).toEqual({
        status: 400,
        body: { error: 'announce must be a boolean' },
      });
      await expectRefusals('/group/updateAnnounce', { announce: true });
    });
  });

  describe('POST /group/updateLocked', () => {
    it('should let only admins edit the group info, then everyone again', async () => {
      const on = await call('POST', '/group/updateLocked', { groupjid: mine, locked: true });
      expect(on).toMatchObject({ status: 200, body: { response: 'Group lock status changed successfully', group: { JID: mine, IsLocked: true } } });
      expect((await simGroup(mine)).locked).toBe(true);
      const off = await call('POST', '/group/updateLocked', { groupjid: mine, locked: false });
      expect(off).toMatchObject({ status: 200, body: { group: { IsLocked: false } } });
      expect((await simGroup(mine)).locked).toBe(false);
      await eventOf(mine, (event) => event.Locked?.IsLocked === true, 'locked event');
      await eventOf(mine, (event) => event.Locked?.IsLocked === false, 'unlocked event');
    });

    it('should answer 400 naming the field, 403 and 404', async () => {
      expect(await call('POST', '/group/updateLocked', { groupjid: mine, locked: 1 })).toEqual({ status: 400, body: { error: 'locked must be a boolean' } });
      await expectRefusals('/group/updateLocked', { locked: false });
      expect((await simGroup(theirs.jid)).locked).toBe(true);
    });
  });

  describe('POST /group/updateMemberAddMode', () => {
    it('should let every member add members, then admins only', async () => {
      const all = await call('POST', '/group/updateMemberAddMode', { groupjid: mine, MemberAddMode: 'all_member_add' });
      expect(all).toMatchObject({
        status: 200,
        body: { response: 'Group member add mode set to all_member_add successfully', group: { JID: mine, MemberAddMode: 'all_member_add' } },
      });
      expect((await info(mine)).MemberAddMode).toBe('all_member_add');
      const admins = await call('POST', '/group/updateMemberAddMode', { groupjid: mine, MemberAddMode: 'admin_add' });
      expect(admins).toMatchObject({ status: 200, body: { group: { MemberAddMode: 'admin_add' } } });
    });

    it('should answer 400 naming the field, 403 and 404', async () => {
      expect(await call('POST', '/group/updateMemberAddMode', { groupjid: mine, MemberAddMode: 'everyone' })).toEqual({
        status: 400,
        body: { error: 'MemberAddMode must be one of admin_add, all_member_add' },
      });
      await expectRefusals('/group/updateMemberAddMode', { MemberAddMode: 'all_member_add' });
    });
  });

  describe('POST /group/ephemeral', () => {
    it('should turn disappearing messages on by label or seconds, and off', async () => {
      const day = await call('POST', '/group/ephemeral', { groupjid: mine, duration: '1d' });
      expect(day).toMatchObject({
        status: 200,
        body: {
          response: 'Ephemeral timer updated successfully',
          ephemeral: { enabled: true, seconds: 86400, label: '1d' },
          group: { JID: mine, IsEphemeral: true, DisappearingTimer: 86400 },
          needs_refresh: false,
        },
      });
      const week = await call('POST', '/group/ephemeral', { groupjid: mine, duration: 604800 });
      expect(week.body).toMatchObject({ ephemeral: { enabled: true, seconds: 604800, label: '7d' }, group: { DisappearingTimer: 604800 } });
      expect((await info(mine)).DisappearingTimer).toBe(604800);
      const off = await call('POST', '/group/ephemeral', { groupjid: mine, duration: 'off' });
      expect(off.body).toMatchObject({ ephemeral: { enabled: false, seconds: 0, label: 'off' }, group: { IsEphemeral: false, DisappearingTimer: 0 } });
    });

    it('should answer 400 naming the field, 403 for a non-admin of a locked group and 404', async () => {
      expect(await call('POST', '/group/ephemeral', { groupjid: mine })).toEqual({ status: 400, body: { error: 'duration is required' } });
      for (const duration of ['2d', 3600, true, { d: 1 }]) {
        const bad = await call('POST', '/group/ephemeral', { groupjid: mine, duration });
        expect(bad.status).toBe(400);
        expect(bad.body.error).toMatch(/^duration must be one of/);
      }
      await expectRefusals('/group/ephemeral', { duration: '7d' });
    });
  });
});
