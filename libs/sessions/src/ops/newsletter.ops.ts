import { ErrorCode, RpcError } from '@gw/contracts';
import type { InstanceRpc } from '@gw/contracts';
import { getBinaryNodeChild, getBinaryNodeChildren, proto } from '../baileys';
import type { BinaryNode, WASocket } from '../baileys';
import type { MediaSource } from '../outbound/media-source';
import type { OpHandlers, OpRequestParsers } from './op-handler';
import { otherRefusal } from './group-object';
import { loadPicture, pictureSourceOf } from './picture-source';

/** The ops of the gateway's `newsletter/` area: channels the instance creates, follows and runs. */
export type NewsletterOps =
  | 'newsletter.create'
  | 'newsletter.info'
  | 'newsletter.link'
  | 'newsletter.list'
  | 'newsletter.subscription'
  | 'newsletter.name'
  | 'newsletter.description'
  | 'newsletter.delete'
  | 'newsletter.messages'
  | 'newsletter.live'
  | 'newsletter.editPost'
  | 'newsletter.deletePost'
  | 'newsletter.viewed'
  | 'newsletter.react'
  | 'newsletter.picture'
  | 'newsletter.settings'
  | 'newsletter.search'
  | 'newsletter.admin'
  | 'newsletter.adminAccept'
  | 'newsletter.owner';

type NewsletterMetadata = InstanceRpc['newsletter.info']['reply'];
type NewsletterPostRecord = InstanceRpc['newsletter.messages']['reply']['posts'][number];

/** A channel's JID: WhatsApp's ids are digits. */
export const NEWSLETTER_JID = /^\d{5,30}@newsletter$/;
/** An invite key (what follows https://whatsapp.com/channel/). */
export const NEWSLETTER_INVITE = /^[A-Za-z0-9_-]{6,64}$/;
export const MAX_NEWSLETTER_NAME = 100;
export const MAX_NEWSLETTER_DESCRIPTION = 2048;
/** The most posts one read asks WhatsApp for. */
export const MAX_NEWSLETTER_POSTS = 100;
const SUBSCRIPTION_ACTIONS = ['follow', 'unfollow', 'mute', 'unmute'] as const;
/**
 * The `w:mex` queries rc14 has no call for, with the WhatsApp Web module each id is read from (docs/protocol.md
 * keeps the table, the references and the date they were checked). SUBSCRIBED is whatsmeow's and WA Web's web id
 * (whatsmeow newsletter.go:119; its desktop id 8621797084555037 is for non-web payloads). UPDATE_METADATA is
 * rc14's own (QueryIds.UPDATE_METADATA; its newsletterUpdate always sends `settings: null`, so the reaction setting
 * is sent here). The directory and admin-invite ids are current WA Web's: the 2023 directory ids and the Android
 * admin-invite ids this file used before are not WA Web's, and Baileys presents itself as WA Web.
 */
export const NEWSLETTER_MEX = {
  SUBSCRIBED: { id: '6388546374527196', path: 'xwa2_newsletter_subscribed' },
  UPDATE_METADATA: { id: '24250201037901610', path: 'xwa2_newsletter_update' },
  /** WAWebMexFetchNewsletterDirectoryListJob. */
  DIRECTORY_LIST: { id: '26125047313831973', path: 'xwa2_newsletters_directory_list' },
  /** WAWebMexFetchNewsletterDirectorySearchResultsJob (the newest Cobalt and WA Web's published mex bindings; an older Cobalt had 9699865846759651). */
  DIRECTORY_SEARCH: { id: '26301059626252132', path: 'xwa2_newsletters_directory_search' },
  /** WAWebMexCreateNewsletterAdminInviteJob. */
  ADMIN_INVITE: { id: '9387141988078609', path: 'xwa2_newsletter_admin_invite_create' },
  /** WAWebMexRevokeNewsletterAdminInviteJob. */
  ADMIN_INVITE_REVOKE: { id: '9656078347839416', path: 'xwa2_newsletter_admin_invite_revoke' },
  /** WAWebMexAcceptNewsletterAdminInviteJob. */
  ADMIN_INVITE_ACCEPT: { id: '9580828702035549', path: 'xwa2_newsletter_admin_invite_accept' },
} as const;
const MEX = NEWSLETTER_MEX;
const NOT_FOUND = 'newsletter not found';
/** A channel picture's largest source (the reference: above 1 MB is refused). */
export const MAX_NEWSLETTER_PICTURE_BYTES = 1024 * 1024;
const REACTION_CODES = ['all', 'basic', 'none', 'blocklist'] as const;
const ADMIN_ACTIONS = ['invite', 'revoke', 'remove'] as const;
const USER_JID = /^\d{5,20}@s\.whatsapp\.net$|^\d{1,20}@lid$/;
/** Post types an edit can change (their text or caption). */
const EDITABLE = ['conversation', 'extendedTextMessage', 'imageMessage', 'videoMessage', 'documentMessage'] as const;

