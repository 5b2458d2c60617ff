import type { Logger } from '@gw/platform';
import type { GroupMetadata, WASocket } from '../baileys';
import { GroupInfoCache } from './group-info-cache';

const ME = { pn: '5511000000001@s.whatsapp.net', lid: '100000000000001@lid' };
const metadata = (subject: string) =>
  ({ id: '1@g.us', subject, announce: false, participants: [{ id: ME.lid, phoneNumber: ME.pn, admin: 'admin' }] }) as unknown as GroupMetadata;
const logger = { debug: () => undefined } as unknown as Logger;

describe('GroupInfoCache', () => {
  it('should ask WhatsApp once, again after a notification, and keep the last name when that read fails', async () => {
    let answer: () => Promise<GroupMetadata> = async () => metadata('Primeiro');
    let queries = 0;
    const socket = { groupMetadata: () => (queries++, answer()) } as unknown as WASocket;
    const cache = new GroupInfoCache(logger);
    expect(await cache.get(socket, 'i1', '1@g.us', ME)).toMatchObject({ subject: 'Primeiro', flags: { admin: true, member: true } });
    expect((await cache.get(socket, 'i1', '1@g.us', ME))?.subject).toBe('Primeiro');
    expect(queries).toBe(1);
    answer = async () => metadata('Segundo');
    cache.invalidate('i1', '1@g.us');
    expect((await cache.get(socket, 'i1', '1@g.us', ME))?.subject).toBe('Segundo');
    expect(queries).toBe(2);
    answer = async () => Promise.reject(new Error('timed out'));
    cache.invalidate('i1', '1@g.us');
    expect((await cache.get(socket, 'i1', '1@g.us', ME))?.subject).toBe('Segundo');
  });

  it('should take the groups cache metadata instead of a query', async () => {
    const socket = { groupMetadata: () => Promise.reject(new Error('not asked')) } as unknown as WASocket;
    const cache = new GroupInfoCache(logger);
    expect((await cache.get(socket, 'i1', '1@g.us', ME, metadata('Do cache')))?.subject).toBe('Do cache');
    expect((await cache.get(socket, 'i1', '1@g.us', ME))?.subject).toBe('Do cache');
  });

  it('should not wait for an answer while the socket is not read, ask once meanwhile, and keep the answer that comes later', async () => {
    let answer!: (value: GroupMetadata) => void;
    let queries = 0;
    const socket = {
      groupMetadata: () => {
        queries++;
        return new Promise<GroupMetadata>((resolve) => (answer = resolve));
      },
    } as unknown as WASocket;
    const cache = new GroupInfoCache(logger);
    const stuck = () => true;
    expect(await cache.get(socket, 'i1', '1@g.us', ME, undefined, stuck)).toBeNull();
    // The flood goes on: the query is out, no other is sent.
    expect(await cache.get(socket, 'i1', '1@g.us', ME, undefined, stuck)).toBeNull();
    expect(queries).toBe(1);
    answer(metadata('Depois do flood'));
    await Promise.resolve();
    expect((await cache.get(socket, 'i1', '1@g.us', ME, undefined, stuck))?.subject).toBe('Depois do flood');
    expect(queries).toBe(1);
  });
});
