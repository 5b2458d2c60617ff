// Channels/newsletters: the GraphQL-over-iq `w:mex` queries Baileys uses (create, metadata,
// follow, mute, update, delete…), `<plaintext>` posts fanned out to followers with a server_id,
// reactions, and the `newsletter` iq (message_updates, live_updates). Response shapes follow what
// rc14 parses (newsletter.js, mex.js); fields it ignores are filled with plausible values.
import { randomBytes, randomInt } from 'crypto';
import { proto } from './baileys';
import type { Account, DeviceRef } from './accounts';
import type { NewsletterRouting, SimContext } from './context';
import type { RouteSpec } from './route-spec';
import { SimError } from './errors';
import type { BinaryNode } from './node-io';
import { child, contentBytes, iqError, iqResult, node, unixNow } from './node-io';
import { generateMessageId, messageToJson, stanzaTypeFor } from './message-codec';
import { MEX_QUERIES, mexBadRequest, mexQueryOf, type MexQueryName } from './mex-queries';

// The query ids answered, from the one table of references (mex-queries.ts); nothing here names an id of its own.
const Q = Object.fromEntries(Object.entries(MEX_QUERIES).map(([name, query]) => [name, query.id])) as { [K in MexQueryName]: string };

/** Who may react to a channel's posts (`settings.reaction_codes.value`). */
export const REACTION_CODES = ['ALL', 'BASIC', 'NONE', 'BLOCKLIST'] as const;
export type ReactionCodes = (typeof REACTION_CODES)[number];
/** The emoji a channel with `BASIC` reactions takes. */
const BASIC_REACTIONS = new Set(['👍', '❤️', '😂', '😮', '😢', '🙏']);

export interface NewsletterPost {
  serverId: number;
  id: string;
  t: number;
  type: string;
  bytes: Buffer;
  reactions: Map<string, Set<string>>;
  views: number;
  /** Accounts whose view receipt counted (a follower's view counts once). */
  viewedBy?: string[];
  /** Edited by an admin (edit="3"). */
  edited?: boolean;
}

export interface Newsletter {
  jid: string;
  name: string;
  description: string;
  invite: string;
  creationTime: number;
  owner: Account;
  followers: Map<string, { account: Account; muted: boolean }>;
  posts: NewsletterPost[];
  nextServerId: number;
  deleted: boolean;
  /** Admins other than the owner, by phone. */
  admins: Map<string, Account>;
  /** Admin invites not yet accepted, by phone. */
  adminInvites: Map<string, { account: Account; t: number }>;
  picture?: { id: string; bytes: Buffer };
  reactionCodes: ReactionCodes;
}

/** A newsletter as the state file keeps it: accounts by phone number. */
export interface NewsletterState {
  jid: string;
  name: string;
  description: string;
  invite: string;
  creationTime: number;
  owner: string;
  followers: Array<{ phone: string; muted: boolean }>;
  posts: Array<Omit<NewsletterPost, 'reactions'> & { reactions: Array<[string, string[]]> }>;
  nextServerId: number;
  deleted: boolean;
  admins?: string[];
  adminInvites?: Array<{ phone: string; t: number }>;
  picture?: { id: string; bytes: string };
  reactionCodes?: ReactionCodes;
}

type MexVariables = Record<string, unknown>;

/**
 * An admin's edit or deletion in the form whatsmeow's sendNewsletter sends it (send.go:693-741): `type="text"`
 * (the edit wrapper's type, whatever the post's), and on `<plaintext>` the `mediatype` of the edited content
 * (image, video or gif, document, url), none for a deletion. What WhatsApp answers a stanza of another form is not
 * public; the simulator refuses it (ack error 400), so a client that sends another form is seen to.
 */
function editFormOk(stanza: BinaryNode, edit: '3' | '8', bytes: Buffer): boolean {
  if (stanza.attrs.type !== 'text') return false;
  const given = child(stanza, 'plaintext')?.attrs.mediatype;
  if (edit === '8') return given === undefined;
  let message: proto.IMessage;
  try {
    message = proto.Message.decode(bytes);
  } catch {
    return false;
  }
  const expected = message.imageMessage
    ? 'image'
    : message.videoMessage
      ? message.videoMessage.gifPlayback
        ? 'gif'
        : 'video'
      : message.documentMessage
        ? 'document'
        : message.extendedTextMessage?.title != null
          ? 'url'
          : undefined;
  return given === expected;
}