function jidOf(raw: Record<string, unknown>): string {
  const jid = typeof raw.jid === 'string' ? raw.jid : '';
  if (!NEWSLETTER_JID.test(jid)) throw new RpcError(ErrorCode.BadRequest, 'invalid newsletter id');
  return jid;
}

function nameOf(raw: Record<string, unknown>): string {
  const name = typeof raw.name === 'string' ? raw.name : '';
  if (!name.trim() || name.length > MAX_NEWSLETTER_NAME) throw new RpcError(ErrorCode.BadRequest, `name must be 1 to ${MAX_NEWSLETTER_NAME} characters`);
  return name;
}

function descriptionOf(raw: Record<string, unknown>): string {
  if (typeof raw.description !== 'string' || raw.description.length > MAX_NEWSLETTER_DESCRIPTION)
    throw new RpcError(ErrorCode.BadRequest, `description must be a string of at most ${MAX_NEWSLETTER_DESCRIPTION} characters`);
  return raw.description;
}

export const newsletterRequests = {
  'newsletter.create': (raw, instanceId) => {
    const picture = raw.picture === undefined ? undefined : pictureSourceOf(raw.picture, 'picture');
    if (picture && 'remove' in picture) throw new RpcError(ErrorCode.BadRequest, 'picture must be a URL or a staged upload');
    return { instanceId, name: nameOf(raw), description: descriptionOf({ description: raw.description ?? '' }), ...(picture ? { picture } : {}) };
  },
  'newsletter.info': (raw, instanceId) => ({ instanceId, jid: jidOf(raw) }),
  'newsletter.link': (raw, instanceId) => {
    const key = typeof raw.key === 'string' ? raw.key : '';
    if (!NEWSLETTER_INVITE.test(key)) throw new RpcError(ErrorCode.BadRequest, 'invalid invite key');
    return { instanceId, key };
  },
  'newsletter.list': (_raw, instanceId) => ({ instanceId }),
  'newsletter.subscription': (raw, instanceId) => {
    const action = SUBSCRIPTION_ACTIONS.find((known) => known === raw.action);
    if (!action) throw new RpcError(ErrorCode.BadRequest, `action must be one of ${SUBSCRIPTION_ACTIONS.join(', ')}`);
    return { instanceId, jid: jidOf(raw), action };
  },
  'newsletter.name': (raw, instanceId) => ({ instanceId, jid: jidOf(raw), name: nameOf(raw) }),
  'newsletter.description': (raw, instanceId) => ({ instanceId, jid: jidOf(raw), description: descriptionOf(raw) }),
  'newsletter.delete': (raw, instanceId) => ({ instanceId, jid: jidOf(raw) }),
  'newsletter.messages': (raw, instanceId) => {
    const count = raw.count;
    if (typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > MAX_NEWSLETTER_POSTS)
      throw new RpcError(ErrorCode.BadRequest, `count must be a whole number from 1 to ${MAX_NEWSLETTER_POSTS}`);
    const before = raw.before;
    if (before !== undefined && (typeof before !== 'number' || !Number.isSafeInteger(before) || before < 1))
      throw new RpcError(ErrorCode.BadRequest, 'beforeid must be a positive whole number');
    return { instanceId, jid: jidOf(raw), count, ...(before === undefined ? {} : { before }) };
  },
  'newsletter.live': (raw, instanceId) => ({ instanceId, jid: jidOf(raw) }),
  'newsletter.editPost': (raw, instanceId) => {
    const text = typeof raw.text === 'string' ? raw.text : '';
    if (!text.trim() || text.length > 65_536) throw new RpcError(ErrorCode.BadRequest, 'text is required');
    return { ...postTargetOf(raw, instanceId), text };
  },
  'newsletter.deletePost': (raw, instanceId) => postTargetOf(raw, instanceId),
  'newsletter.viewed': (raw, instanceId) => {
    const ids = raw.serverIds;
    if (!Array.isArray(ids) || !ids.length || ids.length > 100 || !ids.every((id): id is number => Number.isSafeInteger(id) && (id as number) > 0))
      throw new RpcError(ErrorCode.BadRequest, 'serverids must be 1 to 100 positive server ids');
    return { instanceId, jid: jidOf(raw), serverIds: ids };
  },
  'newsletter.react': (raw, instanceId) => {
    if (!Number.isSafeInteger(raw.serverId) || (raw.serverId as number) < 1) throw new RpcError(ErrorCode.BadRequest, 'serverid is required');
    if (typeof raw.reaction !== 'string' || raw.reaction.length > 32) throw new RpcError(ErrorCode.BadRequest, 'reaction must be an emoji or empty');
    const reactionId = typeof raw.reactionId === 'string' && /^[A-Za-z0-9]{6,64}$/.test(raw.reactionId) ? raw.reactionId : undefined;
    return { instanceId, jid: jidOf(raw), serverId: raw.serverId as number, reaction: raw.reaction, ...(reactionId ? { reactionId } : {}) };
  },
  'newsletter.picture': (raw, instanceId) => ({ instanceId, jid: jidOf(raw), picture: pictureSourceOf(raw.picture, 'picture') }),
  'newsletter.settings': (raw, instanceId) => {
    const reactionCodes = REACTION_CODES.find((known) => known === raw.reactionCodes);
    if (!reactionCodes) throw new RpcError(ErrorCode.BadRequest, 'invalid reactionCodes');
    return { instanceId, jid: jidOf(raw), reactionCodes };
  },
  'newsletter.search': (raw, instanceId) => {
    const limit = raw.limit;
    if (!Number.isInteger(limit) || (limit as number) < 1 || (limit as number) > 100) throw new RpcError(ErrorCode.BadRequest, 'limit must be from 1 to 100');
    const view = typeof raw.view === 'string' && /^[A-Z_]{1,40}$/.test(raw.view) ? raw.view : 'RECOMMENDED';
    const countryCodes = Array.isArray(raw.countryCodes)
      ? raw.countryCodes.filter((code): code is string => typeof code === 'string' && /^[A-Z]{2}$/.test(code))
      : [];
    const searchText = typeof raw.searchText === 'string' && raw.searchText.trim() ? raw.searchText.trim().slice(0, 200) : undefined;
    const after = typeof raw.after === 'string' && raw.after ? raw.after.slice(0, 500) : undefined;
    return { instanceId, limit: limit as number, view, countryCodes, ...(searchText ? { searchText } : {}), ...(after ? { after } : {}) };
  },
  'newsletter.admin': (raw, instanceId) => {
    const action = ADMIN_ACTIONS.find((known) => known === raw.action);
    if (!action) throw new RpcError(ErrorCode.BadRequest, `action must be one of ${ADMIN_ACTIONS.join(', ')}`);
    return { instanceId, jid: jidOf(raw), action, user: userOf(raw.user) };
  },
  'newsletter.adminAccept': (raw, instanceId) => ({ instanceId, jid: jidOf(raw) }),
  'newsletter.owner': (raw, instanceId) => ({ instanceId, jid: jidOf(raw), user: userOf(raw.user), quitAdmin: raw.quitAdmin === true }),
} satisfies OpRequestParsers<NewsletterOps>;

