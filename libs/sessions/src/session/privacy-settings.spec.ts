import { ErrorCode, RpcError, type PrivacySettings } from '@gw/contracts';
import type { BinaryNode, WASocket } from '../baileys';
import { readPrivacySettings, readStatusPrivacy, validatePrivacySettings } from './privacy-settings';

describe(validatePrivacySettings.name, () => {
  it('should accept the keys and values of the API', () => {
    expect(validatePrivacySettings({ groupadd: 'contacts', readreceipts: 'none', online: 'match_last_seen', calladd: 'known' })).toHaveLength(4);
  });

  // What the bus may carry from another version of the gateway: not the contract's keys or values.
  it.each([[{}], [{ unknown: 'all' }], [{ readreceipts: 'contacts' }], [{ online: 'none' }]])('should refuse %j before sending anything', (given) => {
    const settings = given as PrivacySettings;
    expect(() => validatePrivacySettings(settings)).toThrow(RpcError);
    try {
      validatePrivacySettings(settings);
    } catch (error) {
      expect((error as RpcError).code).toBe(ErrorCode.BadRequest);
    }
  });
});

describe(readPrivacySettings.name, () => {
  it("should answer the API's seven settings with the values they take, and leave out what else WhatsApp reports", async () => {
    const socket = {
      fetchPrivacySettings: async () => ({ readreceipts: 'none', last: 'contacts', online: 'match_last_seen', groupadd: 'sometimes', messages: 'all' }),
    } as unknown as WASocket;
    await expect(readPrivacySettings(socket)).resolves.toEqual({ readreceipts: 'none', last: 'contacts', online: 'match_last_seen' });
  });
});

/** S1: the status audience query, pinned as whatsmeow's GetStatusPrivacy sends and reads it (docs/protocol.md, checked 2026-12-02). */
describe(readStatusPrivacy.name, () => {
  const socketAnswering = (answer: () => Promise<BinaryNode>) => {
    const sent: BinaryNode[] = [];
    return {
      sent,
      socket: {
        query: async (node: BinaryNode) => {
          sent.push(node);
          return answer();
        },
      },
    };
  };

  it('should send <iq xmlns=status type=get><privacy/> and take the default list', async () => {
    const { sent, socket } = socketAnswering(async (): Promise<BinaryNode> => ({
      tag: 'iq',
      attrs: {},
      content: [
        {
          tag: 'privacy',
          attrs: {},
          content: [
            { tag: 'list', attrs: { type: 'whitelist' }, content: [{ tag: 'user', attrs: { jid: '1@s.whatsapp.net' } }] },
            { tag: 'list', attrs: { type: 'blacklist', default: 'true' }, content: [{ tag: 'user', attrs: { jid: '2@s.whatsapp.net' } }] },
          ],
        },
      ],
    }));
    await expect(readStatusPrivacy(socket)).resolves.toEqual({ type: 'blacklist', list: ['2@s.whatsapp.net'] });
    expect(sent).toEqual([{ tag: 'iq', attrs: { xmlns: 'status', to: 's.whatsapp.net', type: 'get' }, content: [{ tag: 'privacy', attrs: {} }] }]);
  });

  it('should take a 404 (no audience stored) as the default audience, contacts, and let other errors through', async () => {
    const missing = socketAnswering(async () => {
      throw Object.assign(new Error('item-not-found'), { data: 404 });
    });
    await expect(readStatusPrivacy(missing.socket)).resolves.toEqual({ type: 'contacts', list: [] });
    const refused = socketAnswering(async () => {
      throw Object.assign(new Error('internal-server-error'), { data: 500 });
    });
    await expect(readStatusPrivacy(refused.socket)).rejects.toThrow('internal-server-error');
  });
});
