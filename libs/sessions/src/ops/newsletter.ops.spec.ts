import { ErrorCode, RpcError } from '@gw/contracts';
import type { Session } from '../session/session';
import { editedContent, newsletterOps, newsletterRequests } from './newsletter.ops';

const JID = '120363123456789012@newsletter';

describe('newsletter ops', () => {
  describe('editedContent', () => {
    it('should replace the text of text posts and the caption of image, video and document posts, keeping the rest', () => {
      expect(editedContent({ conversation: 'a' }, 'b')).toEqual({ conversation: 'b' });
      expect(editedContent({ extendedTextMessage: { text: 'a', matchedText: 'x' } }, 'b')).toEqual({ extendedTextMessage: { text: 'b', matchedText: 'x' } });
      expect(editedContent({ imageMessage: { url: 'u', caption: 'a' } }, 'b')).toEqual({ imageMessage: { url: 'u', caption: 'b' } });
      expect(editedContent({ videoMessage: { url: 'u' } }, 'b')).toEqual({ videoMessage: { url: 'u', caption: 'b' } });
      expect(editedContent({ documentMessage: { fileName: 'f.pdf' } }, 'b')).toEqual({ documentMessage: { fileName: 'f.pdf', caption: 'b' } });
    });

    it('should refuse other posts with a BadRequest', () => {
      expect(() => editedContent({ stickerMessage: { url: 'u' } }, 'b')).toThrow(expect.objectContaining({ code: ErrorCode.BadRequest }));
      expect(() => editedContent({ pollCreationMessage: { name: 'p' } }, 'b')).toThrow(RpcError);
    });
  });

  describe('request parsers', () => {
    it('should read post targets with their defaults and refuse one without messageid or serverid', () => {
      expect(newsletterRequests['newsletter.deletePost']({ jid: JID, serverId: 12 }, 'i1')).toEqual({
        instanceId: 'i1',
        jid: JID,
        serverId: 12,
        count: 50,
        maxPages: 3,
      });
      expect(newsletterRequests['newsletter.editPost']({ jid: JID, messageId: 'ABC', text: 'x', count: 10, maxPages: 2 }, 'i1')).toEqual({
        instanceId: 'i1',
        jid: JID,
        messageId: 'ABC',
        text: 'x',
        count: 10,
        maxPages: 2,
      });
      expect(() => newsletterRequests['newsletter.deletePost']({ jid: JID }, 'i1')).toThrow('messageid or serverid is required');
      expect(() => newsletterRequests['newsletter.editPost']({ jid: JID, serverId: 1, text: ' ' }, 'i1')).toThrow('text is required');
    });

    it('should check views, reactions, settings, search and admin requests', () => {
      expect(() => newsletterRequests['newsletter.viewed']({ jid: JID, serverIds: [] }, 'i1')).toThrow(RpcError);
      expect(() => newsletterRequests['newsletter.viewed']({ jid: JID, serverIds: [1, -2] }, 'i1')).toThrow(RpcError);
      expect(newsletterRequests['newsletter.react']({ jid: JID, serverId: 5, reaction: '', reactionId: 'bad id!' }, 'i1')).toEqual({
        instanceId: 'i1',
        jid: JID,
        serverId: 5,
        reaction: '',
      });
      expect(() => newsletterRequests['newsletter.settings']({ jid: JID, reactionCodes: 'ALL' }, 'i1')).toThrow('invalid reactionCodes');
      expect(newsletterRequests['newsletter.search']({ limit: 5, countryCodes: ['BR', 'bad', 3], view: 'x y' }, 'i1')).toEqual({
        instanceId: 'i1',
        limit: 5,
        view: 'RECOMMENDED',
        countryCodes: ['BR'],
      });
      expect(() => newsletterRequests['newsletter.admin']({ jid: JID, action: 'promote', user: '5511999999999@s.whatsapp.net' }, 'i1')).toThrow(RpcError);
      expect(() => newsletterRequests['newsletter.owner']({ jid: JID, user: '123' }, 'i1')).toThrow('phone must be a phone number');
      expect(() => newsletterRequests['newsletter.picture']({ jid: JID, picture: { url: 'file:///etc/passwd' } }, 'i1')).toThrow(RpcError);
    });
  });

  describe('newsletter.react', () => {
    it('should send the reaction stanza and answer Forbidden when WhatsApp refuses it in the ack', async () => {
      const sent: any[] = [];
      let ackError: string | undefined;
      const socket = {
        generateMessageTag: () => 'TAG1',
        query: async (node: any) => {
          sent.push(node);
          return { tag: 'ack', attrs: { id: node.attrs.id, ...(ackError ? { error: ackError } : {}) } };
        },
      };
      const session = { instanceId: 'i1', openSocket: () => socket } as unknown as Session;
      const ops = newsletterOps();
      await ops['newsletter.react'](session, { instanceId: 'i1', jid: JID, serverId: 7, reaction: '', reactionId: 'MYID01' });
      expect(sent[0]).toEqual({
        tag: 'message',
        attrs: { to: JID, id: 'MYID01', server_id: '7', type: 'reaction', edit: '7' },
        content: [{ tag: 'reaction', attrs: {} }],
      });
      ackError = '403';
      await expect(ops['newsletter.react'](session, { instanceId: 'i1', jid: JID, serverId: 7, reaction: '🔥' })).rejects.toMatchObject({
        code: ErrorCode.Forbidden,
      });
      ackError = '479';
      await expect(ops['newsletter.react'](session, { instanceId: 'i1', jid: JID, serverId: 7, reaction: '🔥' })).rejects.toMatchObject({
        code: ErrorCode.Refused,
      });
    });
  });
});