let pictureIds = 1_000_000;
const nextPictureId = (): number => ++pictureIds;

export class NewsletterStore implements NewsletterRouting {
  private readonly byJid = new Map<string, Newsletter>();

  constructor(private readonly ctx: SimContext) {}

  toState(): NewsletterState[] {
    return [...this.byJid.values()].map((n) => ({
      ...n,
      owner: n.owner.phone,
      followers: [...n.followers.values()].map((f) => ({ phone: f.account.phone, muted: f.muted })),
      posts: n.posts.map((p) => ({ ...p, reactions: [...p.reactions.entries()].map(([code, who]) => [code, [...who]]) })),
      admins: [...n.admins.keys()],
      adminInvites: [...n.adminInvites.values()].map((invite) => ({ phone: invite.account.phone, t: invite.t })),
      picture: n.picture ? { id: n.picture.id, bytes: n.picture.bytes.toString('base64') } : undefined,
    }));
  }

  /** Puts back saved newsletters; followers whose account is unknown are left out. */
  restore(states: NewsletterState[]): void {
    for (const state of states) {
      const owner = this.ctx.registry.get(state.owner);
      if (!owner) continue;
      const newsletter: Newsletter = {
        ...state,
        owner,
        followers: new Map(),
        posts: state.posts.map((p) => ({ ...p, reactions: new Map(p.reactions.map(([code, who]) => [code, new Set(who)])) })),
        admins: new Map(),
        adminInvites: new Map(),
        picture: state.picture ? { id: state.picture.id, bytes: Buffer.from(state.picture.bytes, 'base64') } : undefined,
        reactionCodes: state.reactionCodes ?? 'ALL',
      };
      for (const phone of state.admins ?? []) {
        const account = this.ctx.registry.get(phone);
        if (account) newsletter.admins.set(account.phone, account);
      }
      for (const invite of state.adminInvites ?? []) {
        const account = this.ctx.registry.get(invite.phone);
        if (account) newsletter.adminInvites.set(account.phone, { account, t: invite.t });
      }
      for (const follower of state.followers) {
        const account = this.ctx.registry.get(follower.phone);
        if (account) newsletter.followers.set(account.phone, { account, muted: follower.muted });
      }
      this.byJid.set(newsletter.jid, newsletter);
    }
  }

  get(jidOrInvite: string): Newsletter | undefined {
    const direct = this.byJid.get(jidOrInvite);
    if (direct && !direct.deleted) return direct;
    return [...this.byJid.values()].find((n) => !n.deleted && n.invite === jidOrInvite);
  }

  create(owner: Account, name: string, description = ''): Newsletter {
    const jid = `120363${randomInt(10 ** 11, 10 ** 12 - 1)}${randomInt(100, 999)}@newsletter`;
    const newsletter: Newsletter = {
      jid,
      name,
      description,
      invite: randomBytes(16).toString('base64url').slice(0, 22),
      creationTime: unixNow(),
      owner,
      followers: new Map(),
      posts: [],
      nextServerId: 100,
      deleted: false,
      admins: new Map(),
      adminInvites: new Map(),
      reactionCodes: 'ALL',
    };
    this.byJid.set(jid, newsletter);
    return newsletter;
  }

  private metadata(newsletter: Newsletter, viewer: Account): Record<string, unknown> {
    const follower = newsletter.followers.get(viewer.phone);
    const role = viewer === newsletter.owner ? 'OWNER' : newsletter.admins.has(viewer.phone) ? 'ADMIN' : follower ? 'SUBSCRIBER' : 'GUEST';
    const picture = newsletter.picture
      ? { id: newsletter.picture.id, type: 'IMAGE', direct_path: `/v/t61.24694-24/${newsletter.picture.id}.jpg` }
      : { id: '', type: 'IMAGE', direct_path: '' };
    const now = String(unixNow());
    return {
      id: newsletter.jid,
      state: { type: 'ACTIVE' },
      thread_metadata: {
        creation_time: String(newsletter.creationTime),
        description: { id: String(newsletter.creationTime), text: newsletter.description, update_time: now },
        handle: null,
        invite: newsletter.invite,
        name: { id: String(newsletter.creationTime), text: newsletter.name, update_time: now },
        picture,
        preview: { ...picture, type: 'PREVIEW' },
        subscribers_count: String(newsletter.followers.size),
        verification: 'UNVERIFIED',
        settings: { reaction_codes: { value: newsletter.reactionCodes } },
      },
      viewer_metadata: { mute: follower?.muted ? 'ON' : 'OFF', role },
    };
  }

