import type { GroupMetadata } from '../baileys';
import { GroupMetadataCache, groupNotificationOf } from './group-metadata-cache';

const group = (id: string, subject = id) => ({ id, subject, participants: [] }) as unknown as GroupMetadata;

describe('GroupMetadataCache', () => {
  let now = 1_000;
  const cache = () => new GroupMetadataCache(() => now);

  it('should answer a group until it is dropped by a notification or too old', () => {
    const groups = cache();
    groups.put('i1', group('1@g.us', 'A'));
    expect(groups.get('i1', '1@g.us')?.subject).toBe('A');
    expect(groups.get('i2', '1@g.us')).toBeUndefined();
    groups.invalidate('i1', '1@g.us', false);
    expect(groups.get('i1', '1@g.us')).toBeUndefined();
    groups.put('i1', group('1@g.us', 'B'));
    now += 10 * 60_000 + 1;
    expect(groups.get('i1', '1@g.us')).toBeUndefined();
  });

  it('should answer the list only while it and each of its groups are fresh', () => {
    const groups = cache();
    expect(groups.list('i1')).toBeUndefined();
    groups.putList('i1', [group('1@g.us'), group('2@g.us')]);
    expect(groups.list('i1')?.map((entry) => entry.id)).toEqual(['1@g.us', '2@g.us']);
    groups.invalidate('i1', '2@g.us', false);
    expect(groups.list('i1')).toBeUndefined();
    groups.put('i1', group('2@g.us'));
    expect(groups.list('i1')).toHaveLength(2);
    groups.put('i1', group('3@g.us'));
    expect(groups.list('i1')).toHaveLength(3);
    groups.remove('i1', '1@g.us');
    expect(groups.list('i1')?.map((entry) => entry.id)).toEqual(['2@g.us', '3@g.us']);
    groups.invalidate('i1', '2@g.us', true);
    groups.put('i1', group('2@g.us'));
    expect(groups.list('i1')).toBeUndefined();
    groups.putList('i1', [group('4@g.us')]);
    groups.forget('i1');
    expect(groups.list('i1')).toBeUndefined();
  });

  it('should tell group notifications that change membership from others', () => {
    const node = (type: string, tag: string) => ({ attrs: { from: '1@g.us', type }, content: [{ tag, attrs: {} }] });
    expect(groupNotificationOf(node('w:gp2', 'subject'))).toEqual({ groupJid: '1@g.us', membership: false });
    expect(groupNotificationOf(node('w:gp2', 'add'))).toEqual({ groupJid: '1@g.us', membership: true });
    expect(groupNotificationOf(node('picture', 'set'))).toEqual({ groupJid: '1@g.us', membership: false });
    expect(groupNotificationOf({ attrs: { from: '5511@s.whatsapp.net', type: 'picture' } })).toBeNull();
    expect(groupNotificationOf({ attrs: { from: '1@g.us', type: 'encrypt' } })).toBeNull();
  });
});
