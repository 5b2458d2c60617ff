import type { GroupMetadata, WAMessage, WASocket } from '@whiskeysockets/baileys';
import { startSimulator } from '../src';
import type { InboxEntry, RunningSimulator } from '../src';
import { endSocket, getJson, postJson, provisionAndConnect, trustSimulator, waitFor } from './helpers';

jest.setTimeout(30_000);

const ALICE = '5511900000301';
const BOB = '5511900000302';
const CAROL = '5511988880303';
const DAVE = '5511988880304';

describe('groups', () => {
  let running: RunningSimulator;
  let alice: WASocket;
  let bob: WASocket;
  let group: GroupMetadata;
  const lids: Record<string, string> = {};

  beforeAll(async () => {
    running = await startSimulator();
    trustSimulator(running);
    for (const [phone, name] of [
      [ALICE, 'Alice'],
      [BOB, 'Bob'],
      [CAROL, 'Carol'],
      [DAVE, 'Dave'],
    ]) {
      const res = await postJson<{ lid: string }>(running, '/sim/accounts', { phone, name });
      lids[phone] = res.body.lid;
    }
    alice = (await provisionAndConnect(running, ALICE)).sock;
    bob = (await provisionAndConnect(running, BOB)).sock;
  });

  afterAll(async () => {
    endSocket(alice);
    endSocket(bob);
    await running.stop();
  });

  it('should create a LID-addressed group and tell the other members', async () => {
    const upserted = waitFor(bob, 'groups.upsert', (groups) => groups[0]);
    group = await alice.groupCreate('Sim team', [`${BOB}@s.whatsapp.net`, `${CAROL}@s.whatsapp.net`]);
    expect(group.id).toMatch(/@g\.us$/);
    expect(group.addressingMode).toBe('lid');
    expect(group.participants.map((p) => p.phoneNumber).sort()).toEqual([ALICE, BOB, CAROL].map((p) => `${p}@s.whatsapp.net`).sort());
    expect(group.participants.find((p) => p.phoneNumber === `${ALICE}@s.whatsapp.net`)?.admin).toBe('superadmin');
    expect((await upserted).subject).toBe('Sim team');
    const meta = await bob.groupMetadata(group.id);
    expect(meta.participants).toHaveLength(3);
  });

  it('should fan a group message out with sender keys to linked devices and phones', async () => {
    const atBob = waitFor(bob, 'messages.upsert', ({ messages }) =>
      messages.find((m) => m.key.remoteJid === group.id && m.message?.extendedTextMessage?.text === 'hi group'),
    );
    await alice.sendMessage(group.id, { text: 'hi group' });
    const msg = await atBob;
    // Baileys normalises the author to the user LID; the stanza named the exact device.
    expect(msg.key.participant).toBe(lids[ALICE]);
    expect(msg.key.participantAlt).toBe(`${ALICE}@s.whatsapp.net`);
    const deadline = Date.now() + 5_000;
    let entry: InboxEntry | undefined;
    while (!entry && Date.now() < deadline) {
      const { body } = await getJson<InboxEntry[]>(running, `/sim/accounts/${CAROL}/inbox?waitMs=300`);
      entry = body.find((e) => e.to === group.id);
    }
    expect(entry?.message).toMatchObject({ extendedTextMessage: { text: 'hi group' } });
    expect(entry?.participant).toBe(`${ALICE}@s.whatsapp.net`);
  });

  it('should deliver a group message sent by a phone', async () => {
    const atAlice = waitFor(alice, 'messages.upsert', ({ messages }) => messages.find((m) => m.message?.conversation === 'from carol'));
    const atBob = waitFor(bob, 'messages.upsert', ({ messages }) => messages.find((m) => m.message?.conversation === 'from carol'));
    const res = await postJson(running, `/sim/accounts/${CAROL}/send`, { to: group.id, text: 'from carol' });
    expect(res.status).toBe(200);
    const [a, b] = await Promise.all([atAlice, atBob]);
    expect(a.key.participant).toBe(lids[CAROL]);
    expect(b.key.remoteJid).toBe(group.id);
  });

  it('should notify participant changes (add, promote, remove) with w:gp2', async () => {
    const added = waitFor(bob, 'group-participants.update', (u) => (u.action === 'add' ? u : undefined));
    const res = await alice.groupParticipantsUpdate(group.id, [`${DAVE}@s.whatsapp.net`], 'add');
    expect(res[0].status).toBe('200');
    const update = await added;
    expect(update.participants[0]).toMatchObject({ id: lids[DAVE], phoneNumber: `${DAVE}@s.whatsapp.net` });

    const promoted = waitFor(bob, 'group-participants.update', (u) => (u.action === 'promote' ? u : undefined));
    await alice.groupParticipantsUpdate(group.id, [`${BOB}@s.whatsapp.net`], 'promote');
    expect((await promoted).participants[0].phoneNumber).toBe(`${BOB}@s.whatsapp.net`);

    const removed = waitFor(alice, 'group-participants.update', (u) => (u.action === 'remove' ? u : undefined));
    await bob.groupParticipantsUpdate(group.id, [`${DAVE}@s.whatsapp.net`], 'remove');
    expect((await removed).participants[0].phoneNumber).toBe(`${DAVE}@s.whatsapp.net`);
    const meta = await alice.groupMetadata(group.id);
    expect(meta.participants.find((p) => p.phoneNumber === `${BOB}@s.whatsapp.net`)?.admin).toBe('admin');
    expect(meta.participants.some((p) => p.phoneNumber === `${DAVE}@s.whatsapp.net`)).toBe(false);
  });

  it('should share an invite code, show its info and let a member rejoin with it', async () => {
    const code = await alice.groupInviteCode(group.id);
    expect(code).toBeTruthy();
    const info = await bob.groupGetInviteInfo(code!);
    expect(info.subject).toBe('Sim team');
    await bob.groupLeave(group.id);
    await expect(bob.groupMetadata(group.id)).rejects.toThrow();
    const joined = await bob.groupAcceptInvite(code!);
    expect(joined).toBe(group.id);
    expect((await bob.groupMetadata(group.id)).participants.some((p) => p.phoneNumber === `${BOB}@s.whatsapp.net`)).toBe(true);
  });

  it('should change subject and settings and report group receipts', async () => {
    const renamed = waitFor(bob, 'groups.update', (updates) => updates.find((u) => u.subject === 'Renamed'));
    await alice.groupUpdateSubject(group.id, 'Renamed');
    await renamed;
    const receipt = waitFor(alice, 'message-receipt.update', (updates) => updates[0]);
    const atBob = waitFor(bob, 'messages.upsert', ({ messages }) => messages.find((m: WAMessage) => m.message?.extendedTextMessage?.text === 'receipt please'));
    await alice.sendMessage(group.id, { text: 'receipt please' });
    await atBob;
    const r = await receipt;
    expect(r.key.remoteJid).toBe(group.id);
  });
});