  // ---------------------------------------------------------------- w:mex

  handleMex(sender: DeviceRef, iq: BinaryNode): BinaryNode {
    const queryNode = child(iq, 'query');
    const queryId = queryNode?.attrs.query_id;
    let variables: MexVariables = {};
    try {
      variables = (JSON.parse(contentBytes(queryNode)?.toString('utf-8') ?? '{}') as { variables?: MexVariables }).variables ?? {};
    } catch {
      return this.mexResult(iq, { errors: [{ message: 'bad json', extensions: { error_code: 400 } }] });
    }
    // The relay refuses an id it does not know (retired, another platform's, a guess) and variables that do not fit.
    const known = mexQueryOf(queryId);
    const unfit = known ? MEX_QUERIES[known].check(variables) : 'unknown query id';
    if (unfit) {
      this.ctx.logger.debug({ queryId, unfit }, 'w:mex query refused');
      return this.mexResult(iq, mexBadRequest());
    }
    const me = sender.account;
    const id = typeof variables.newsletter_id === 'string' ? variables.newsletter_id : undefined;
    const target = id ? this.get(id) : undefined;
    const notFound = { errors: [{ message: 'newsletter not found', extensions: { error_code: 404 } }] };
    const forbidden = (message: string) => ({ errors: [{ message, extensions: { error_code: 403 } }] });
    const badRequest = (message: string) => ({ errors: [{ message, extensions: { error_code: 400 } }] });
    const data = (path: string, value: unknown): Record<string, unknown> => ({ data: { [path]: value } });
    switch (queryId) {
      case Q.CREATE: {
        const input = (variables.input ?? {}) as { name?: string; description?: string | null };
        const created = this.create(me, input.name ?? 'Channel', input.description ?? '');
        return this.mexResult(iq, data('xwa2_newsletter_create', this.metadata(created, me)));
      }
      case Q.METADATA: {
        const input = (variables.input ?? {}) as { key?: string; type?: string };
        const found = input.key ? this.get(input.key) : undefined;
        return this.mexResult(iq, found ? data('xwa2_newsletter', this.metadata(found, me)) : notFound);
      }
      case Q.UPDATE_METADATA: {
        if (!target) return this.mexResult(iq, notFound);
        if (!this.isAdmin(target, me)) return this.mexResult(iq, forbidden('not an admin'));
        const updates = (variables.updates ?? {}) as { name?: unknown; description?: unknown; picture?: unknown; settings?: unknown };
        const codes = (updates.settings as { reaction_codes?: { value?: unknown } } | null | undefined)?.reaction_codes?.value;
        if (codes !== undefined && !REACTION_CODES.includes(codes as ReactionCodes)) return this.mexResult(iq, badRequest('invalid reaction_codes'));
        if (typeof updates.picture === 'string' && updates.picture && /[^A-Za-z0-9+/=]/.test(updates.picture))
          return this.mexResult(iq, badRequest('picture must be base64'));
        if (typeof updates.name === 'string') target.name = updates.name;
        if (typeof updates.description === 'string') target.description = updates.description;
        if (typeof updates.picture === 'string') {
          target.picture = updates.picture ? { id: String(nextPictureId()), bytes: Buffer.from(updates.picture, 'base64') } : undefined;
        }
        if (codes !== undefined) target.reactionCodes = codes as ReactionCodes;
        return this.mexResult(iq, data('xwa2_newsletter_update', this.metadata(target, me)));
      }
      case Q.FOLLOW:
        if (!target) return this.mexResult(iq, notFound);
        target.followers.set(me.phone, { account: me, muted: false });
        return this.mexResult(iq, data('xwa2_newsletter_join_v2', this.metadata(target, me)));
      case Q.UNFOLLOW:
        if (!target) return this.mexResult(iq, notFound);
        target.followers.delete(me.phone);
        return this.mexResult(iq, data('xwa2_newsletter_leave_v2', { id: target.jid }));
      case Q.MUTE:
      case Q.UNMUTE: {
        if (!target) return this.mexResult(iq, notFound);
        const follower = target.followers.get(me.phone);
        if (follower) follower.muted = queryId === Q.MUTE;
        const path = queryId === Q.MUTE ? 'xwa2_newsletter_mute_v2' : 'xwa2_newsletter_unmute_v2';
        return this.mexResult(iq, data(path, { id: target.jid, mute: queryId === Q.MUTE ? 'ON' : 'OFF' }));
      }
      case Q.SUBSCRIBERS:
        if (!target) return this.mexResult(iq, notFound);
        return this.mexResult(iq, data('xwa2_newsletter_subscribers', { subscribers: [...target.followers.values()].map((f) => ({ id: f.account.lidJid })) }));
      case Q.ADMIN_COUNT:
        return this.mexResult(iq, target ? data('xwa2_newsletter_admin', { admin_count: 1 }) : notFound);
      case Q.DELETE:
        if (!target) return this.mexResult(iq, notFound);
        if (target.owner !== me) return this.mexResult(iq, { errors: [{ message: 'not the owner', extensions: { error_code: 403 } }] });
        target.deleted = true;
        return this.mexResult(iq, data('xwa2_newsletter_delete_v2', { id: target.jid }));
      case Q.CHANGE_OWNER: {
        if (!target) return this.mexResult(iq, notFound);
        if (target.owner !== me) return this.mexResult(iq, forbidden('not the owner'));
        const user = this.userOf(variables.user_id);
        if (!user) return this.mexResult(iq, { errors: [{ message: 'user not found', extensions: { error_code: 404 } }] });
        // Ownership goes to an admin (invited and accepted); the old owner stays an admin.
        if (!target.admins.has(user.phone)) return this.mexResult(iq, badRequest('the new owner must be an admin of the channel'));
        target.admins.delete(user.phone);
        target.admins.set(me.phone, me);
        target.owner = user;
        return this.mexResult(iq, data('xwa2_newsletter_change_owner', { id: target.jid }));
      }
      case Q.DEMOTE: {
        if (!target) return this.mexResult(iq, notFound);
        const user = this.userOf(variables.user_id);
        if (!user) return this.mexResult(iq, { errors: [{ message: 'user not found', extensions: { error_code: 404 } }] });
        // The owner removes admins; an admin may step down.
        if (target.owner !== me && user !== me) return this.mexResult(iq, forbidden('not the owner'));
        if (!target.admins.has(user.phone)) return this.mexResult(iq, { errors: [{ message: 'not an admin', extensions: { error_code: 404 } }] });
        target.admins.delete(user.phone);
        return this.mexResult(iq, data('xwa2_newsletter_demote', { id: target.jid }));
      }
      case Q.ADMIN_INVITE: {
        if (!target) return this.mexResult(iq, notFound);
        if (!this.isAdmin(target, me)) return this.mexResult(iq, forbidden('not an admin'));
        const user = this.userOf(variables.user_id);
        if (!user) return this.mexResult(iq, { errors: [{ message: 'user not found', extensions: { error_code: 404 } }] });
        if (user === target.owner || target.admins.has(user.phone)) return this.mexResult(iq, badRequest('already an admin'));
        const t = unixNow();
        target.adminInvites.set(user.phone, { account: user, t });
        return this.mexResult(iq, data('xwa2_newsletter_admin_invite_create', { id: user.lidJid, invite_expiration_time: String(t + 30 * 86_400) }));
      }
      case Q.ADMIN_INVITE_REVOKE: {
        if (!target) return this.mexResult(iq, notFound);
        if (!this.isAdmin(target, me)) return this.mexResult(iq, forbidden('not an admin'));
        const user = this.userOf(variables.user_id);
        if (!user || !target.adminInvites.delete(user.phone))
          return this.mexResult(iq, { errors: [{ message: 'invite not found', extensions: { error_code: 404 } }] });
        return this.mexResult(iq, data('xwa2_newsletter_admin_invite_revoke', { id: user.lidJid }));
      }
      case Q.ADMIN_INVITE_ACCEPT: {
        if (!target) return this.mexResult(iq, notFound);
        if (!target.adminInvites.delete(me.phone)) return this.mexResult(iq, { errors: [{ message: 'invite not found', extensions: { error_code: 404 } }] });
        target.admins.set(me.phone, me);
        if (!target.followers.has(me.phone)) target.followers.set(me.phone, { account: me, muted: false });
        return this.mexResult(iq, data('xwa2_newsletter_admin_invite_accept', { id: target.jid }));
      }
      case Q.DIRECTORY_LIST:
      case Q.DIRECTORY_SEARCH: {
        const input = (variables.input ?? {}) as { search_text?: unknown; limit?: unknown; start_cursor?: unknown };
        const text = typeof input.search_text === 'string' ? input.search_text.trim().toLowerCase() : '';
        const limit = Math.min(Math.max(Number(input.limit) || 20, 1), 100);
        const start = typeof input.start_cursor === 'string' ? Number(Buffer.from(input.start_cursor, 'base64').toString('utf-8').split(':')[1]) || 0 : 0;
        const found = [...this.byJid.values()]
          .filter((n) => !n.deleted && (!text || n.name.toLowerCase().includes(text) || n.description.toLowerCase().includes(text)))
          .sort((a, b) => b.followers.size - a.followers.size || a.name.localeCompare(b.name));
        const page = found.slice(start, start + limit);
        const cursor = (at: number) => Buffer.from(`arrayconnection:${at}`, 'utf-8').toString('base64');
        const path = queryId === Q.DIRECTORY_SEARCH ? 'xwa2_newsletters_directory_search' : 'xwa2_newsletters_directory_list';
        return this.mexResult(
          iq,
          data(path, {
            result: page.map((n) => this.metadata(n, me)),
            page_info: {
              hasNextPage: start + limit < found.length,
              hasPreviousPage: start > 0,
              startCursor: cursor(start),
              endCursor: start + limit < found.length ? cursor(start + limit) : null,
            },
          }),
        );
      }
      case Q.SUBSCRIBED: {
        const mine = [...this.byJid.values()].filter((n) => !n.deleted && (n.owner === me || n.followers.has(me.phone)));
        return this.mexResult(
          iq,
          data(
            'xwa2_newsletter_subscribed',
            mine.map((n) => this.metadata(n, me)),
          ),
        );
      }
      case Q.REACHOUT_TIMELOCK:
        return this.mexResult(iq, data('xwa2_fetch_account_reachout_timelock', { is_active: false, time_enforcement_ends: '0', enforcement_type: 'DEFAULT' }));
      case Q.MESSAGE_CAPPING_INFO:
        return this.mexResult(iq, data('xwa2_message_capping_info', { quota: 1000, used: 0 }));
      default:
        return this.mexResult(iq, mexBadRequest());
    }
  }

