import { createServer, type Server } from 'http';
import type { AddressInfo } from 'net';
import sharp from 'sharp';
import { groupsEventOf } from './support/outbox-events';
import { nextPhone, Stack } from './support/stack';

interface SimGroup {
  jid: string;
  subject: string;
  announce: boolean;
  picture: { id: string; bytes: number; author: string } | null;
  isParent: boolean;
  linkedParent: string | null;
  isDefaultSubGroup: boolean;
  subGroups: string[];
}

/** `/group/updateImage` and `/community/*` through HTTP, real Baileys against the simulator's groups and communities. */
describe('group image and communities API (HTTP → worker → Baileys → simulator)', () => {
  const stack = new Stack();
  let token: string;
  let instanceId: string;
  let owner: string;
  let friend: string;
  let images: Server;
  let imageUrl: string;
  let mine: string;
  let theirs: SimGroup;
  const missing = '120363000000000019@g.us';

  const call = (method: 'GET' | 'POST', path: string, body?: unknown) => stack.gw.call(method, path, { token, body });
  const simGroup = (jid: string) => stack.control<SimGroup>('GET', `/sim/groups/${encodeURIComponent(jid)}`);
  const groupsEvent = (groupJid: string, match: (event: Record<string, any>) => boolean, what: string) => groupsEventOf(stack, groupJid, match, what);

  /** Uploads of this instance staged as group pictures (`image.jpg`) and still kept. */
  const stagedPictures = async () =>
    (
      (await stack.db.dataSource.query(`SELECT count(*)::int AS n FROM stored_files WHERE instance_id = $1 AND file_name = 'image.jpg'`, [
        instanceId,
      ])) as Array<{ n: number }>
    )[0].n;

  beforeAll(async () => {
    const png = await sharp({ create: { width: 1200, height: 800, channels: 3, background: '#aa3300' } })
      .png()
      .toBuffer();
    images = createServer((req, res) => {
      if (req.url === '/group.png') {
        res.writeHead(200, { 'content-type': 'image/png' });
        res.end(png);
      } else if (req.url === '/huge.png') {
        // A PNG's signature, then more than the 5 MB a group picture may have.
        res.writeHead(200, { 'content-type': 'image/png' });
        res.end(Buffer.concat([png.subarray(0, 64), Buffer.alloc(5_400_000, 1)]));
      } else {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<html></html>');
      }
    });
    await new Promise<void>((resolve) => images.listen(0, '127.0.0.1', resolve));
    imageUrl = `http://127.0.0.1:${(images.address() as AddressInfo).port}`;
    await stack.start();
    ({ id: instanceId, token, phone: owner } = await stack.connectedInstance('groups-image'));
    friend = nextPhone('5587');
    await stack.control('POST', '/sim/accounts', { phone: friend, name: 'Friend' });
    mine = (await call('POST', '/group/create', { name: 'Com foto', participants: [friend] })).body.JID;
    theirs = await stack.control<SimGroup>('POST', '/sim/groups', { creator: friend, subject: 'Deles', participants: [owner] });
    await stack.control('POST', `/sim/groups/${encodeURIComponent(theirs.jid)}/settings`, { locked: true });
  }, 60_000);
  afterAll(async () => {
    await stack.stop();
    await new Promise((resolve) => images.close(resolve));
  });

  describe('POST /group/updateImage', () => {
    it('should set the picture from a URL, then from base64, and remove it', async () => {
      const { status, body } = await call('POST', '/group/updateImage', { groupjid: mine, image: `${imageUrl}/group.png` });
      expect(status).toBe(200);
      expect(body).toMatchObject({ response: 'Group image updated successfully', group: { JID: mine, Name: 'Com foto' }, needs_refresh: false });
      const first = (await simGroup(mine)).picture;
      expect(first).toMatchObject({ bytes: expect.any(Number) });
      // WhatsApp gets the 640×640 JPEG Baileys makes of it.
      const stored = await stack.control<{ width: number; height: number; format: string }>('GET', `/sim/groups/${encodeURIComponent(mine)}/picture`);
      expect(stored).toEqual({ width: 640, height: 640, format: 'jpeg' });

      const jpeg = await sharp({ create: { width: 200, height: 200, channels: 3, background: '#00aa00' } })
        .jpeg()
        .toBuffer();
      expect((await call('POST', '/group/updateImage', { groupjid: mine, image: `data:image/jpeg;base64,${jpeg.toString('base64')}` })).status).toBe(200);
      expect((await call('POST', '/group/updateImage', { groupJid: mine, image: jpeg.toString('base64') })).status).toBe(200);
      // The uploads staged for the worker are deleted once it is done with them, not kept for a week.
      expect(await stagedPictures()).toBe(0);
      const second = (await simGroup(mine)).picture;
      expect(second?.id).not.toBe(first?.id);

      // The picture change reaches the groups event.
      expect(await groupsEvent(mine, (event) => event.Picture?.PictureID === second?.id, 'picture event')).toMatchObject({
        EventType: 'groups',
        event: { JID: mine, Picture: { Remove: false, PictureID: second?.id }, SenderPN: `${owner}@s.whatsapp.net` },
      });

      const removed = await call('POST', '/group/updateImage', { groupjid: mine, image: 'remove' });
      expect(removed).toMatchObject({ status: 200, body: { response: 'Group image removed successfully' } });
      expect((await simGroup(mine)).picture).toBeNull();
      expect((await call('POST', '/group/updateImage', { groupjid: mine, image: 'DELETE' })).status).toBe(200);
      await groupsEvent(mine, (event) => event.Picture?.Remove === true, 'picture removed event');
    });

    it('should answer 400 for a missing or unreadable image, 415 for what is no image, 413 above 5 MB (base64 or URL), 403 for a non-admin of a locked group, 404 for a missing group', async () => {
      expect(await call('POST', '/group/updateImage', { groupjid: mine })).toEqual({ status: 400, body: { error: 'image is required' } });
      expect(await call('POST', '/group/updateImage', { image: 'remove' })).toEqual({ status: 400, body: { error: 'groupjid is required' } });
      expect((await call('POST', '/group/updateImage', { groupjid: mine, image: 'not base64 !!' })).status).toBe(400);
      // The reference's 415 "Formato de imagem inválido", whether the bytes came by URL or as base64.
      const html = await call('POST', '/group/updateImage', { groupjid: mine, image: `${imageUrl}/page.html` });
      expect(html.status).toBe(415);
      expect(html.body.error).toMatch(/image is not an image/);
      const pdf = await call('POST', '/group/updateImage', { groupjid: mine, image: Buffer.from('%PDF-1.4 not a picture').toString('base64') });
      expect(pdf.status).toBe(415);
      expect(pdf.body.error).toMatch(/image is not an image/);
      expect((await call('POST', '/group/updateImage', { groupjid: mine, image: Buffer.alloc(5_500_000, 7).toString('base64') })).status).toBe(413);
      const huge = await call('POST', '/group/updateImage', { groupjid: mine, image: `${imageUrl}/huge.png` });
      expect(huge.status).toBe(413);
      expect(huge.body.error).toMatch(/image is larger than 5120 KB/);
      const refusedUpload = await call('POST', '/group/updateImage', {
        groupjid: theirs.jid,
        image: (
          await sharp({ create: { width: 50, height: 50, channels: 3, background: '#000' } })
            .png()
            .toBuffer()
        ).toString('base64'),
      });
      expect(refusedUpload.status).toBe(403);
      expect(await stagedPictures()).toBe(0);
      const denied = await call('POST', '/group/updateImage', { groupjid: theirs.jid, image: `${imageUrl}/group.png` });
      expect(denied.status).toBe(403);
      expect(denied.body.error).toMatch(/not an admin/);
      expect((await simGroup(theirs.jid)).picture).toBeNull();
      expect((await call('POST', '/group/updateImage', { groupjid: missing, image: `${imageUrl}/group.png` })).status).toBe(404);
    });
  });

  describe('groups events of settings', () => {
    it('should announce disappearing messages and the member add mode as groups events', async () => {
      expect((await call('POST', '/group/ephemeral', { groupjid: mine, duration: '7d' })).status).toBe(200);
      expect(await groupsEvent(mine, (event) => event.Ephemeral?.DisappearingTimer === 604_800, 'ephemeral on')).toMatchObject({
        event: { JID: mine, Ephemeral: { IsEphemeral: true, DisappearingTimer: 604_800 }, SenderPN: `${owner}@s.whatsapp.net`, Name: null },
      });
      expect((await call('POST', '/group/ephemeral', { groupjid: mine, duration: 'off' })).status).toBe(200);
      await groupsEvent(mine, (event) => event.Ephemeral?.IsEphemeral === false, 'ephemeral off');
      expect((await call('POST', '/group/updateMemberAddMode', { groupjid: mine, MemberAddMode: 'all_member_add' })).status).toBe(200);
      expect(await groupsEvent(mine, (event) => event.MemberAddMode === 'all_member_add', 'member add mode')).toMatchObject({
        event: { JID: mine, MemberAddMode: 'all_member_add', Ephemeral: null },
      });
    });
  });

  describe('groups events of changes made by other members', () => {
    it('should announce the picture, disappearing messages and the add mode another admin changed', async () => {
      const group = await stack.control<SimGroup>('POST', '/sim/groups', { creator: friend, subject: 'Mudanças alheias', participants: [owner] });
      const path = `/sim/groups/${encodeURIComponent(group.jid)}`;
      const withPicture = await stack.control<SimGroup>('POST', `${path}/picture`, { actor: friend });
      await stack.control('POST', `${path}/settings`, { actor: friend, ephemeral: 86_400, memberAddMode: 'all_member_add' });
      expect(await groupsEvent(group.jid, (event) => Boolean(event.Picture), 'picture by another member')).toMatchObject({
        event: { Picture: { Remove: false, PictureID: withPicture.picture!.id, AuthorPN: `${friend}@s.whatsapp.net` }, SenderPN: `${friend}@s.whatsapp.net` },
      });
      await groupsEvent(group.jid, (event) => event.Ephemeral?.DisappearingTimer === 86_400, 'ephemeral by another member');
      await groupsEvent(group.jid, (event) => event.MemberAddMode === 'all_member_add', 'add mode by another member');
      await stack.control('POST', `${path}/picture`, { actor: friend, remove: true });
      await groupsEvent(group.jid, (event) => event.Picture?.Remove === true, 'picture removed by another member');
    });
  });

  describe('POST /community/create and /community/editgroups', () => {
    it('should create a community with its announcements group, link and unlink groups, and group objects say so', async () => {
      const created = await call('POST', '/community/create', { name: 'Comunidade do Bairro', description: 'Vizinhos' });
      expect(created.status).toBe(200);
      expect(created.body).toMatchObject({ group: { Name: 'Comunidade do Bairro', Topic: 'Vizinhos', IsParent: true, OwnerIsAdmin: true }, failed: [] });
      const community: string = created.body.group.JID;
      const sim = await simGroup(community);
      expect(sim.isParent).toBe(true);
      expect(sim.subGroups).toHaveLength(1);
      const announcements = await call('POST', '/group/info', { groupjid: sim.subGroups[0] });
      expect(announcements.body).toMatchObject({ IsDefaultSubGroup: true, LinkedParentJID: community, IsAnnounce: true, IsParent: false });

      const other = (await call('POST', '/group/create', { name: 'Futebol', participants: [friend] })).body.JID;
      const linked = await call('POST', '/community/editgroups', { community, action: 'add', groupjids: [mine, other] });
      expect(linked).toEqual({ status: 200, body: { message: 'community updated', success: [mine, other], failed: [] } });
      expect((await call('POST', '/group/info', { groupjid: other })).body.LinkedParentJID).toBe(community);
      expect((await simGroup(community)).subGroups.sort()).toEqual([sim.subGroups[0], mine, other].sort());
      const listed = await call('GET', '/group/list?force=true');
      expect(listed.body.groups.find((group: any) => group.JID === community)).toMatchObject({ IsParent: true });
      expect(listed.body.groups.find((group: any) => group.JID === other)).toMatchObject({ LinkedParentJID: community });

      // Linked already, and a group the instance is no admin of: WhatsApp refuses those.
      const again = await call('POST', '/community/editgroups', { community, action: 'add', groupjids: [other, theirs.jid] });
      expect(again.body).toEqual({ message: 'community updated', success: [], failed: [other, theirs.jid] });

      const unlinked = await call('POST', '/community/editgroups', { community, action: 'remove', groupjids: [other, theirs.jid] });
      expect(unlinked.body).toEqual({ message: 'community updated', success: [other], failed: [theirs.jid] });
      expect((await call('POST', '/group/info', { groupjid: other, force: true })).body.LinkedParentJID).toBe('');
      await groupsEvent(other, (event) => event.Unlink?.Group?.JID === community, 'unlink event');
      expect(await groupsEvent(mine, (event) => event.Link?.Type === 'parent', 'link event')).toMatchObject({
        event: { JID: mine, Link: { Type: 'parent', Group: { JID: community, GroupName: { Name: 'Comunidade do Bairro' } } } },
      });
    });

    it('should answer 400 for bad bodies and what is no community, 403 when not its admin, 404 when it does not exist', async () => {
      expect(await call('POST', '/community/create', {})).toEqual({ status: 400, body: { error: 'name is required' } });
      expect(await call('POST', '/community/create', { name: 'x'.repeat(101) })).toEqual({
        status: 400,
        body: { error: 'name must be at most 100 characters' },
      });
      expect(await call('POST', '/community/editgroups', { action: 'add', groupjids: [mine] })).toEqual({
        status: 400,
        body: { error: 'community is required' },
      });
      expect(await call('POST', '/community/editgroups', { community: missing, action: 'link', groupjids: [mine] })).toEqual({
        status: 400,
        body: { error: 'action must be add or remove' },
      });
      expect(await call('POST', '/community/editgroups', { community: missing, action: 'add', groupjids: [] })).toEqual({
        status: 400,
        body: { error: 'groupjids must name at least one group' },
      });
      expect((await call('POST', '/community/editgroups', { community: missing, action: 'add', groupjids: ['abc'] })).status).toBe(400);
      const notCommunity = await call('POST', '/community/editgroups', { community: mine, action: 'add', groupjids: [theirs.jid] });
      expect(notCommunity.status).toBe(400);
      expect(notCommunity.body.error).toMatch(/is not a community/);
      const foreign = await stack.control<SimGroup>('POST', '/sim/groups', {
        creator: friend,
        subject: 'Comunidade alheia',
        participants: [owner],
        community: true,
      });
      const denied = await call('POST', '/community/editgroups', { community: foreign.jid, action: 'add', groupjids: [mine] });
      expect(denied.status).toBe(403);
      expect((await call('POST', '/community/editgroups', { community: missing, action: 'add', groupjids: [mine] })).status).toBe(404);
    });
  });
});