function userOf(value: unknown): string {
  if (typeof value !== 'string' || !USER_JID.test(value)) throw new RpcError(ErrorCode.BadRequest, 'phone must be a phone number');
  return value;
}

function postTargetOf(raw: Record<string, unknown>, instanceId: string) {
  const messageId = typeof raw.messageId === 'string' && /^[A-Za-z0-9._:-]{1,128}$/.test(raw.messageId) ? raw.messageId : undefined;
  const serverId = Number.isSafeInteger(raw.serverId) && (raw.serverId as number) > 0 ? (raw.serverId as number) : undefined;
  if (!messageId && serverId === undefined) throw new RpcError(ErrorCode.BadRequest, 'messageid or serverid is required');
  const count = Number.isInteger(raw.count) && (raw.count as number) >= 1 && (raw.count as number) <= MAX_NEWSLETTER_POSTS ? (raw.count as number) : 50;
  const maxPages = Number.isInteger(raw.maxPages) && (raw.maxPages as number) >= 1 && (raw.maxPages as number) <= 20 ? (raw.maxPages as number) : 3;
  return { instanceId, jid: jidOf(raw), ...(messageId ? { messageId } : {}), ...(serverId === undefined ? {} : { serverId }), count, maxPages };
}

export function newsletterOps(media?: MediaSource): OpHandlers<NewsletterOps> {
  return {
    'newsletter.create': async (session, request) => {
      const socket = session.openSocket();
      // The picture is fetched and checked first: a bad one leaves no channel behind.
      const picture = request.picture ? await loadPicture(media, request.instanceId, request.picture, 'picture', MAX_NEWSLETTER_PICTURE_BYTES) : undefined;
      const created = await newsletterCall('error creating newsletter', () => socket.newsletterCreate(request.name, request.description || undefined));
      if (picture) {
        try {
          await socket.newsletterUpdatePicture(created.id, picture);
        } catch (error) {
          const refusal = newsletterRefusal(error, 'error setting the new newsletter picture');
          const detail = refusal instanceof Error ? refusal.message : String(refusal);
          throw new RpcError(ErrorCode.Refused, `newsletter ${created.id} was created, but WhatsApp refused its picture: ${detail}`);
        }
      }
      // The create answer is parsed by Baileys into its own shape; the channel is read back as WhatsApp describes it.
      return readMetadata(socket, 'jid', created.id, 'error creating newsletter');
    },
    'newsletter.info': async (session, request) => readMetadata(session.openSocket(), 'jid', request.jid, 'error getting newsletter info'),
    'newsletter.link': async (session, request) => readMetadata(session.openSocket(), 'invite', request.key, 'error getting newsletter info'),
    'newsletter.list': async (session) => {
      const socket = session.openSocket();
      const list = await newsletterCall('error listing newsletters', () => subscribedNewsletters(socket));
      return { newsletters: list.map(toNewsletterMetadata).filter((entry): entry is NewsletterMetadata => entry !== null) };
    },
    'newsletter.subscription': async (session, request) => {
      const socket = session.openSocket();
      const what = `error trying to ${request.action} newsletter`;
      // WhatsApp answers a follow of a channel it does not know alike: the channel is read first (a 404).
      await readMetadata(socket, 'jid', request.jid, what);
      const calls = {
        follow: () => socket.newsletterFollow(request.jid),
        unfollow: () => socket.newsletterUnfollow(request.jid),
        mute: () => socket.newsletterMute(request.jid),
        unmute: () => socket.newsletterUnmute(request.jid),
      } as const;
      await newsletterCall(what, calls[request.action]);
      return { ok: true };
    },
    'newsletter.name': async (session, request) => {
      const socket = session.openSocket();
      await newsletterCall('error updating newsletter name', () => socket.newsletterUpdateName(request.jid, request.name));
      return { ok: true };
    },
    'newsletter.description': async (session, request) => {
      const socket = session.openSocket();
      await newsletterCall('error updating newsletter description', () => socket.newsletterUpdateDescription(request.jid, request.description));
      return { ok: true };
    },
    'newsletter.delete': async (session, request) => {
      const socket = session.openSocket();
      await newsletterCall('error deleting newsletter', () => socket.newsletterDelete(request.jid));
      return { ok: true };
    },
    'newsletter.messages': async (session, request) => {
      const socket = session.openSocket();
      const posts = await newsletterCall('error getting newsletter messages', () => fetchPosts(socket, request.jid, request.count, request.before));
      return { posts: posts.map(toPostRecord) };
    },
    'newsletter.live': async (session, request) => {
      const socket = session.openSocket();
      const granted = await newsletterCall('error subscribing to newsletter updates', () => socket.subscribeNewsletterUpdates(request.jid));
      return { seconds: Number(granted?.duration) || 0 };
    },
    'newsletter.editPost': async (session, request) => {
      const socket = session.openSocket();
      const what = 'error editing newsletter message';
      const post = await findPost(socket, request, what);
      const message = editedContent(postContentMessage(post), request.text);
      return changePost(socket, request.jid, post, '3', message, what);
    },
    'newsletter.deletePost': async (session, request) => {
      const socket = session.openSocket();
      const what = 'error deleting newsletter message';
      const post = await findPost(socket, request, what);
      return changePost(socket, request.jid, post, '8', null, what);
    },
    'newsletter.viewed': async (session, request) => {
      const socket = session.openSocket();
      // whatsmeow's NewsletterMarkViewed: a `view` receipt listing the posts, answered by the server's ack.
      await newsletterCall('error marking newsletter messages viewed', () =>
        socket.query({
          tag: 'receipt',
          attrs: { to: request.jid, type: 'view', id: socket.generateMessageTag() },
          content: [{ tag: 'list', attrs: {}, content: request.serverIds.map((id) => ({ tag: 'item', attrs: { server_id: String(id) } })) }],
        }),
      );
      return { ok: true };
    },
    'newsletter.react': async (session, request) => {
      const socket = session.openSocket();
      // rc14's newsletterReactMessage, with the reaction's own id when the caller gives one and the ack's refusal read.
      const ack = await newsletterCall('error reacting to newsletter message', () =>
        socket.query({
          tag: 'message',
          attrs: {
            to: request.jid,
            id: request.reactionId ?? socket.generateMessageTag(),
            server_id: String(request.serverId),
            type: 'reaction',
            ...(request.reaction ? {} : { edit: '7' }),
          },
          content: [{ tag: 'reaction', attrs: request.reaction ? { code: request.reaction } : {} }],
        }),
      );
      ackRefusal(ack, 'error reacting to newsletter message', 'this newsletter does not take that reaction');
      return { ok: true };
    },
    'newsletter.picture': async (session, request) => {
      const socket = session.openSocket();
      const what = 'error updating newsletter picture';
      if ('remove' in request.picture) {
        await newsletterCall(what, () => socket.newsletterRemovePicture(request.jid));
        return { ok: true };
      }
      const picture = await loadPicture(media, request.instanceId, request.picture, 'picture', MAX_NEWSLETTER_PICTURE_BYTES);
      await newsletterCall(what, () => socket.newsletterUpdatePicture(request.jid, picture));
      return { ok: true };
    },
    'newsletter.settings': async (session, request) => {
      const socket = session.openSocket();
      await newsletterCall('error updating newsletter settings', () =>
        mexQuery(socket, MEX.UPDATE_METADATA, {
          newsletter_id: request.jid,
          updates: { settings: { reaction_codes: { value: request.reactionCodes.toUpperCase() } } },
        }),
      );
      return { ok: true };
    },
    'newsletter.search': async (session, request) => {
      const socket = session.openSocket();
      const query = request.searchText ? MEX.DIRECTORY_SEARCH : MEX.DIRECTORY_LIST;
      const found = record(await newsletterCall('error searching newsletters', () => mexQuery(socket, query, directoryVariables(request))));
      const page = record(found.page_info);
      const list = Array.isArray(found.result) ? found.result : [];
      return {
        after: page.hasNextPage === true && typeof page.endCursor === 'string' ? page.endCursor : null,
        data: list.map(toNewsletterMetadata).filter((entry): entry is NewsletterMetadata => entry !== null),
      };
    },
    'newsletter.admin': async (session, request) => {
      const socket = session.openSocket();
      const what = `error trying to ${request.action === 'invite' ? 'invite' : request.action === 'revoke' ? 'revoke the invite of' : 'remove'} newsletter admin`;
      const user = await lidOf(socket, request.user);
      if (request.action === 'remove') await newsletterCall(what, () => socket.newsletterDemote(request.jid, user));
      else
        await newsletterCall(what, () =>
          mexQuery(socket, request.action === 'invite' ? MEX.ADMIN_INVITE : MEX.ADMIN_INVITE_REVOKE, { newsletter_id: request.jid, user_id: user }),
        );
      return { ok: true };
    },
    'newsletter.adminAccept': async (session, request) => {
      const socket = session.openSocket();
      await newsletterCall('error accepting newsletter admin invite', () => mexQuery(socket, MEX.ADMIN_INVITE_ACCEPT, { newsletter_id: request.jid }));
      return { ok: true };
    },
    'newsletter.owner': async (session, request) => {
      const socket = session.openSocket();
      const what = 'error transferring newsletter ownership';
      const user = await lidOf(socket, request.user);
      await newsletterCall(what, () => socket.newsletterChangeOwner(request.jid, user));
      if (request.quitAdmin) {
        const me = (socket.user?.lid ?? socket.user?.id ?? '').replace(/:\d+@/, '@');
        await newsletterCall(what, () => socket.newsletterDemote(request.jid, me));
      }
      return { ok: true };
    },
  };
}