  /** The owner or one of the channel's admins. */
  private isAdmin(newsletter: Newsletter, account: Account): boolean {
    return newsletter.owner === account || newsletter.admins.has(account.phone);
  }

  /** A `user_id` of a mex query: a LID or phone-number JID. */
  private userOf(value: unknown): Account | undefined {
    return typeof value === 'string' && value.includes('@') ? this.ctx.registry.resolveUser(value) : undefined;
  }

  private mexResult(iq: BinaryNode, payload: Record<string, unknown>): BinaryNode {
    return iqResult(iq, [node('result', {}, Buffer.from(JSON.stringify(payload), 'utf-8'))]);
  }

  // ---------------------------------------------------------------- newsletter iq

  handleIq(_sender: DeviceRef, iq: BinaryNode): BinaryNode {
    // `<messages type=jid jid=… count before>` (the posts, as WhatsApp Web and whatsmeow ask) goes to the server, naming the channel inside.
    const messages = child(iq, 'messages');
    const jid = messages ? messages.attrs.jid : iq.attrs.to;
    const newsletter = jid ? this.get(jid) : undefined;
    if (!newsletter) return iqError(iq, 404, 'item-not-found');
    if (messages) {
      const count = Math.min(Number(messages.attrs.count ?? '50') || 50, 500);
      const before = Number(messages.attrs.before ?? '0') || Number.POSITIVE_INFINITY;
      const posts = newsletter.posts.filter((p) => p.serverId < before).slice(-count);
      return iqResult(iq, [
        node(
          'messages',
          { jid: newsletter.jid, t: String(unixNow()) },
          posts.map((p) => this.postNode(p)),
        ),
      ]);
    }
    const updates = child(iq, 'message_updates');
    if (updates) {
      const count = Math.min(Number(updates.attrs.count ?? '50') || 50, 500);
      const after = Number(updates.attrs.after ?? '0') || 0;
      const posts = newsletter.posts.filter((p) => p.serverId > after).slice(-count);
      return iqResult(iq, [
        node('message_updates', {}, [
          node(
            'messages',
            { jid: newsletter.jid },
            posts.map((p) => this.postNode(p)),
          ),
        ]),
      ]);
    }
    if (child(iq, 'live_updates')) {
      return iqResult(iq, [node('live_updates', { duration: '300' })]);
    }
    return iqError(iq, 501, 'feature-not-implemented');
  }

