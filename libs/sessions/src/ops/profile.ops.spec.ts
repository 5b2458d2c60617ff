import { ErrorCode } from '@gw/contracts';
import type { InboundMessageObserver } from '../messaging/inbound-message.observer';
import type { Session } from '../session/session';
import { profileOps, profileRequests } from './profile.ops';

const ME = '5511999999999@s.whatsapp.net';

/** A session whose socket records the profile calls and fails them with `failure` when given. */
function harness(failure?: unknown) {
  const calls: unknown[][] = [];
  const call =
    (name: string, answer?: unknown) =>
    async (...args: unknown[]) => {
      calls.push([name, ...args]);
      if (failure) throw failure;
      return answer;
    };
  const socket = {
    user: { id: '5511999999999:3@s.whatsapp.net' },
    updateProfileName: call('updateProfileName'),
    removeProfilePicture: call('removeProfilePicture'),
    updateProfilePicture: call('updateProfilePicture'),
    profilePictureUrl: call('profilePictureUrl', 'https://pps.whatsapp.net/me_image.jpg'),
  };
  const handler = { idle: async () => undefined };
  const session = { instanceId: 'i1', openSocket: () => socket } as unknown as Session;
  const media = { fetch: async () => ({ data: Buffer.from('ffd8ffe000104a464946', 'hex'), mimetype: 'image/jpeg', fileName: 'a.jpg' }) };
  return { ops: profileOps({ handlerFor: () => handler } as unknown as InboundMessageObserver, media as never), session, calls };
}

describe('profile ops', () => {
  it('should set the push name through app state and answer it', async () => {
    const { ops, session, calls } = harness();
    await expect(ops['profile.name'](session, { instanceId: 'i1', name: 'Loja' })).resolves.toEqual({ name: 'Loja' });
    expect(calls).toEqual([['updateProfileName', 'Loja']]);
  });

  it('should answer 409 while the app-state key has not arrived, and Forbidden when WhatsApp refuses with 403', async () => {
    const missingKey = harness(Object.assign(new Error('App state key not present!'), { isBoom: true }));
    await expect(missingKey.ops['profile.name'](missingKey.session, { instanceId: 'i1', name: 'Loja' })).rejects.toMatchObject({ code: ErrorCode.Conflict });
    const forbidden = harness(Object.assign(new Error('forbidden'), { isBoom: true, data: 403 }));
    await expect(forbidden.ops['profile.image'](forbidden.session, { instanceId: 'i1', picture: { remove: true } })).rejects.toMatchObject({
      code: ErrorCode.Forbidden,
    });
  });

  it('should remove the own picture, or set it and answer the URL WhatsApp serves', async () => {
    const removing = harness();
    await expect(removing.ops['profile.image'](removing.session, { instanceId: 'i1', picture: { remove: true } })).resolves.toEqual({ removed: true, url: '' });
    expect(removing.calls).toEqual([['removeProfilePicture', ME]]);
    const setting = harness();
    await expect(setting.ops['profile.image'](setting.session, { instanceId: 'i1', picture: { url: 'https://example.com/a.jpg' } })).resolves.toEqual({
      removed: false,
      url: 'https://pps.whatsapp.net/me_image.jpg',
    });
    expect(setting.calls.map(([name, jid]) => [name, jid])).toEqual([
      ['updateProfilePicture', ME],
      ['profilePictureUrl', ME],
    ]);
  });

  it('should answer a picture sharp cannot read as a 400', async () => {
    const unreadable = harness(new Error('Input buffer contains unsupported image format'));
    await expect(
      unreadable.ops['profile.image'](unreadable.session, { instanceId: 'i1', picture: { url: 'https://example.com/a.jpg' } }),
    ).rejects.toMatchObject({
      code: ErrorCode.BadRequest,
    });
  });

  it('should refuse a name that is empty or longer than WhatsApp takes, and a picture that is no source', () => {
    const bad = expect.objectContaining({ code: ErrorCode.BadRequest });
    expect(() => profileRequests['profile.name']({ name: '  ' }, 'i1')).toThrow(bad);
    expect(() => profileRequests['profile.name']({ name: 'x'.repeat(26) }, 'i1')).toThrow(bad);
    expect(profileRequests['profile.name']({ name: ' Loja ' }, 'i1')).toEqual({ instanceId: 'i1', name: 'Loja' });
    expect(() => profileRequests['profile.image']({ picture: { url: 'ftp://x' } }, 'i1')).toThrow(bad);
  });
});
