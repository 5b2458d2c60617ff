import type { Lease } from '@gw/persistence';
import { ContactChatGroupEvents } from './contacts-chats-groups';
import type { InboundContext } from './inbound-context';

/**
 * The instance's own picture at login (ContactChatGroupEvents.onOwnPicture, issue #38): written under the
 * lease when WhatsApp's answer differs from the one stored, not at all when it is the same (most logins:
 * a statement less per connect).
 */
describe('ContactChatGroupEvents.onOwnPicture', () => {
  const lease: Lease = { instanceId: 'i1', workerId: 'w1', fencingToken: '1' };
  const setup = (served: Array<string | undefined | Error>, ownPicture?: { url: string }, stuck = false) => {
    const writes: Array<Record<string, unknown>> = [];
    const answers = [...served];
    const context = {
      instanceId: 'i1',
      lease,
      logger: { debug: () => undefined },
      identities: { me: () => ({ pn: '5531999@s.whatsapp.net', lid: '111@lid' }) },
      socket: {
        profilePictureUrl: async () => {
          const answer = answers.shift();
          if (answer instanceof Error) throw answer;
          return answer;
        },
      },
      services: { instances: { applySessionChange: async (_lease: Lease, patch: Record<string, unknown>) => void writes.push(patch) } },
      ownPicture,
      readingStuck: () => stuck,
    } as unknown as InboundContext;
    return { events: new ContactChatGroupEvents(context), writes };
  };

  it('should write nothing when WhatsApp serves the picture stored', async () => {
    const { events, writes } = setup(['https://pps.whatsapp.net/a.jpg', undefined], { url: 'https://pps.whatsapp.net/a.jpg' });
    await events.onOwnPicture();
    expect(writes).toEqual([]);
  });

  it('should write a changed picture once, then nothing while it stays the same', async () => {
    const ownPicture = { url: '' };
    const { events, writes } = setup(['https://pps.whatsapp.net/b.jpg', 'https://pps.whatsapp.net/b.jpg'], ownPicture);
    await events.onOwnPicture();
    await events.onOwnPicture();
    expect(writes).toEqual([{ profilePicUrl: 'https://pps.whatsapp.net/b.jpg' }]);
    expect(ownPicture.url).toBe('https://pps.whatsapp.net/b.jpg');
  });

  it("should write a removed picture (WhatsApp's 404) as empty, and nothing for an answer that says nothing", async () => {
    const ownPicture = { url: 'https://pps.whatsapp.net/c.jpg' };
    const notFound = Object.assign(new Error('item-not-found'), { data: 404 });
    const { events, writes } = setup([new Error('timed out'), notFound], ownPicture);
    await events.onOwnPicture();
    await events.onOwnPicture();
    expect(writes).toEqual([{ profilePicUrl: '' }]);
    expect(ownPicture.url).toBe('');
  });

  it('should write every answer when the session shares no stored picture', async () => {
    const { events, writes } = setup(['https://pps.whatsapp.net/d.jpg', 'https://pps.whatsapp.net/d.jpg']);
    await events.onOwnPicture();
    await events.onOwnPicture();
    expect(writes).toHaveLength(2);
  });

  it('should not wait for the answer while the socket is not read, and write nothing then (ADR 0065)', async () => {
    const { events, writes } = setup(['https://pps.whatsapp.net/b.jpg'], { url: 'https://pps.whatsapp.net/a.jpg' }, true);
    await events.onOwnPicture();
    expect(writes).toEqual([]);
  });
});