  private postNode(post: NewsletterPost): BinaryNode {
    const reactions = [...post.reactions.entries()].map(([code, who]) => node('reaction', { code, count: String(who.size) }));
    // The views are a `<views_count count>` child, as whatsmeow's parseNewsletterMessages reads them (notification.go:366).
    return node('message', { id: post.id, server_id: String(post.serverId), t: String(post.t), type: post.type }, [
      node('plaintext', {}, post.bytes),
      node('views_count', { count: String(post.views) }),
      ...(reactions.length ? [node('reactions', {}, reactions)] : []),
    ]);
  }

  // ---------------------------------------------------------------- posts and reactions

  /** `<message to=…@newsletter>` from a device or phone: a post (plaintext) or a reaction. Returns the ack. */
  route(sender: DeviceRef, stanza: BinaryNode): BinaryNode {
    const newsletter = this.get(stanza.attrs.to);
    const ack = node('ack', { class: 'message', id: stanza.attrs.id, from: stanza.attrs.to, t: String(unixNow()) });
    if (!newsletter) {
      ack.attrs.error = '404';
      return ack;
    }
    const reaction = child(stanza, 'reaction');
    if (reaction && stanza.attrs.server_id) {
      const post = newsletter.posts.find((p) => p.serverId === Number(stanza.attrs.server_id));
      if (!post) {
        ack.attrs.error = '404';
        return ack;
      }
      const code = reaction.attrs.code;
      const withdrawn = stanza.attrs.edit === '7' || !code;
      if (!withdrawn && (newsletter.reactionCodes === 'NONE' || (newsletter.reactionCodes === 'BASIC' && !BASIC_REACTIONS.has(code)))) {
        ack.attrs.error = '403';
        return ack;
      }
      for (const who of post.reactions.values()) who.delete(sender.account.phone);
      if (!withdrawn) post.reactions.set(code, (post.reactions.get(code) ?? new Set<string>()).add(sender.account.phone));
      for (const [known, who] of [...post.reactions.entries()]) if (!who.size) post.reactions.delete(known);
      return ack;
    }
    if (!this.isAdmin(newsletter, sender.account)) {
      ack.attrs.error = '403';
      return ack;
    }
    // An admin's edit (edit="3", the new content) or deletion (edit="8") of a post, named by its message id.
    const edit = stanza.attrs.edit;
    if (edit === '3' || edit === '8') {
      const post = newsletter.posts.find((p) => p.id === stanza.attrs.id);
      if (!post) {
        ack.attrs.error = '404';
        return ack;
      }
      const bytes = edit === '3' ? contentBytes(child(stanza, 'plaintext')) : Buffer.alloc(0);
      if (!bytes || !editFormOk(stanza, edit, bytes)) {
        ack.attrs.error = '400';
        return ack;
      }
      this.changePost(newsletter, post, edit, bytes);
      ack.attrs.server_id = String(post.serverId);
      return ack;
    }
    const plaintext = contentBytes(child(stanza, 'plaintext'));
    if (!plaintext) {
      ack.attrs.error = '400';
      return ack;
    }
    const post = this.publish(newsletter, plaintext, stanza.attrs.type ?? 'text', stanza.attrs.id);
    ack.attrs.server_id = String(post.serverId);
    return ack;
  }

