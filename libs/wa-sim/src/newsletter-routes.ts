// The control API's routes over channels (`/sim/newsletters…`): create, read, post, react, edit, follow.
import { proto } from './baileys';
import type { Account } from './accounts';
import type { SimContext } from './context';
import { SimError } from './errors';
import { generateMessageId, stanzaTypeFor } from './message-codec';
import { unixNow } from './node-io';
import type { Newsletter, NewsletterStore } from './newsletters';
import type { RouteSpec } from './route-spec';

/** The channel routes, handled by the newsletter store. */
export function newsletterRoutes(store: NewsletterStore, ctx: Pick<SimContext, 'registry'>): RouteSpec[] {
  const requireAccount = (phone: unknown): Account => {
    const account = typeof phone === 'string' || typeof phone === 'number' ? ctx.registry.resolveUser(String(phone)) : undefined;
    if (!account) throw new SimError(404, `no account ${String(phone)}`);
    return account;
  };
  const requireNewsletter = (jid: string): Newsletter => {
    const newsletter = store.get(jid);
    if (!newsletter) throw new SimError(404, `no newsletter ${jid}`);
    return newsletter;
  };
  return [
    {
      method: 'POST',
      path: '/sim/newsletters',
      handler: ({ body }) => {
        if (typeof body.name !== 'string' || !body.name) throw new SimError(400, 'name is required');
        const newsletter = store.create(requireAccount(body.owner), body.name, typeof body.description === 'string' ? body.description : '');
        for (const phone of Array.isArray(body.followers) ? body.followers : []) {
          const account = requireAccount(phone);
          newsletter.followers.set(account.phone, { account, muted: false });
        }
        return store.info(newsletter);
      },
    },
    { method: 'GET', path: '/sim/newsletters/{jid}', handler: ({ params }) => store.info(requireNewsletter(params.jid)) },
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
        const post = store.publish(newsletter, Buffer.from(proto.Message.encode(message).finish()), stanzaTypeFor(message), generateMessageId());
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
        store.changePost(newsletter, post, '3', Buffer.from(proto.Message.encode({ conversation: body.text }).finish()));
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
        store.changePost(newsletter, post, '8', Buffer.alloc(0));
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
        return store.info(newsletter);
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
        return store.info(newsletter);
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
