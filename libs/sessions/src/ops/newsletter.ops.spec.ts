import { ErrorCode, RpcError } from '@gw/contracts';
import type { Session } from '../session/session';
import { proto } from '../baileys';
import type { BinaryNode } from '../baileys';
import { newsletterOps, newsletterRequests } from './newsletter.ops';
import { directoryVariables, editedContent, NEWSLETTER_MEX, postChangeNode, toPostRecord } from './newsletter-wire';

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

  /**
   * The hand-built nodes pinned as docs/protocol.md references them (checked 2026-12-02), and their answers
   * parsed in the shape the reference parses.
   */
  describe('protocol nodes', () => {
    /** A socket answering each sent node with `answer(node)`; every sent node is kept. */
    const fakeSocket = (answer: (node: BinaryNode) => BinaryNode, extra: Record<string, unknown> = {}) => {
      const sent: BinaryNode[] = [];
      const socket = {
        generateMessageTag: () => 'TAG1',
        query: async (node: BinaryNode) => {
          sent.push(node);
          return answer(node);
        },
        ...extra,
      };
      return { sent, session: { instanceId: 'i1', openSocket: () => socket } as unknown as Session };
    };
    const mexAnswer = (path: string, value: unknown) => (): BinaryNode => ({
      tag: 'iq',
      attrs: { type: 'result' },
      content: [{ tag: 'result', attrs: {}, content: Buffer.from(JSON.stringify({ data: { [path]: value } })) }],
    });
    const mexSent = (node: BinaryNode) => {
      expect(node).toMatchObject({ tag: 'iq', attrs: { type: 'get', to: 's.whatsapp.net', xmlns: 'w:mex' } });
      const [query] = node.content as BinaryNode[];
      expect(query.tag).toBe('query');
      return { queryId: query.attrs.query_id, body: JSON.parse(Buffer.from(query.content as Uint8Array).toString('utf-8')) };
    };
    const metadata = { id: JID, thread_metadata: { name: { text: 'Canal' } }, state: { type: 'ACTIVE' } };

    it('N1 should list the subscribed channels with the web id 6388546374527196 and no variables', async () => {
      const { sent, session } = fakeSocket(mexAnswer('xwa2_newsletter_subscribed', [metadata]));
      const reply = await newsletterOps()['newsletter.list'](session, { instanceId: 'i1' });
      expect(mexSent(sent[0])).toEqual({ queryId: '6388546374527196', body: { variables: {} } });
      expect(reply.newsletters.map((n) => n.id)).toEqual([JID]);
    });

    it('N2 should ask the posts with <messages type=jid count before> and read views_count as the child whatsmeow reads', async () => {
      const post: BinaryNode = {
        tag: 'message',
        attrs: { server_id: '120', id: 'P1', t: '1700000000', type: 'text' },
        content: [
          { tag: 'plaintext', attrs: {}, content: proto.Message.encode({ conversation: 'oi' }).finish() },
          { tag: 'views_count', attrs: { count: '42' } },
          { tag: 'reactions', attrs: {}, content: [{ tag: 'reaction', attrs: { code: '👍', count: '3' } }] },
        ],
      };
      const { sent, session } = fakeSocket(() => ({ tag: 'iq', attrs: {}, content: [{ tag: 'messages', attrs: { jid: JID }, content: [post] }] }));
      const reply = await newsletterOps()['newsletter.messages'](session, { instanceId: 'i1', jid: JID, count: 10, before: 200 });
      expect(sent[0]).toEqual({
        tag: 'iq',
        attrs: { id: 'TAG1', type: 'get', xmlns: 'newsletter', to: 's.whatsapp.net' },
        content: [{ tag: 'messages', attrs: { type: 'jid', jid: JID, count: '10', before: '200' } }],
      });
      expect(reply.posts).toEqual([
        {
          serverid: 120,
          messageid: 'P1',
          type: 'text',
          timestamp: '2023-11-14T22:13:20Z',
          viewsCount: 42,
          reactionCounts: { '👍': 3 },
          message: { conversation: 'oi' },
        },
      ]);
      // An attribute is not where WhatsApp puts the count.
      expect(toPostRecord({ tag: 'message', attrs: { server_id: '1', views_count: '9' } }).viewsCount).toBe(0);
    });

    it('N3 should edit a media post as whatsmeow does: type text, mediatype on <plaintext>, the post id', async () => {
      const image = proto.Message.encode({ imageMessage: { url: 'u', caption: 'old', mimetype: 'image/jpeg' } }).finish();
      const post: BinaryNode = {
        tag: 'message',
        attrs: { server_id: '7', id: 'P7', t: '1', type: 'media' },
        content: [{ tag: 'plaintext', attrs: {}, content: image }],
      };
      const { sent, session } = fakeSocket((node): BinaryNode =>
        node.tag === 'iq' ? { tag: 'iq', attrs: {}, content: [{ tag: 'messages', attrs: {}, content: [post] }] } : { tag: 'ack', attrs: { server_id: '7' } },
      );
      const reply = await newsletterOps()['newsletter.editPost'](session, { instanceId: 'i1', jid: JID, serverId: 7, count: 50, maxPages: 1, text: 'new' });
      const edit = sent[1];
      expect(edit.tag).toBe('message');
      expect(edit.attrs).toEqual({ to: JID, id: 'P7', type: 'text', edit: '3' });
      const [plaintext] = edit.content as BinaryNode[];
      expect(plaintext.tag).toBe('plaintext');
      expect(plaintext.attrs).toEqual({ mediatype: 'image' });
      expect(proto.Message.decode(plaintext.content as Uint8Array).imageMessage?.caption).toBe('new');
      expect(reply).toMatchObject({ targetserverid: 7, messageid: 'P7' });
      expect(postChangeNode(JID, 'T', '3', { conversation: 'x' }).content).toEqual([
        { tag: 'plaintext', attrs: {}, content: Buffer.from(proto.Message.encode({ conversation: 'x' }).finish()) },
      ]);
      expect((postChangeNode(JID, 'T', '3', { videoMessage: { gifPlayback: true } }).content as BinaryNode[])[0].attrs).toEqual({ mediatype: 'gif' });
      expect((postChangeNode(JID, 'T', '3', { documentMessage: {} }).content as BinaryNode[])[0].attrs).toEqual({ mediatype: 'document' });
    });

    it('N4 should delete a post with edit=8, type text and an empty <plaintext>', () => {
      expect(postChangeNode(JID, 'P7', '8', null)).toEqual({
        tag: 'message',
        attrs: { to: JID, id: 'P7', type: 'text', edit: '8' },
        content: [{ tag: 'plaintext', attrs: {}, content: Buffer.alloc(0) }],
      });
    });

    it('N5 should mark posts viewed with a view receipt listing their server ids', async () => {
      const { sent, session } = fakeSocket(() => ({ tag: 'ack', attrs: {} }));
      await newsletterOps()['newsletter.viewed'](session, { instanceId: 'i1', jid: JID, serverIds: [3, 4] });
      expect(sent[0]).toEqual({
        tag: 'receipt',
        attrs: { to: JID, type: 'view', id: 'TAG1' },
        content: [
          {
            tag: 'list',
            attrs: {},
            content: [
              { tag: 'item', attrs: { server_id: '3' } },
              { tag: 'item', attrs: { server_id: '4' } },
            ],
          },
        ],
      });
    });

    it('N7 should set the reaction setting with rc14 and WA Web update id and variables', async () => {
      const { sent, session } = fakeSocket(mexAnswer('xwa2_newsletter_update', metadata));
      await newsletterOps()['newsletter.settings'](session, { instanceId: 'i1', jid: JID, reactionCodes: 'basic' });
      expect(mexSent(sent[0])).toEqual({
        queryId: '24250201037901610',
        body: { variables: { newsletter_id: JID, updates: { settings: { reaction_codes: { value: 'BASIC' } } } } },
      });
    });

    it('N8 should browse the directory with WA Web current list id and variables, and read its page', async () => {
      const { sent, session } = fakeSocket(
        mexAnswer('xwa2_newsletters_directory_list', { result: [metadata], page_info: { hasNextPage: true, endCursor: 'CUR2' } }),
      );
      const reply = await newsletterOps()['newsletter.search'](session, { instanceId: 'i1', limit: 5, view: 'TRENDING', countryCodes: ['BR'] });
      expect(mexSent(sent[0])).toEqual({
        queryId: '26125047313831973',
        body: { variables: { input: { view: 'TRENDING', filters: { country_codes: ['BR'], categories: [] }, limit: 5 }, fetch_status_metadata: false } },
      });
      expect(reply).toEqual({ after: 'CUR2', data: [expect.objectContaining({ id: JID })] });
      expect(directoryVariables({ limit: 5, view: 'RECOMMENDED', countryCodes: [], after: 'C1' })).toMatchObject({ input: { start_cursor: 'C1' } });
    });

    it('N9 should search the directory with WA Web current search id and variables', async () => {
      const { sent, session } = fakeSocket(mexAnswer('xwa2_newsletters_directory_search', { result: [metadata], page_info: { hasNextPage: false } }));
      const reply = await newsletterOps()['newsletter.search'](session, {
        instanceId: 'i1',
        limit: 3,
        view: 'RECOMMENDED',
        countryCodes: [],
        searchText: 'news',
        after: 'C9',
      });
      expect(mexSent(sent[0])).toEqual({
        queryId: '26301059626252132',
        body: { variables: { input: { search_text: 'news', categories: [], limit: 3, start_cursor: 'C9' }, fetch_status_metadata: false } },
      });
      expect(reply.after).toBeNull();
    });

    it('N10-N12 should invite, revoke and accept channel admins with WA Web ids, naming the user by LID', async () => {
      const lidMapping = { getLIDForPN: async () => '99887766@lid' };
      const paths: Record<string, string> = {
        [NEWSLETTER_MEX.ADMIN_INVITE.id]: 'xwa2_newsletter_admin_invite_create',
        [NEWSLETTER_MEX.ADMIN_INVITE_REVOKE.id]: 'xwa2_newsletter_admin_invite_revoke',
        [NEWSLETTER_MEX.ADMIN_INVITE_ACCEPT.id]: 'xwa2_newsletter_admin_invite_accept',
      };
      const { sent, session } = fakeSocket((node) => mexAnswer(paths[mexSent(node).queryId], { id: '99887766@lid' })(), { signalRepository: { lidMapping } });
      const ops = newsletterOps();
      await ops['newsletter.admin'](session, { instanceId: 'i1', jid: JID, action: 'invite', user: '5511999999999@s.whatsapp.net' });
      await ops['newsletter.admin'](session, { instanceId: 'i1', jid: JID, action: 'revoke', user: '99887766@lid' });
      await ops['newsletter.adminAccept'](session, { instanceId: 'i1', jid: JID });
      expect(sent.map(mexSent)).toEqual([
        { queryId: '9387141988078609', body: { variables: { newsletter_id: JID, user_id: '99887766@lid' } } },
        { queryId: '9656078347839416', body: { variables: { newsletter_id: JID, user_id: '99887766@lid' } } },
        { queryId: '9580828702035549', body: { variables: { newsletter_id: JID } } },
      ]);
    });

    it('N0 should throw a GraphQL error code as a bus error (the relay refusing an unknown query is 400)', async () => {
      const { session } = fakeSocket(() => ({
        tag: 'iq',
        attrs: {},
        content: [
          {
            tag: 'result',
            attrs: {},
            content: Buffer.from(
              JSON.stringify({
                data: null,
                errors: [{ message: 'Bad Request', path: [], extensions: { error_code: 400, severity: 'CRITICAL', is_retryable: false } }],
              }),
            ),
          },
        ],
      }));
      await expect(newsletterOps()['newsletter.list'](session, { instanceId: 'i1' })).rejects.toMatchObject({ code: ErrorCode.BadRequest });
    });
  });
});
