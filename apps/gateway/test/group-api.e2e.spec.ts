import { nextPhone, Stack } from './support/stack';

/** `/group/*` through HTTP, real Baileys against the simulator's groups. */
describe('group API (HTTP → worker → Baileys → simulator)', () => {
  const stack = new Stack();
  let token: string;
  let owner: string;
  let friend: string;
  let other: string;

  const call = (method: 'GET' | 'POST', path: string, body?: unknown) => stack.gw.call(method, path, { token, body });
  const simGroup = (jid: string) =>
    stack.control<{ inviteCode: string; subject: string; participants: Array<{ phone: string; role: string | null }> }>(
      'GET',
      `/sim/groups/${encodeURIComponent(jid)}`,
    );

  beforeAll(async () => {
    await stack.start();
    ({ token, phone: owner } = await stack.connectedInstance('groups-api'));
    friend = nextPhone('5583');
    other = nextPhone('5584');
    await stack.control('POST', '/sim/accounts', { phone: friend, name: 'Friend' });
    await stack.control('POST', '/sim/accounts', { phone: other, name: 'Other' });
  }, 60_000);
  afterAll(() => stack.stop());

  describe('POST /group/create', () => {
    it('should create the group with the instance as super admin and answer the Group object with numbers and LIDs', async () => {
      const { status, body } = await call('POST', '/group/create', { name: 'Suporte VIP', participants: [friend, `+${other}`] });
      expect(status).toBe(200);
      expect(body).toMatchObject({
        Name: 'Suporte VIP',
        IsLocked: false,
        IsAnnounce: false,
        IsJoinApprovalRequired: false,
        MemberAddMode: 'admin_add',
        OwnerIsAdmin: true,
      });
      expect(body.JID).toMatch(/^\d+@g\.us$/);
      expect(body.OwnerPN).toBe(`${owner}@s.whatsapp.net`);
      const phones = body.Participants.map((participant: { PhoneNumber: string }) => participant.PhoneNumber).sort();
      expect(phones).toEqual([owner, friend, other].map((phone) => `${phone}@s.whatsapp.net`).sort());
      for (const participant of body.Participants) expect(participant.LID).toMatch(/@lid$/);
      const me = body.Participants.find((participant: { PhoneNumber: string }) => participant.PhoneNumber === `${owner}@s.whatsapp.net`);
      expect(me).toMatchObject({ IsAdmin: true, IsSuperAdmin: true });
      // WhatsApp (the simulator) has it, with the same members.
      const group = await simGroup(body.JID);
      expect(group.subject).toBe('Suporte VIP');
      expect(group.participants.map((participant) => participant.phone).sort()).toEqual([owner, friend, other].sort());
    });

    it('should refuse a body without a name or participants, or with a participant that is no number', async () => {
      expect(await call('POST', '/group/create', { participants: [friend] })).toEqual({ status: 400, body: { error: 'name is required' } });
      expect(await call('POST', '/group/create', { name: 'x' })).toEqual({ status: 400, body: { error: 'participants is required' } });
      expect(await call('POST', '/group/create', { name: 'x', participants: [] })).toMatchObject({ status: 400 });
      expect(await call('POST', '/group/create', { name: 'x', participants: ['not a phone'] })).toEqual({
        status: 400,
        body: { error: 'Could not parse phone: not a phone' },
      });
    });
  });

  describe('POST /group/info', () => {
    let groupJid: string;

    beforeAll(async () => {
      groupJid = (await call('POST', '/group/create', { name: 'Info group', participants: [friend] })).body.JID;
    });

    it('should answer the group with its invite link and pending requests for an admin', async () => {
      const { status, body } = await call('POST', '/group/info', { groupjid: groupJid, getInviteLink: true, getRequestsParticipants: true, force: true });
      expect(status).toBe(200);
      const { inviteCode } = await simGroup(groupJid);
      expect(body).toMatchObject({ JID: groupJid, Name: 'Info group', invite_link: `https://chat.whatsapp.com/${inviteCode}`, request_participants: '' });
      expect(body.Participants).toHaveLength(2);
      expect(body).not.toHaveProperty('id');
    });

    it('should leave the members out with noparticipants, and take the group id without @g.us or as groupJid', async () => {
      const { body } = await call('POST', '/group/info', { groupjid: groupJid.replace('@g.us', ''), noparticipants: true });
      expect(body).toMatchObject({ JID: groupJid, Participants: [], ParticipantCount: 2 });
      expect(body).not.toHaveProperty('invite_link');
      expect((await call('POST', '/group/info', { groupJid })).body.JID).toBe(groupJid);
    });

    it('should answer a member that is no admin the group without the admin-only link', async () => {
      const theirs = await stack.control<{ jid: string }>('POST', '/sim/groups', { creator: friend, subject: 'Their group', participants: [owner] });
      const { status, body } = await call('POST', '/group/info', { groupjid: theirs.jid, getInviteLink: true });
      expect(status).toBe(200);
      expect(body).toMatchObject({ JID: theirs.jid, OwnerIsAdmin: false, OwnerCanSendMessage: true, invite_link: '' });
    });

    it('should answer 404 for a group that does not exist or that the instance is not in, and 400 without groupjid', async () => {
      const missing = await call('POST', '/group/info', { groupjid: '120363000000000001@g.us' });
      expect(missing.status).toBe(404);
      expect(missing.body.error).toMatch(/group not found/);
      const elsewhere = await stack.control<{ jid: string }>('POST', '/sim/groups', { creator: friend, subject: 'Not ours', participants: [other] });
      expect((await call('POST', '/group/info', { groupjid: elsewhere.jid })).status).toBe(404);
      expect(await call('POST', '/group/info', {})).toEqual({ status: 400, body: { error: 'groupjid is required' } });
      expect(await call('POST', '/group/info', { groupjid: 'nope' })).toEqual({ status: 400, body: { error: 'groupjid must be a group JID (digits@g.us)' } });
    });
  });

  describe('GET|POST /group/list', () => {
    it('should list every group the instance is in, with or without members', async () => {
      const { status, body } = await call('GET', '/group/list');
      expect(status).toBe(200);
      const names = body.groups.map((group: { Name: string }) => group.Name);
      expect(names).toEqual(expect.arrayContaining(['Suporte VIP', 'Info group', 'Their group']));
      expect(names).not.toContain('Not ours');
      expect(body.groups.every((group: { Participants: unknown[] }) => group.Participants.length > 0)).toBe(true);
      const bare = await call('GET', '/group/list?force=true&noparticipants=true');
      expect(bare.body.groups.every((group: { Participants: unknown[] }) => group.Participants.length === 0)).toBe(true);
    });

    it('should page and search with POST', async () => {
      const first = await call('POST', '/group/list', { limit: 1, offset: 0, noParticipants: true });
      expect(first.status).toBe(200);
      expect(first.body.groups).toHaveLength(1);
      expect(first.body.pagination).toEqual({ totalRecords: 3, limit: 1, offset: 0 });
      const found = await call('POST', '/group/list', { search: 'suporte' });
      expect(found.body.groups.map((group: { Name: string }) => group.Name)).toEqual(['Suporte VIP']);
      expect(found.body.pagination).toEqual({ totalRecords: 1, limit: 50, offset: 0 });
      expect((await call('POST', '/group/list', { limit: 0 })).status).toBe(400);
    });
  });
});
