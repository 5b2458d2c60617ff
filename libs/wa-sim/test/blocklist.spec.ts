import { getJson, postJson, waitFor } from './helpers';
import { linkedPhoneWithContact } from './linked-phone';

jest.setTimeout(30_000);

const OWNER = '5511900000701';
const CONTACT = '5511988880701';

describe('blocklist', () => {
  const linked = linkedPhoneWithContact(OWNER, CONTACT);

  it('should keep what a linked device blocks and answer it to the blocklist query', async () => {
    // Baileys blocks by LID and needs the pair first.
    await linked.sock.signalRepository.lidMapping.storeLIDPNMappings([{ lid: linked.contactLid, pn: `${CONTACT}@s.whatsapp.net` }]);
    await linked.sock.updateBlockStatus(`${CONTACT}@s.whatsapp.net`, 'block');
    expect((await getJson<{ blocklist: string[] }>(linked.running, `/sim/accounts/${OWNER}/blocklist`)).body.blocklist).toEqual([linked.contactLid]);
    expect(await linked.sock.fetchBlocklist()).toEqual([linked.contactLid]);
    await linked.sock.updateBlockStatus(linked.contactLid, 'unblock');
    expect(await linked.sock.fetchBlocklist()).toEqual([]);
  });

  it('should tell linked devices when the phone blocks or unblocks', async () => {
    const added = waitFor(linked.sock, 'blocklist.update', (update) => (update.type === 'add' ? update : undefined));
    await postJson(linked.running, `/sim/accounts/${OWNER}/blocklist`, { jid: CONTACT, action: 'block' });
    expect((await added).blocklist).toEqual([linked.contactLid]);
    const removed = waitFor(linked.sock, 'blocklist.update', (update) => (update.type === 'remove' ? update : undefined));
    const answer = await postJson<{ blocklist: string[] }>(linked.running, `/sim/accounts/${OWNER}/blocklist`, {
      jid: `${CONTACT}@s.whatsapp.net`,
      action: 'unblock',
    });
    expect(answer.body.blocklist).toEqual([]);
    expect((await removed).blocklist).toEqual([linked.contactLid]);
  });

  it('should refuse bad control requests', async () => {
    expect((await postJson(linked.running, `/sim/accounts/${OWNER}/blocklist`, { jid: CONTACT, action: 'mute' })).status).toBe(400);
    expect((await postJson(linked.running, `/sim/accounts/${OWNER}/blocklist`, { jid: '5511000000000', action: 'block' })).status).toBe(404);
    expect((await postJson(linked.running, `/sim/accounts/${OWNER}/blocklist`, { action: 'block' })).status).toBe(400);
  });
});
