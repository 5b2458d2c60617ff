// Channels/newsletters: the GraphQL-over-iq `w:mex` queries Baileys uses (create, metadata,
// follow, mute, update, delete…), `<plaintext>` posts fanned out to followers with a server_id,
// reactions, and the `newsletter` iq (message_updates, live_updates). Response shapes follow what
// rc14 parses (newsletter.js, mex.js); fields it ignores are filled with plausible values.
import { randomBytes, randomInt } from 'crypto';
import { proto } from './baileys';
import type { Account, DeviceRef } from './accounts';
import type { SimContext } from './context';
import type { RouteSpec } from './route-spec';
import { SimError } from './errors';
import type { BinaryNode } from './node-io';
import { child, contentBytes, iqError, iqResult, node, unixNow } from './node-io';
import { generateMessageId, messageToJson, stanzaTypeFor } from './phone';

// Baileys' QueryIds (Types/Mex.js).
const Q = {
  CREATE: '8823471724422422',
  UPDATE_METADATA: '24250201037901610',
  METADATA: '6563316087068696',
  SUBSCRIBERS: '9783111038412085',
  FOLLOW: '24404358912487870',
  UNFOLLOW: '9767147403369991',
  MUTE: '29766401636284406',
  UNMUTE: '9864994326891137',
  ADMIN_COUNT: '7130823597031706',
  CHANGE_OWNER: '7341777602580933',
  DEMOTE: '6551828931592903',
  DELETE: '30062808666639665',
  REACHOUT_TIMELOCK: '23983697327930364',
  MESSAGE_CAPPING_INFO: '24503548349331633',
  // Not a constant of rc14: WhatsApp Web's (and whatsmeow's) list of the channels the account follows or owns.
  SUBSCRIBED: '6388546374527196',
} as const;

export interface NewsletterPost {
  serverId: number;
  id: string;
  t: number;
  type: string;
  bytes: Buffer;
  reactions: Map<string, Set<string>>;
  views: number;
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
}

type MexVariables = Record<string, unknown>;

export class NewsletterStore {
  private readonly byJid = new Map<string, Newsletter>();

  constructor(private readonly ctx: SimContext) {}

  toState(): NewsletterState[] {
    return [...this.byJid.values()].map((n) => ({
      ...n,
      owner: n.owner.phone,
      followers: [...n.followers.values()].map((f) => ({ phone: f.account.phone, muted: f.muted })),
      posts: n.posts.map((p) => ({ ...p, reactions: [...p.reactions.entries()].map(([code, who]) => [code, [...who]]) })),
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
      };
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
    };
    this.byJid.set(jid, newsletter);
    return newsletter;
  }

  private metadata(newsletter: Newsletter, viewer: Account): Record<string, unknown> {
    const follower = newsletter.followers.get(viewer.phone);
    const role = viewer === newsletter.owner ? 'OWNER' : follower ? 'SUBSCRIBER' : 'GUEST';
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
        picture: { id: '', type: 'IMAGE', direct_path: '' },
        preview: { id: '', type: 'PREVIEW', direct_path: '' },
        subscribers_count: String(newsletter.followers.size),
        verification: 'UNVERIFIED',
        settings: { reaction_codes: { value: 'ALL' } },
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
    const me = sender.account;
    const id = typeof variables.newsletter_id === 'string' ? variables.newsletter_id : undefined;
    const target = id ? this.get(id) : undefined;
    const notFound = { errors: [{ message: 'newsletter not found', extensions: { error_code: 404 } }] };
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
        if (target.owner !== me) return this.mexResult(iq, { errors: [{ message: 'not an admin', extensions: { error_code: 403 } }] });
        const updates = (variables.updates ?? {}) as { name?: string; description?: string };
        if (typeof updates.name === 'string') target.name = updates.name;
        if (typeof updates.description === 'string') target.description = updates.description;
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
      case Q.CHANGE_OWNER:
      case Q.DEMOTE:
        return this.mexResult(
          iq,
          target ? data(queryId === Q.DEMOTE ? 'xwa2_newsletter_demote' : 'xwa2_newsletter_change_owner', { id: target.jid }) : notFound,
        );
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
        return this.mexResult(iq, { errors: [{ message: `query ${queryId} not simulated`, extensions: { error_code: 501 } }] });
    }
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
    return node('message', { id: post.id, server_id: String(post.serverId), t: String(post.t), type: post.type, views_count: String(post.views) }, [
      node('plaintext', {}, post.bytes),
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
      if (post) {
        for (const who of post.reactions.values()) who.delete(sender.account.phone);
        const code = reaction.attrs.code;
        if (code && stanza.attrs.edit !== '7') {
          const set = post.reactions.get(code) ?? new Set<string>();
          set.add(sender.account.phone);
          post.reactions.set(code, set);
        }
      }
      return ack;
    }
    const plaintext = contentBytes(child(stanza, 'plaintext'));
    if (!plaintext) {
      ack.attrs.error = '400';
      return ack;
    }
    if (newsletter.owner !== sender.account) {
      ack.attrs.error = '403';
      return ack;
    }
    const post = this.publish(newsletter, plaintext, stanza.attrs.type ?? 'text', stanza.attrs.id);
    ack.attrs.server_id = String(post.serverId);
    return ack;
  }

  private publish(newsletter: Newsletter, bytes: Buffer, type: string, id: string): NewsletterPost {
    const post: NewsletterPost = { serverId: newsletter.nextServerId++, id, t: unixNow(), type, bytes, reactions: new Map(), views: 0 };
    newsletter.posts.push(post);
    const stanza = node('message', { from: newsletter.jid, id, server_id: String(post.serverId), t: String(post.t), type }, [node('plaintext', {}, bytes)]);
    const recipients = [newsletter.owner, ...[...newsletter.followers.values()].map((f) => f.account)];
    for (const account of new Set(recipients)) {
      for (const device of account.activeDevices()) this.ctx.deliverToCompanion(device, stanza);
    }
    return post;
  }

  info(newsletter: Newsletter): Record<string, unknown> {
    return {
      jid: newsletter.jid,
      name: newsletter.name,
      description: newsletter.description,
      invite: newsletter.invite,
      owner: newsletter.owner.jid,
      followers: [...newsletter.followers.values()].map((f) => ({ phone: f.account.phone, muted: f.muted })),
      posts: newsletter.posts.map((p) => ({
        serverId: p.serverId,
        id: p.id,
        t: p.t,
        type: p.type,
        message: messageToJson(proto.Message.decode(p.bytes)),
        reactions: Object.fromEntries([...p.reactions.entries()].map(([code, who]) => [code, who.size])),
        views: p.views,
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
