// Channels/newsletters: the store of channels, `<plaintext>` posts fanned out to followers with a
// server_id, reactions, and the `newsletter` iq (message_updates, live_updates). Response shapes follow
// what rc14 parses (newsletter.js, mex.js); fields it ignores are filled with plausible values. The
// `w:mex` queries (create, metadata, follow, mute, update, delete…) are newsletter-mex.ts; the control
// API's channel routes, newsletter-routes.ts.
import { randomBytes, randomInt } from 'crypto';
import { proto } from './baileys';
import type { Account, DeviceRef } from './accounts';
import type { NewsletterRouting, SimContext } from './context';
import type { BinaryNode } from './node-io';
import { child, contentBytes, iqError, iqResult, node, unixNow } from './node-io';
import { messageToJson } from './message-codec';

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

  /** Every channel, deleted ones included. */
  all(): Newsletter[] {
    return [...this.byJid.values()];
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

  /** The channel as a mex answer shows it to `viewer` (its role, mute). */
  metadata(newsletter: Newsletter, viewer: Account): Record<string, unknown> {
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

  /** The owner or one of the channel's admins. */
  isAdmin(newsletter: Newsletter, account: Account): boolean {
    return newsletter.owner === account || newsletter.admins.has(account.phone);
  }

  /** A post by the channel: stored with the next server id and fanned out to the followers. */
  publish(newsletter: Newsletter, bytes: Buffer, type: string, id: string): NewsletterPost {
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
}
