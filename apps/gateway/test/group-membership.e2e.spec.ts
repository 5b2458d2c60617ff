import { groupsEventOf, outboxPayloads } from './support/outbox-events';
import { nextPhone, Stack, waitFor } from './support/stack';

type SimGroup = {
  jid: string;
  inviteCode: string;
  subject: string;
  joinApproval: boolean;
  pendingRequests: string[];
  participants: Array<{ phone: string; lid: string; role: string | null }>;
};

/** Invites, joining, leaving, members and join approval through HTTP, real Baileys against the simulator's groups. */
describe('group membership API (HTTP → worker → Baileys → simulator)', () => {
  const stack = new Stack();
  let token: string;
  let owner: string;
  let friend: string;
  let other: string;
  let asker: string;

  const call = (method: 'GET' | 'POST', path: string, body?: unknown) => stack.gw.call(method, path, { token, body });
  const simGroup = (jid: string) => stack.control<SimGroup>('GET', `/sim/groups/${encodeURIComponent(jid)}`);
  const phones = (group: SimGroup) => group.participants.map((participant) => participant.phone).sort();
  const roleOf = (group: SimGroup, phone: string) => group.participants.find((participant) => participant.phone === phone)?.role;
  const groupEvents = (groupJid: string) => outboxPayloads(stack, 'groups', groupJid);
  const eventOf = (groupJid: string, match: (event: Record<string, any>) => boolean, what: string) => groupsEventOf(stack, groupJid, match, what);

  beforeAll(async () => {
    await stack.start();
    ({ token, phone: owner } = await stack.connectedInstance('groups-membership'));
    friend = nextPhone('5585');
    other = nextPhone('5586');
    asker = nextPhone('5587');
    for (const [phone, name] of [
      [friend, 'Friend'],
      [other, 'Other'],
      [asker, 'Asker'],
    ])
      await stack.control('POST', '/sim/accounts', { phone, name });
  }, 60_000);
  afterAll(() => stack.stop());

  describe('POST /group/inviteInfo, /group/join, /group/leave', () => {
    let theirs: SimGroup;

    beforeAll(async () => {
      theirs = await stack.control<SimGroup>('POST', '/sim/groups', { creator: friend, subject: 'Convite aberto', participants: [other] });
    });

    it('should answer the group an invite leads to, by code or link, without joining it', async () => {
      const { status, body } = await call('POST', '/group/inviteInfo', { invitecode: theirs.inviteCode });
      expect(status).toBe(200);
      expect(body).toMatchObject({
        response: expect.any(String),
        group: { JID: theirs.jid, Name: 'Convite aberto', IsJoinApprovalRequired: false, OwnerIsAdmin: false },
      });
      expect(body.group.Participants.map((participant: { PhoneNumber: string }) => participant.PhoneNumber).sort()).toEqual(
        [friend, other].map((phone) => `${phone}@s.whatsapp.net`).sort(),
      );
      const byLink = await call('POST', '/group/inviteInfo', { invitecode: `https://chat.whatsapp.com/${theirs.inviteCode}` });
      expect(byLink.body.group.JID).toBe(theirs.jid);
      expect((await call('POST', '/group/inviteInfo', { inviteCode: theirs.inviteCode })).body.group.JID).toBe(theirs.jid);
      // Not joined.
      expect(phones(await simGroup(theirs.jid))).toEqual([friend, other].sort());
    });

    it('should refuse a missing or malformed code (400) and answer 404 for a code WhatsApp does not know', async () => {
      expect(await call('POST', '/group/inviteInfo', {})).toEqual({ status: 400, body: { error: 'invitecode is required' } });
      expect(await call('POST', '/group/inviteInfo', { invitecode: 'not a code!' })).toEqual({ status: 400, body: { error: 'invalid invite code' } });
      expect(await call('POST', '/group/inviteInfo', { invitecode: 'https://example.com/abc' })).toEqual({
        status: 400,
        body: { error: 'invalid invite code' },
      });
      const unknown = await call('POST', '/group/inviteInfo', { invitecode: 'AAAAAAAAAAAAAAAAAAAAAA' });
      expect(unknown.status).toBe(404);
      expect(unknown.body.error).toMatch(/^error getting group info: /);
      expect((await call('POST', '/group/join', { invitecode: 'AAAAAAAAAAAAAAAAAAAAAA' })).status).toBe(404);
    });

    it('should join by link, answer the group with the instance in it, and tell it as JoinedGroup', async () => {
      const { status, body } = await call('POST', '/group/join', { invitecode: `https://chat.whatsapp.com/${theirs.inviteCode}` });
      expect(status).toBe(200);
      expect(body).toMatchObject({ response: 'Group join successful', group: { JID: theirs.jid }, needs_refresh: false });
      expect(body.group.Participants.map((participant: { PhoneNumber: string }) => participant.PhoneNumber)).toContain(`${owner}@s.whatsapp.net`);
      expect(phones(await simGroup(theirs.jid))).toEqual([owner, friend, other].sort());
      await waitFor(
        () => groupEvents(theirs.jid),
        (list) => list.some((entry) => entry.type === 'JoinedGroup'),
        15_000,
        'JoinedGroup event',
      );
    });

    it('should leave, tell it as a groups event, and answer 404 for a group the instance is not in', async () => {
      expect(await call('POST', '/group/leave', { groupjid: theirs.jid })).toEqual({ status: 200, body: { response: 'Group leave successful' } });
      expect(phones(await simGroup(theirs.jid))).toEqual([friend, other].sort());
      await eventOf(theirs.jid, (event) => event.Leave?.includes(`${owner}@s.whatsapp.net`), 'leave event');
      expect((await call('POST', '/group/leave', { groupjid: theirs.jid })).status).toBe(404);
      expect((await call('POST', '/group/leave', { groupjid: '120363000000000002@g.us' })).status).toBe(404);
      expect(await call('POST', '/group/leave', {})).toEqual({ status: 400, body: { error: 'groupjid is required' } });
    });

    it('should ask to join a group whose admins approve joins, without joining it', async () => {
      const guarded = await stack.control<SimGroup>('POST', '/sim/groups', { creator: friend, subject: 'Com aprovação', participants: [other] });
      await stack.control('POST', `/sim/groups/${encodeURIComponent(guarded.jid)}/settings`, { joinApproval: true });
      const { status, body } = await call('POST', '/group/join', { invitecode: guarded.inviteCode });
      expect(status).toBe(200);
      expect(body).toMatchObject({ response: 'Group join request sent', group: { JID: guarded.jid, IsJoinApprovalRequired: true }, needs_refresh: false });
      const after = await simGroup(guarded.jid);
      expect(after.pendingRequests).toEqual([owner]);
      expect(phones(after)).toEqual([friend, other].sort());
    });
  });

  describe('POST /group/resetInviteCode', () => {
    it('should answer the new link, stop the old one, and tell the members (NewInviteLink)', async () => {
      const created = await call('POST', '/group/create', { name: 'Link novo', participants: [friend] });
      const groupJid = created.body.JID;
      const before = (await simGroup(groupJid)).inviteCode;
      const { status, body } = await call('POST', '/group/resetInviteCode', { groupjid: groupJid });
      expect(status).toBe(200);
      const after = (await simGroup(groupJid)).inviteCode;
      expect(after).not.toBe(before);
      expect(body).toMatchObject({ InviteLink: `https://chat.whatsapp.com/${after}`, group: { JID: groupJid, OwnerIsAdmin: true }, needs_refresh: false });
      expect((await call('POST', '/group/inviteInfo', { invitecode: before })).status).toBe(404);
      expect((await call('POST', '/group/inviteInfo', { invitecode: after })).body.group.JID).toBe(groupJid);
      const event = await eventOf(groupJid, (entry) => typeof entry.NewInviteLink === 'string', 'NewInviteLink event');
      expect(event).toMatchObject({
        EventType: 'groups',
        type: 'Group',
        event: { JID: groupJid, NewInviteLink: `https://chat.whatsapp.com/${after}`, Join: null },
      });
    });

    it('should answer 403 for a member that is no admin and 404 for a group that does not exist', async () => {
      const theirs = await stack.control<SimGroup>('POST', '/sim/groups', { creator: friend, subject: 'Sem admin', participants: [owner] });
      const denied = await call('POST', '/group/resetInviteCode', { groupjid: theirs.jid });
      expect(denied.status).toBe(403);
      expect(denied.body).toEqual({ error: expect.stringMatching(/not an admin/) });
      expect((await call('POST', '/group/resetInviteCode', { groupjid: '120363000000000003@g.us' })).status).toBe(404);
    });
  });

  describe('POST /group/updateParticipants', () => {
    let groupJid: string;

    beforeAll(async () => {
      groupJid = (await call('POST', '/group/create', { name: 'Membros', participants: [friend] })).body.JID;
    });

    it('should add, promote, demote and remove members with a result per participant, each told as a groups event', async () => {
      const added = await call('POST', '/group/updateParticipants', { groupjid: groupJid, action: 'add', participants: [other] });
      expect(added.status).toBe(200);
      expect(added.body).toMatchObject({ groupUpdated: [{ JID: expect.stringMatching(/@lid$/), Error: 0 }], group: { JID: groupJid }, needs_refresh: false });
      expect(phones(await simGroup(groupJid))).toEqual([owner, friend, other].sort());
      await eventOf(groupJid, (event) => event.Join?.includes(`${other}@s.whatsapp.net`), 'join event');

      const promoted = await call('POST', '/group/updateParticipants', { groupjid: groupJid, action: 'promote', participants: [`${other}@s.whatsapp.net`] });
      expect(promoted.body.groupUpdated).toEqual([{ JID: expect.any(String), Error: 0 }]);
      expect(roleOf(await simGroup(groupJid), other)).toBe('admin');
      const me = promoted.body.group.Participants.find((participant: { PhoneNumber: string }) => participant.PhoneNumber === `${other}@s.whatsapp.net`);
      expect(me).toMatchObject({ IsAdmin: true, IsSuperAdmin: false });
      await eventOf(groupJid, (event) => event.Promote?.includes(`${other}@s.whatsapp.net`), 'promote event');

      await call('POST', '/group/updateParticipants', { groupjid: groupJid, action: 'demote', participants: [other] });
      expect(roleOf(await simGroup(groupJid), other)).toBeNull();
      await eventOf(groupJid, (event) => event.Demote?.includes(`${other}@s.whatsapp.net`), 'demote event');

      const removed = await call('POST', '/group/updateParticipants', { groupjid: groupJid, action: 'remove', participants: [other] });
      expect(removed.body.groupUpdated).toEqual([{ JID: expect.any(String), Error: 0 }]);
      expect(phones(await simGroup(groupJid))).toEqual([owner, friend].sort());
      await eventOf(groupJid, (event) => event.Leave?.includes(`${other}@s.whatsapp.net`), 'remove event');
    });

    it('should answer WhatsApp’s code for a participant it refused (already a member: 409)', async () => {
      const again = await call('POST', '/group/updateParticipants', { groupjid: groupJid, action: 'add', participants: [friend] });
      expect(again.status).toBe(200);
      expect(again.body.groupUpdated).toEqual([{ JID: `${friend}@s.whatsapp.net`, Error: 409 }]);
    });

    it('should answer 403 when the instance is no admin, 404 for a group that does not exist, 400 for a bad body', async () => {
      const theirs = await stack.control<SimGroup>('POST', '/sim/groups', { creator: friend, subject: 'Deles', participants: [owner, other] });
      const denied = await call('POST', '/group/updateParticipants', { groupjid: theirs.jid, action: 'promote', participants: [other] });
      expect(denied.status).toBe(403);
      expect(denied.body).toEqual({ error: expect.stringMatching(/not an admin/) });
      expect(roleOf(await simGroup(theirs.jid), other)).toBeNull();
      expect((await call('POST', '/group/updateParticipants', { groupjid: '120363000000000004@g.us', action: 'add', participants: [other] })).status).toBe(404);
      expect(await call('POST', '/group/updateParticipants', { groupjid: groupJid, action: 'kick', participants: [other] })).toEqual({
        status: 400,
        body: { error: 'action must be one of add, remove, promote, demote, approve, reject' },
      });
      expect(await call('POST', '/group/updateParticipants', { groupjid: groupJid, action: 'add' })).toEqual({
        status: 400,
        body: { error: 'participants is required' },
      });
      expect(await call('POST', '/group/updateParticipants', { groupjid: groupJid, action: 'add', participants: ['nope'] })).toEqual({
        status: 400,
        body: { error: 'Could not parse phone: nope' },
      });
    });
  });

  describe('POST /group/updateJoinApproval and join requests', () => {
    let groupJid: string;

    beforeAll(async () => {
      groupJid = (await call('POST', '/group/create', { name: 'Aprovação', participants: [friend] })).body.JID;
    });

    it('should need the flag (400), an admin (403) and a group that exists (404)', async () => {
      expect(await call('POST', '/group/updateJoinApproval', { groupjid: groupJid })).toEqual({
        status: 400,
        body: { error: 'IsJoinApprovalRequired is required' },
      });
      expect((await call('POST', '/group/updateJoinApproval', { groupjid: groupJid, IsJoinApprovalRequired: 'yes' })).status).toBe(400);
      const theirs = await stack.control<SimGroup>('POST', '/sim/groups', { creator: friend, subject: 'Não sou admin', participants: [owner] });
      const denied = await call('POST', '/group/updateJoinApproval', { groupjid: theirs.jid, IsJoinApprovalRequired: true });
      expect(denied.status).toBe(403);
      expect(denied.body).toEqual({ error: expect.stringMatching(/not an admin/) });
      expect((await simGroup(theirs.jid)).joinApproval).toBe(false);
      expect((await call('POST', '/group/updateJoinApproval', { groupjid: '120363000000000005@g.us', IsJoinApprovalRequired: true })).status).toBe(404);
    });

    it('should turn approval on, show it in every group object, and tell it (MembershipApprovalMode)', async () => {
      const { status, body } = await call('POST', '/group/updateJoinApproval', { groupjid: groupJid, IsJoinApprovalRequired: true });
      expect(status).toBe(200);
      expect(body).toEqual({
        response: 'Group join approval enabled successfully',
        group: { JID: groupJid, IsJoinApprovalRequired: true },
        needs_refresh: false,
      });
      expect((await simGroup(groupJid)).joinApproval).toBe(true);
      expect((await call('POST', '/group/info', { groupjid: groupJid })).body.IsJoinApprovalRequired).toBe(true);
      const listed = (await call('GET', '/group/list')).body.groups.find((group: { JID: string }) => group.JID === groupJid);
      expect(listed.IsJoinApprovalRequired).toBe(true);
      const event = await eventOf(groupJid, (entry) => entry.MembershipApprovalMode !== null && entry.MembershipApprovalMode !== undefined, 'approval event');
      expect(event.event).toMatchObject({ JID: groupJid, MembershipApprovalMode: { IsJoinApprovalRequired: true }, NewInviteLink: null });
    });

    it('should list pending requests in /group/info, tell each as a groups event, and approve or reject them', async () => {
      await stack.control('POST', `/sim/groups/${encodeURIComponent(groupJid)}/join-requests`, { phone: other });
      await stack.control('POST', `/sim/groups/${encodeURIComponent(groupJid)}/join-requests`, { phone: asker });
      const created = await eventOf(groupJid, (entry) => entry.MembershipRequest?.PhoneNumber === `${asker}@s.whatsapp.net`, 'join request event');
      expect(created.event.MembershipRequest).toMatchObject({ Action: 'created', JID: `${asker}@s.whatsapp.net`, LID: expect.stringMatching(/@lid$/) });

      const info = await call('POST', '/group/info', { groupjid: groupJid, getRequestsParticipants: true });
      const accounts = await Promise.all([other, asker].map((phone) => stack.control<{ lid: string }>('GET', `/sim/accounts/${phone}`)));
      const pending = info.body.request_participants.split(',').sort();
      expect(pending).toEqual(accounts.map((account) => account.lid).sort());

      const approved = await call('POST', '/group/updateParticipants', { groupjid: groupJid, action: 'approve', participants: [other] });
      expect(approved.status).toBe(200);
      expect(approved.body.groupUpdated).toEqual([{ JID: expect.any(String), Error: 0 }]);
      expect(phones(await simGroup(groupJid))).toEqual([owner, friend, other].sort());
      await eventOf(groupJid, (event) => event.Join?.includes(`${other}@s.whatsapp.net`), 'approved join event');

      const rejected = await call('POST', '/group/updateParticipants', { groupjid: groupJid, action: 'reject', participants: [asker] });
      expect(rejected.body.groupUpdated).toEqual([{ JID: expect.any(String), Error: 0 }]);
      const after = await simGroup(groupJid);
      expect(after.pendingRequests).toEqual([]);
      expect(phones(after)).not.toContain(asker);
      await eventOf(groupJid, (event) => event.MembershipRequest?.Action === 'rejected', 'rejected request event');
      // No request left: WhatsApp answers 404 for that participant.
      const none = await call('POST', '/group/updateParticipants', { groupjid: groupJid, action: 'approve', participants: [asker] });
      expect(none.body.groupUpdated).toEqual([{ JID: expect.any(String), Error: 404 }]);
      expect((await call('POST', '/group/info', { groupjid: groupJid, getRequestsParticipants: true })).body.request_participants).toBe('');
    });

    it('should turn approval off', async () => {
      const { body } = await call('POST', '/group/updateJoinApproval', { groupjid: groupJid, IsJoinApprovalRequired: false });
      expect(body).toEqual({
        response: 'Group join approval disabled successfully',
        group: { JID: groupJid, IsJoinApprovalRequired: false },
        needs_refresh: false,
      });
      expect((await simGroup(groupJid)).joinApproval).toBe(false);
    });
  });
});