  /** An admin's edit (`3`: the new content) or deletion (`8`) of a post, fanned out to the channel's devices as WhatsApp does. */
  changePost(newsletter: Newsletter, post: NewsletterPost, edit: '3' | '8', bytes: Buffer): void {
    if (edit === '3') {
      post.bytes = bytes;
      post.edited = true;
    } else newsletter.posts.splice(newsletter.posts.indexOf(post), 1);
    this.fanOut(
      newsletter,
      node('message', { from: newsletter.jid, id: post.id, server_id: String(post.serverId), t: String(unixNow()), type: post.type, edit }, [
        node('plaintext', {}, bytes),
      ]),
    );
  }

  /** `<receipt to=…@newsletter type=view><list><item server_id/></list></receipt>`: each post's views count the account once. */
  onViewReceipt(sender: DeviceRef, stanza: BinaryNode): void {
    const newsletter = stanza.attrs.to ? this.get(stanza.attrs.to) : undefined;
    if (!newsletter) return;
    const items = Array.isArray(child(stanza, 'list')?.content) ? (child(stanza, 'list')?.content as BinaryNode[]) : [];
    for (const item of items) {
      const post = newsletter.posts.find((p) => String(p.serverId) === item.attrs.server_id);
      if (!post) continue;
      const viewedBy = post.viewedBy ?? (post.viewedBy = []);
      if (viewedBy.includes(sender.account.phone)) continue;
      viewedBy.push(sender.account.phone);
      post.views++;
    }
  }