type SearchRequest = InstanceRpc['newsletter.search']['request'];

/**
 * The directory queries' variables as WhatsApp Web builds them: WAWebMexFetchNewsletterDirectoryListJob
 * `{input: {view, filters: {country_codes, categories}, limit, start_cursor}, fetch_status_metadata}` and
 * WAWebMexFetchNewsletterDirectorySearchResultsJob `{input: {search_text, categories, limit, start_cursor},
 * fetch_status_metadata}`; the cursor is left out on the first page, and channel statuses are not asked for.
 */
export function directoryVariables(request: Omit<SearchRequest, 'instanceId'>): Record<string, unknown> {
  const cursor = request.after ? { start_cursor: request.after } : {};
  const input = request.searchText
    ? { search_text: request.searchText, categories: [], limit: request.limit, ...cursor }
    : { view: request.view, filters: { country_codes: request.countryCodes, categories: [] }, limit: request.limit, ...cursor };
  return { input, fetch_status_metadata: false };
}

/** The `<messages type=jid jid count before>` iq WhatsApp Web and whatsmeow send (rc14's newsletterFetchMessages cannot page back). */
async function fetchPosts(socket: WASocket, jid: string, count: number, before?: number): Promise<BinaryNode[]> {
  const result = await socket.query({
    tag: 'iq',
    attrs: { id: socket.generateMessageTag(), type: 'get', xmlns: 'newsletter', to: 's.whatsapp.net' },
    content: [{ tag: 'messages', attrs: { type: 'jid', jid, count: String(count), ...(before ? { before: String(before) } : {}) } }],
  });
  return getBinaryNodeChildren(getBinaryNodeChild(result, 'messages'), 'message');
}

