import { ErrorCode, RpcError } from '@gw/contracts';
import type { InstanceRpc } from '@gw/contracts';
import type { MediaSource } from '../outbound/media-source';
import type { OpHandlers, OpRequestParsers } from './op-handler';
import { loadPicture, pictureSourceOf } from './picture-source';
import {
  ackRefusal,
  changePost,
  directoryVariables,
  editedContent,
  fetchPosts,
  findPost,
  lidOf,
  mexQuery,
  NEWSLETTER_JID,
  NEWSLETTER_MEX,
  newsletterCall,
  newsletterRefusal,
  postContentMessage,
  readMetadata,
  record,
  subscribedNewsletters,
  toNewsletterMetadata,
  toPostRecord,
} from './newsletter-wire';

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

/** An invite key (what follows https://whatsapp.com/channel/). */
export const NEWSLETTER_INVITE = /^[A-Za-z0-9_-]{6,64}$/;
export const MAX_NEWSLETTER_NAME = 100;
export const MAX_NEWSLETTER_DESCRIPTION = 2048;
/** The most posts one read asks WhatsApp for. */
export const MAX_NEWSLETTER_POSTS = 100;
const SUBSCRIPTION_ACTIONS = ['follow', 'unfollow', 'mute', 'unmute'] as const;
const MEX = NEWSLETTER_MEX;
/** A channel picture's largest source (the reference: above 1 MB is refused). */
export const MAX_NEWSLETTER_PICTURE_BYTES = 1024 * 1024;
const REACTION_CODES = ['all', 'basic', 'none', 'blocklist'] as const;
const ADMIN_ACTIONS = ['invite', 'revoke', 'remove'] as const;
const USER_JID = /^\d{5,20}@s\.whatsapp\.net$|^\d{1,20}@lid$/;

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
