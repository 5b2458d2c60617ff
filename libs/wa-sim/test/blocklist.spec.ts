import type { WASocket } from '@whiskeysockets/baileys';
import { startSimulator } from '../src';
import type { RunningSimulator } from '../src';
import { endSocket, getJson, postJson, provisionAndConnect, trustSimulator, waitFor } from './helpers';

jest.setTimeout(30_000);

const OWNER = '5511900000701';
const CONTACT = '5511988880701';

describe('blocklist', () => {
  let running: RunningSimulator;
  let sock: WASocket;
  let contactLid: string;

  beforeAll(async () => {
    running = await startSimulator();
    trustSimulator(running);
    await postJson(running, '/sim/accounts', { phone: OWNER });
    contactLid = (await postJson<{ lid: string }>(running, '/sim/accounts', { phone: CONTACT, name: 'Rita' })).body.lid;
    sock = (await provisionAndConnect(running, OWNER)).sock;
  });

  afterAll(async () => {
    endSocket(sock);
    await running.stop();
  });

  it('should keep what a linked device blocks and answer it to the blocklist query', async () => {
    // Baileys blocks by LID and needs the pair first.
    await sock.signalRepository.lidMapping.storeLIDPNMappings([{ lid: contactLid, pn: `${CONTACT}@s.whatsapp.net` }]);
    await sock.updateBlockStatus(`${CONTACT}@s.whatsapp.net`, 'block');
    expect((await getJson<{ blocklist: string[] }>(running, `/sim/accounts/${OWNER}/blocklist`)).body.blocklist).toEqual([contactLid]);
    expect(await sock.fetchBlocklist()).toEqual([contactLid]);
    await sock.updateBlockStatus(contactLid, 'unblock');
    expect(await sock.fetchBlocklist()).toEqual([]);
  });

  it('should tell linked devices when the phone blocks or unblocks', async () => {
    const added = waitFor(sock, 'blocklist.update', (update) => (update.type === 'add' ? update : undefined));
    await postJson(running, `/sim/accounts/${OWNER}/blocklist`, { jid: CONTACT, action: 'block' });
    expect((await added).blocklist).toEqual([contactLid]);
    const removed = waitFor(sock, 'blocklist.update', (update) => (update.type === 'remove' ? update : undefined));
    const answer = await postJson<{ blocklist: string[] }>(running, `/sim/accounts/${OWNER}/blocklist`, { jid: `${CONTACT}@s.whatsapp.net`, action: 'unblock' });
    expect(answer.body.blocklist).toEqual([]);
    expect((await removed).blocklist).toEqual([contactLid]);
  });

  it('should refuse bad control requests', async () => {
    expect((await postJson(running, `/sim/accounts/${OWNER}/blocklist`, { jid: CONTACT, action: 'mute' })).status).toBe(400);
    expect((await postJson(running, `/sim/accounts/${OWNER}/blocklist`, { jid: '5511000000000', action: 'block' })).status).toBe(404);
    expect((await postJson(running, `/sim/accounts/${OWNER}/blocklist`, { action: 'block' })).status).toBe(400);
  });
});