type PostTarget = InstanceRpc['newsletter.deletePost']['request'];

/** The post named by message id or server id among the newest `count` × `maxPages` posts (NotFound otherwise). */
async function findPost(socket: WASocket, target: PostTarget, what: string): Promise<BinaryNode> {
  let before: number | undefined;
  for (let page = 0; page < target.maxPages; page++) {
    const posts = await newsletterCall(what, () => fetchPosts(socket, target.jid, target.count, before));
    const found = posts.find(
      (post) => (target.messageId && post.attrs.id === target.messageId) || (target.serverId !== undefined && Number(post.attrs.server_id) === target.serverId),
    );
    if (found) return found;
    const oldest = Math.min(...posts.map((post) => Number(post.attrs.server_id) || Number.POSITIVE_INFINITY));
    if (posts.length < target.count || !Number.isFinite(oldest)) break;
    before = oldest;
  }
  throw new RpcError(ErrorCode.NotFound, 'newsletter message not found in recent history');
}

function postContentMessage(post: BinaryNode): proto.IMessage {
  const content = getBinaryNodeChild(post, 'plaintext')?.content;
  if (!(content instanceof Uint8Array)) throw new RpcError(ErrorCode.BadRequest, 'this newsletter message cannot be edited: WhatsApp sent no content');
  return proto.Message.decode(content);
}