  /** A channel stanza to every device of the owner, the admins and the followers. */
  private fanOut(newsletter: Newsletter, stanza: BinaryNode): void {
    const recipients = [newsletter.owner, ...newsletter.admins.values(), ...[...newsletter.followers.values()].map((f) => f.account)];
    for (const account of new Set(recipients)) {
      for (const device of account.activeDevices()) this.ctx.deliverToCompanion(device, stanza);
    }
  }

  private publish(newsletter: Newsletter, bytes: Buffer, type: string, id: string): NewsletterPost {
    const post: NewsletterPost = { serverId: newsletter.nextServerId++, id, t: unixNow(), type, bytes, reactions: new Map(), views: 0 };
    newsletter.posts.push(post);
    this.fanOut(
      newsletter,
      node('message', { from: newsletter.jid, id, server_id: String(post.serverId), t: String(post.t), type }, [node('plaintext', {}, bytes)]),
    );
    return post;
  }

  info(newsletter: Newsletter): Record<string, unknown> {
    return {
      jid: newsletter.jid,
      name: newsletter.name,
      description: newsletter.description,
      invite: newsletter.invite,
      owner: newsletter.owner.jid,
      admins: [...newsletter.admins.keys()],
      adminInvites: [...newsletter.adminInvites.keys()],
      picture: newsletter.picture ? { id: newsletter.picture.id, bytes: newsletter.picture.bytes.length } : null,
      reactionCodes: newsletter.reactionCodes,
      followers: [...newsletter.followers.values()].map((f) => ({ phone: f.account.phone, muted: f.muted })),
      posts: newsletter.posts.map((p) => ({
        serverId: p.serverId,
        id: p.id,
        t: p.t,
        type: p.type,
        message: messageToJson(proto.Message.decode(p.bytes)),
        reactions: Object.fromEntries([...p.reactions.entries()].map(([code, who]) => [code, who.size])),
        views: p.views,
        edited: p.edited === true,
      })),
    };
  }

