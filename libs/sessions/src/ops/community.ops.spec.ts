import type { BinaryNode } from '../baileys';
import type { Session } from '../session/session';
import { communityOps } from './community.ops';

/** G1, pinned as docs/protocol.md references it (rc14 communityCreate; whatsmeow group.go:54-110; checked 2026-12-02). */
describe('community ops', () => {
  it('G1 should create a community with the w:g2 create iq of rc14 and read it back', async () => {
    const sent: BinaryNode[] = [];
    const socket = {
      user: { id: '5511888888888:7@s.whatsapp.net' },
      authState: { creds: { me: { id: '5511888888888:7@s.whatsapp.net' } } },
      query: async (node: BinaryNode): Promise<BinaryNode> => {
        sent.push(node);
        return { tag: 'iq', attrs: {}, content: [{ tag: 'group', attrs: { id: '120363000000000001' } }] };
      },
      groupMetadata: async (jid: string) => ({ id: jid, subject: 'Bairro', owner: '5511888888888@s.whatsapp.net', participants: [], isCommunity: true }),
    };
    const session = { instanceId: 'i1', openSocket: () => socket } as unknown as Session;
    const created = await communityOps()['community.create'](session, { instanceId: 'i1', name: 'Bairro', description: 'Avisos' });
    expect(sent).toEqual([
      {
        tag: 'iq',
        attrs: { type: 'set', xmlns: 'w:g2', to: '@g.us' },
        content: [
          {
            tag: 'create',
            attrs: { subject: 'Bairro' },
            content: [
              {
                tag: 'description',
                attrs: { id: expect.stringMatching(/^[0-9A-F]{12}$/) },
                content: [{ tag: 'body', attrs: {}, content: Buffer.from('Avisos') }],
              },
              { tag: 'parent', attrs: { default_membership_approval_mode: 'request_required' } },
              { tag: 'allow_non_admin_sub_group_creation', attrs: {} },
              { tag: 'create_general_chat', attrs: {} },
            ],
          },
        ],
      },
    ]);
    expect(created).toMatchObject({ JID: '120363000000000001@g.us' });
  });
});