/** The post with its text (or caption) replaced; only text, image, video and document posts. */
export function editedContent(original: proto.IMessage, text: string): proto.IMessage {
  const kind = EDITABLE.find((field) => original[field]);
  switch (kind) {
    case 'conversation':
      return { conversation: text };
    case 'extendedTextMessage':
      return { extendedTextMessage: { ...original.extendedTextMessage, text } };
    case 'imageMessage':
      return { imageMessage: { ...original.imageMessage, caption: text } };
    case 'videoMessage':
      return { videoMessage: { ...original.videoMessage, caption: text } };
    case 'documentMessage':
      return { documentMessage: { ...original.documentMessage, caption: text } };
    default:
      throw new RpcError(ErrorCode.BadRequest, 'this newsletter message cannot be edited: only text, image, video and document posts');
  }
}

/**
 * The `mediatype` whatsmeow puts on a channel post's `<plaintext>` (send.go getMediaTypeFromMessage, for the kinds
 * an edit can carry): `image`, `video` (`gif` when played as one), `document`, `url` for a text with a link preview.
 */
export function postMediaType(message: proto.IMessage): string | undefined {
  if (message.imageMessage) return 'image';
  if (message.videoMessage) return message.videoMessage.gifPlayback ? 'gif' : 'video';
  if (message.documentMessage) return 'document';
  if (message.extendedTextMessage?.title != null) return 'url';
  return undefined;
}

/**
 * The stanza of an admin's edit (`edit="3"`, the new content) or deletion (`edit="8"`, no content) of a post, as
 * whatsmeow's sendNewsletter builds it (send.go:693-741): under the post's own message id, `type="text"` (the type
 * of the edit wrapper, whatever the post's own type), and the edited content's `mediatype` on `<plaintext>`.
 */