  routes(): RouteSpec[] {
    const requireAccount = (phone: unknown): Account => {
      const account = typeof phone === 'string' || typeof phone === 'number' ? this.ctx.registry.resolveUser(String(phone)) : undefined;
      if (!account) throw new SimError(404, `no account ${String(phone)}`);
      return account;
    };
    const requireNewsletter = (jid: string): Newsletter => {
      const newsletter = this.get(jid);
      if (!newsletter) throw new SimError(404, `no newsletter ${jid}`);
      return newsletter;
    };
    return [
      {
        method: 'POST',
        path: '/sim/newsletters',
        handler: ({ body }) => {
          if (typeof body.name !== 'string' || !body.name) throw new SimError(400, 'name is required');
          const newsletter = this.create(requireAccount(body.owner), body.name, typeof body.description === 'string' ? body.description : '');
          for (const phone of Array.isArray(body.followers) ? body.followers : []) {
            const account = requireAccount(phone);
            newsletter.followers.set(account.phone, { account, muted: false });
          }
          return this.info(newsletter);
        },
      },
      { method: 'GET', path: '/sim/newsletters/{jid}', handler: ({ params }) => this.info(requireNewsletter(params.jid)) },
      {
        method: 'POST',
        path: '/sim/newsletters/{jid}/posts',
        handler: ({ params, body }) => {
          const newsletter = requireNewsletter(params.jid);
          let message: proto.IMessage;
          if (body.message && typeof body.message === 'object') {
            try {
              message = proto.Message.fromObject(body.message as Record<string, unknown>);
            } catch (err) {
              throw new SimError(400, `invalid message: ${(err as Error).message}`);
            }
          } else if (typeof body.text === 'string') {
            message = { conversation: body.text };
          } else {
            throw new SimError(400, 'text or message is required');
          }
          const post = this.publish(newsletter, Buffer.from(proto.Message.encode(message).finish()), stanzaTypeFor(message), generateMessageId());
          return { id: post.id, serverId: post.serverId };
        },
      },
      {
        // A phone reacting to a post (`code` '' takes its reaction back): listings carry the counts per emoji.
        method: 'POST',
        path: '/sim/newsletters/{jid}/posts/{serverId}/reactions',
        handler: ({ params, body }) => {
          const newsletter = requireNewsletter(params.jid);
          const post = newsletter.posts.find((entry) => String(entry.serverId) === params.serverId);
          if (!post) throw new SimError(404, `no post ${params.serverId}`);
          const account = requireAccount(body.phone);
          if (typeof body.code !== 'string') throw new SimError(400, 'code must be a string');
          for (const who of post.reactions.values()) who.delete(account.phone);
          if (body.code) post.reactions.set(body.code, (post.reactions.get(body.code) ?? new Set<string>()).add(account.phone));
          for (const [code, who] of [...post.reactions.entries()]) if (!who.size) post.reactions.delete(code);
          return { serverId: post.serverId, reactions: Object.fromEntries([...post.reactions.entries()].map(([code, who]) => [code, who.size])) };
        },
      },
      {
        // The owner edits a post from its phone (`text` or `message`): followers get the edit (edit="3").
        method: 'POST',
        path: '/sim/newsletters/{jid}/posts/{serverId}/edit',
        handler: ({ params, body }) => {
          const newsletter = requireNewsletter(params.jid);
          const post = newsletter.posts.find((entry) => String(entry.serverId) === params.serverId);
          if (!post) throw new SimError(404, `no post ${params.serverId}`);
          if (typeof body.text !== 'string' || !body.text) throw new SimError(400, 'text is required');
          this.changePost(newsletter, post, '3', Buffer.from(proto.Message.encode({ conversation: body.text }).finish()));
          return { serverId: post.serverId, id: post.id };
        },
      },
      {
        // The owner deletes a post from its phone: followers get the deletion (edit="8").
        method: 'POST',
        path: '/sim/newsletters/{jid}/posts/{serverId}/delete',
        handler: ({ params }) => {
          const newsletter = requireNewsletter(params.jid);
          const post = newsletter.posts.find((entry) => String(entry.serverId) === params.serverId);
          if (!post) throw new SimError(404, `no post ${params.serverId}`);
          this.changePost(newsletter, post, '8', Buffer.alloc(0));
          return { serverId: post.serverId, id: post.id };
        },
      },
      {
        // The owner (or `by`, an admin) invites a phone to become an admin, as /newsletter/admin/invite does.
        method: 'POST',
        path: '/sim/newsletters/{jid}/admin-invites',
        handler: ({ params, body }) => {
          const newsletter = requireNewsletter(params.jid);
          const account = requireAccount(body.phone);
          if (account === newsletter.owner || newsletter.admins.has(account.phone)) throw new SimError(409, `${account.phone} is already an admin`);
          newsletter.adminInvites.set(account.phone, { account, t: unixNow() });
          return this.info(newsletter);
        },
      },
      {
        // The invited phone accepts (from its own phone).
        method: 'POST',
        path: '/sim/newsletters/{jid}/admin-invites/accept',
        handler: ({ params, body }) => {
          const newsletter = requireNewsletter(params.jid);
          const account = requireAccount(body.phone);
          if (!newsletter.adminInvites.delete(account.phone)) throw new SimError(404, `${account.phone} has no admin invite`);
          newsletter.admins.set(account.phone, account);
          return this.info(newsletter);
        },
      },
      {
        // Followers' phones looking at a post: its `views_count` grows (channels count views, not viewers).
        method: 'POST',
        path: '/sim/newsletters/{jid}/posts/{serverId}/views',
        handler: ({ params, body }) => {
          const newsletter = requireNewsletter(params.jid);
          const post = newsletter.posts.find((entry) => String(entry.serverId) === params.serverId);
          if (!post) throw new SimError(404, `no post ${params.serverId}`);
          const count = body.count === undefined ? 1 : Number(body.count);
          if (!Number.isInteger(count) || count < 1 || count > 1_000_000) throw new SimError(400, 'count must be a whole number from 1 to 1000000');
          post.views += count;
          return { serverId: post.serverId, views: post.views };
        },
      },
    ];
  }
}
