import { ErrorCode, RpcError } from '@gw/contracts';
import type { InstanceRpc } from '@gw/contracts';
import { getBinaryNodeChild, getBinaryNodeChildren, proto } from '../baileys';
import type { BinaryNode, WASocket } from '../baileys';
import type { OpHandlers, OpRequestParsers } from './op-handler';

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
  | 'newsletter.messages';

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
/** WhatsApp Web's (and whatsmeow's) query for the channels the account follows or owns; rc14 has no call for it. */
const SUBSCRIBED_QUERY_ID = '6388546374527196';
const NOT_FOUND = 'newsletter not found';

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
  'newsletter.create': (raw, instanceId) => ({ instanceId, name: nameOf(raw), description: descriptionOf({ description: raw.description ?? '' }) }),
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
} satisfies OpRequestParsers<NewsletterOps>;

export function newsletterOps(): OpHandlers<NewsletterOps> {
  return {
    'newsletter.create': async (session, request) => {
      const socket = session.openSocket();
      const created = await newsletterCall('error creating newsletter', () => socket.newsletterCreate(request.name, request.description || undefined));
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
      const result = await newsletterCall('error getting newsletter messages', () =>
        socket.query({
          tag: 'iq',
          attrs: { id: socket.generateMessageTag(), type: 'get', xmlns: 'newsletter', to: 's.whatsapp.net' },
          content: [
            {
              tag: 'messages',
              attrs: { type: 'jid', jid: request.jid, count: String(request.count), ...(request.before ? { before: String(request.before) } : {}) },
            },
          ],
        }),
      );
      const list = getBinaryNodeChild(result, 'messages');
      return { posts: getBinaryNodeChildren(list, 'message').map(toPostRecord) };
    },
  };
}

async function readMetadata(socket: WASocket, type: 'jid' | 'invite', key: string, what: string): Promise<NewsletterMetadata> {
  const found = await newsletterCall(what, () => socket.newsletterMetadata(type, key));
  const metadata = toNewsletterMetadata(found);
  if (!metadata) throw new RpcError(ErrorCode.NotFound, `${what}: ${NOT_FOUND}`);
  return metadata;
}

/** The `w:mex` query rc14 has no call for: every channel the account follows or owns. */
async function subscribedNewsletters(socket: WASocket): Promise<unknown[]> {
  const result = await socket.query({
    tag: 'iq',
    attrs: { id: socket.generateMessageTag(), type: 'get', to: 's.whatsapp.net', xmlns: 'w:mex' },
    content: [{ tag: 'query', attrs: { query_id: SUBSCRIBED_QUERY_ID }, content: Buffer.from(JSON.stringify({ variables: {} }), 'utf-8') }],
  });
  const content = getBinaryNodeChild(result, 'result')?.content;
  const text = Buffer.isBuffer(content) || content instanceof Uint8Array ? Buffer.from(content).toString('utf-8') : '';
  const body = (text ? JSON.parse(text) : {}) as {
    data?: { xwa2_newsletter_subscribed?: unknown };
    errors?: Array<{ message?: string; extensions?: { error_code?: number } }>;
  };
  if (body.errors?.length) throw Object.assign(new Error(body.errors[0].message ?? 'GraphQL error'), { data: body.errors[0].extensions?.error_code ?? 500 });
  const list = body.data?.xwa2_newsletter_subscribed;
  return Array.isArray(list) ? list : [];
}

/** A `<message server_id id t type views_count>` of a `messages` answer: its `<plaintext>` content and `<reactions>`. */
function toPostRecord(post: BinaryNode): NewsletterPostRecord {
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
    viewsCount: Number(post.attrs.views_count) || 0,
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

function newsletterRefusal(error: unknown, what: string): unknown {
  if (!error || typeof error !== 'object' || error instanceof RpcError) return error;
  const { data, output } = error as { data?: unknown; output?: { statusCode?: number } };
  const dataCode = typeof data === 'number' ? data : Number(record(record(data).extensions).error_code) || undefined;
  const code = dataCode ?? ((error as { isBoom?: boolean }).isBoom ? output?.statusCode : undefined);
  if (code === 404 || code === 410) return new RpcError(ErrorCode.NotFound, `${what}: ${NOT_FOUND}`);
  if (code === 401 || code === 403) return new RpcError(ErrorCode.Forbidden, `${what}: the instance is not the owner or an admin of this newsletter`);
  if (code === 400 || code === 406) return new RpcError(ErrorCode.BadRequest, `${what}: WhatsApp refused the request`);
  if (code === 408) return new RpcError(ErrorCode.Timeout, `${what}: WhatsApp did not answer in time`);
  return error;
}