export function postChangeNode(jid: string, id: string, edit: '3' | '8', message: proto.IMessage | null): BinaryNode {
  const mediatype = message ? postMediaType(message) : undefined;
  return {
    tag: 'message',
    attrs: { to: jid, id, type: 'text', edit },
    content: [
      { tag: 'plaintext', attrs: mediatype ? { mediatype } : {}, content: message ? Buffer.from(proto.Message.encode(message).finish()) : Buffer.alloc(0) },
    ],
  };
}

/** An admin's edit or deletion of a post; the server's ack names the post's server id. */
async function changePost(socket: WASocket, jid: string, post: BinaryNode, edit: '3' | '8', message: proto.IMessage | null, what: string) {
  const id = post.attrs.id ?? '';
  const ack = await newsletterCall(what, () => socket.query(postChangeNode(jid, id, edit, message)));
  ackRefusal(ack, what, 'the instance is not the owner or an admin of this newsletter');
  const targetserverid = Number(post.attrs.server_id) || 0;
  return { jid, targetmessageid: id, targetserverid, messageid: id, serverid: Number(ack.attrs.server_id) || targetserverid };
}

/** A message ack carrying an error: 403 Forbidden, 404 NotFound, anything else Refused. */
function ackRefusal(ack: BinaryNode, what: string, forbidden: string): void {
  const error = ack.attrs.error;
  if (!error) return;
  if (error === '403' || error === '401') throw new RpcError(ErrorCode.Forbidden, `${what}: ${forbidden}`);
  if (error === '404') throw new RpcError(ErrorCode.NotFound, `${what}: newsletter message not found`);
  throw new RpcError(ErrorCode.Refused, `${what}: WhatsApp answered ${error}`);
}

/** The LID WhatsApp names newsletter users by (the number's JID when WhatsApp has no LID for it). */
async function lidOf(socket: WASocket, user: string): Promise<string> {
  if (user.endsWith('@lid')) return user;
  const lid = await socket.signalRepository.lidMapping.getLIDForPN(user).catch(() => null);
  return lid ? lid.replace(/:\d+@/, '@') : user;
}

async function readMetadata(socket: WASocket, type: 'jid' | 'invite', key: string, what: string): Promise<NewsletterMetadata> {
  const found = await newsletterCall(what, () => socket.newsletterMetadata(type, key));
  const metadata = toNewsletterMetadata(found);
  if (!metadata) throw new RpcError(ErrorCode.NotFound, `${what}: ${NOT_FOUND}`);
  return metadata;
}

/** The `w:mex` query rc14 has no call for: every channel the account follows or owns. */
async function subscribedNewsletters(socket: WASocket): Promise<unknown[]> {
  const list = await mexQuery(socket, MEX.SUBSCRIBED, {});
  return Array.isArray(list) ? list : [];
}

/** A `w:mex` GraphQL query as rc14's executeWMexQuery sends it; its `errors` thrown with the code as `data` (see newsletterRefusal). */
async function mexQuery(socket: WASocket, query: { id: string; path: string }, variables: Record<string, unknown>): Promise<unknown> {
  const result = await socket.query({
    tag: 'iq',
    attrs: { id: socket.generateMessageTag(), type: 'get', to: 's.whatsapp.net', xmlns: 'w:mex' },
    content: [{ tag: 'query', attrs: { query_id: query.id }, content: Buffer.from(JSON.stringify({ variables }), 'utf-8') }],
  });
  const content = getBinaryNodeChild(result, 'result')?.content;
  const text = Buffer.isBuffer(content) || content instanceof Uint8Array ? Buffer.from(content).toString('utf-8') : '';
  const body = (text ? JSON.parse(text) : {}) as { data?: Record<string, unknown>; errors?: Array<{ message?: string; extensions?: { error_code?: number } }> };
  if (body.errors?.length) throw Object.assign(new Error(body.errors[0].message ?? 'GraphQL error'), { data: body.errors[0].extensions?.error_code ?? 500 });
  return body.data?.[query.path] ?? null;
}

/**
 * A `<message server_id id t type>` of a `messages` answer, read as whatsmeow's parseNewsletterMessages does
 * (notification.go:338-379): its `<plaintext>` content, its `<views_count count>` child and `<reactions>`.
 */
