// How the newsletter ops talk to WhatsApp: the `w:mex` queries rc14 has no call for, the post stanzas
// (read, edit, delete) and the parsing of their answers into the contracts' records.
import { ErrorCode, RpcError } from '@gw/contracts';
import type { InstanceRpc } from '@gw/contracts';
import { getBinaryNodeChild, getBinaryNodeChildren, proto } from '../baileys';
import type { BinaryNode, WASocket } from '../baileys';
import { otherRefusal } from './group-object';

type NewsletterMetadata = InstanceRpc['newsletter.info']['reply'];
type NewsletterPostRecord = InstanceRpc['newsletter.messages']['reply']['posts'][number];

/** A channel's JID: WhatsApp's ids are digits. */
export const NEWSLETTER_JID = /^\d{5,30}@newsletter$/;
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
/** Post types an edit can change (their text or caption). */
const EDITABLE = ['conversation', 'extendedTextMessage', 'imageMessage', 'videoMessage', 'documentMessage'] as const;

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
export async function fetchPosts(socket: WASocket, jid: string, count: number, before?: number): Promise<BinaryNode[]> {
  const result = await socket.query({
    tag: 'iq',
    attrs: { id: socket.generateMessageTag(), type: 'get', xmlns: 'newsletter', to: 's.whatsapp.net' },
    content: [{ tag: 'messages', attrs: { type: 'jid', jid, count: String(count), ...(before ? { before: String(before) } : {}) } }],
  });
  return getBinaryNodeChildren(getBinaryNodeChild(result, 'messages'), 'message');
}

type PostTarget = InstanceRpc['newsletter.deletePost']['request'];

/** The post named by message id or server id among the newest `count` × `maxPages` posts (NotFound otherwise). */
export async function findPost(socket: WASocket, target: PostTarget, what: string): Promise<BinaryNode> {
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

export function postContentMessage(post: BinaryNode): proto.IMessage {
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
export async function changePost(socket: WASocket, jid: string, post: BinaryNode, edit: '3' | '8', message: proto.IMessage | null, what: string) {
  const id = post.attrs.id ?? '';
  const ack = await newsletterCall(what, () => socket.query(postChangeNode(jid, id, edit, message)));
  ackRefusal(ack, what, 'the instance is not the owner or an admin of this newsletter');
  const targetserverid = Number(post.attrs.server_id) || 0;
  return { jid, targetmessageid: id, targetserverid, messageid: id, serverid: Number(ack.attrs.server_id) || targetserverid };
}

/** A message ack carrying an error: 403 Forbidden, 404 NotFound, anything else Refused. */
export function ackRefusal(ack: BinaryNode, what: string, forbidden: string): void {
  const error = ack.attrs.error;
  if (!error) return;
  if (error === '403' || error === '401') throw new RpcError(ErrorCode.Forbidden, `${what}: ${forbidden}`);
  if (error === '404') throw new RpcError(ErrorCode.NotFound, `${what}: newsletter message not found`);
  throw new RpcError(ErrorCode.Refused, `${what}: WhatsApp answered ${error}`);
}

/** The LID WhatsApp names newsletter users by (the number's JID when WhatsApp has no LID for it). */
export async function lidOf(socket: WASocket, user: string): Promise<string> {
  if (user.endsWith('@lid')) return user;
  const lid = await socket.signalRepository.lidMapping.getLIDForPN(user).catch(() => null);
  return lid ? lid.replace(/:\d+@/, '@') : user;
}

export async function readMetadata(socket: WASocket, type: 'jid' | 'invite', key: string, what: string): Promise<NewsletterMetadata> {
  const found = await newsletterCall(what, () => socket.newsletterMetadata(type, key));
  const metadata = toNewsletterMetadata(found);
  if (!metadata) throw new RpcError(ErrorCode.NotFound, `${what}: ${NOT_FOUND}`);
  return metadata;
}

/** The `w:mex` query rc14 has no call for: every channel the account follows or owns. */
export async function subscribedNewsletters(socket: WASocket): Promise<unknown[]> {
  const list = await mexQuery(socket, MEX.SUBSCRIBED, {});
  return Array.isArray(list) ? list : [];
}

/** A `w:mex` GraphQL query as rc14's executeWMexQuery sends it; its `errors` thrown with the code as `data` (see newsletterRefusal). */
export async function mexQuery(socket: WASocket, query: { id: string; path: string }, variables: Record<string, unknown>): Promise<unknown> {
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
export const record = (value: unknown): Record<string, unknown> => (value && typeof value === 'object' ? (value as Record<string, unknown>) : {});

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
export async function newsletterCall<T>(what: string, call: () => Promise<T>): Promise<T> {
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