export function toPostRecord(post: BinaryNode): NewsletterPostRecord {
  const reactionCounts: Record<string, number> = {};
  for (const reaction of getBinaryNodeChildren(getBinaryNodeChild(post, 'reactions'), 'reaction')) {
    const code = reaction.attrs.code;
    if (code) reactionCounts[code] = (reactionCounts[code] ?? 0) + (Number(reaction.attrs.count) || 0);
  }
  const seconds = Number(post.attrs.t) || 0;
  return {
    serverid: Number(post.attrs.server_id) || 0,
    messageid: post.attrs.id ?? '',
    type: post.attrs.type ?? '',
    timestamp: new Date(seconds * 1000).toISOString().replace('.000Z', 'Z'),
    viewsCount: Number(getBinaryNodeChild(post, 'views_count')?.attrs.count) || 0,
    reactionCounts,
    message: postContent(getBinaryNodeChild(post, 'plaintext')?.content),
  };
}

function postContent(content: BinaryNode['content']): Record<string, unknown> | null {
  if (!(content instanceof Uint8Array)) return null;
  try {
    return proto.Message.toObject(proto.Message.decode(content), { longs: String, enums: String, bytes: String }) as Record<string, unknown>;
  } catch {
    return null;
  }
}

const text = (value: unknown): string => (typeof value === 'string' ? value : typeof value === 'number' ? String(value) : '');
const lower = (value: unknown, fallback: string): string => (typeof value === 'string' && value ? value.toLowerCase() : fallback);
const record = (value: unknown): Record<string, unknown> => (value && typeof value === 'object' ? (value as Record<string, unknown>) : {});

function picture(value: unknown) {
  const raw = record(value);
  return { url: text(raw.url), id: text(raw.id), type: text(raw.type), direct_path: text(raw.direct_path ?? raw.directPath) };
}

function newsletterText(value: unknown) {
  const raw = record(value);
  return { text: text(raw.text), id: text(raw.id), update_time: text(raw.update_time) };
}

/** WhatsApp's metadata as whatsmeow serialises it (lower-case states, counts as strings); null when it names no channel. */
export function toNewsletterMetadata(value: unknown): NewsletterMetadata | null {
  const raw = record(value);
  const id = text(raw.id);
  if (!NEWSLETTER_JID.test(id)) return null;
  const thread = record(raw.thread_metadata);
  const viewer = raw.viewer_metadata ? record(raw.viewer_metadata) : null;
  const reactions = record(record(thread.settings).reaction_codes);
  return {
    id,
    state: { type: lower(record(raw.state).type, 'active') },
    thread_metadata: {
      creation_time: text(thread.creation_time) || '0',
      invite: text(thread.invite),
      name: newsletterText(thread.name),
      description: newsletterText(thread.description),
      subscribers_count: text(thread.subscribers_count) || '0',
      verification: lower(thread.verification, 'unverified'),
      picture: thread.picture ? picture(thread.picture) : null,
      preview: picture(thread.preview),
      settings: { reaction_codes: { value: text(reactions.value) || 'ALL' } },
    },
    viewer_metadata: viewer ? { mute: lower(viewer.mute, 'off'), role: lower(viewer.role, 'guest') } : null,
  };
}

/** Runs a newsletter query; WhatsApp's refusals (GraphQL error codes, IQ errors) become bus errors. */
async function newsletterCall<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw newsletterRefusal(error, what);
  }
}

export function newsletterRefusal(error: unknown, what: string): unknown {
  if (!error || typeof error !== 'object' || error instanceof RpcError) return error;
  const { data, output } = error as { data?: unknown; output?: { statusCode?: number } };
  const dataCode = typeof data === 'number' ? data : Number(record(record(data).extensions).error_code) || undefined;
  const code = dataCode ?? ((error as { isBoom?: boolean }).isBoom ? output?.statusCode : undefined);
  if (code === 404 || code === 410) return new RpcError(ErrorCode.NotFound, `${what}: ${NOT_FOUND}`);
  if (code === 401 || code === 403) return new RpcError(ErrorCode.Forbidden, `${what}: the instance is not the owner or an admin of this newsletter`);
  if (code === 400 || code === 406) return new RpcError(ErrorCode.BadRequest, `${what}: WhatsApp refused the request`);
  if (code === 408) return new RpcError(ErrorCode.Timeout, `${what}: WhatsApp did not answer in time`);
  return otherRefusal(error, code, what);
}
