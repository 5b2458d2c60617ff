// The channel queries Baileys sends as GraphQL over iq (`w:mex`): create, metadata, follow, mute, update,
// admin changes, delete, the viewer's list… answered from the newsletter store (newsletters.ts).
import type { Account, DeviceRef } from './accounts';
import type { SimContext } from './context';
import { MEX_QUERIES, mexBadRequest, mexQueryOf, type MexQueryName } from './mex-queries';
import type { BinaryNode } from './node-io';
import { child, contentBytes, iqResult, node, unixNow } from './node-io';
import { REACTION_CODES, type NewsletterStore, type ReactionCodes } from './newsletters';

// The query ids answered, from the one table of references (mex-queries.ts); nothing here names an id of its own.
const Q = Object.fromEntries(Object.entries(MEX_QUERIES).map(([name, query]) => [name, query.id])) as { [K in MexQueryName]: string };

type MexVariables = Record<string, unknown>;

let pictureIds = 1_000_000;
const nextPictureId = (): number => ++pictureIds;

export class NewsletterMex {
  constructor(
    private readonly store: NewsletterStore,
    private readonly ctx: Pick<SimContext, 'logger' | 'registry'>,
  ) {}

  /** Answers a channel query (`<iq xmlns=w:mex>`): the result JSON, or the error the relay gives. */
  handle(sender: DeviceRef, iq: BinaryNode): BinaryNode {
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
    const target = id ? this.store.get(id) : undefined;
    const notFound = { errors: [{ message: 'newsletter not found', extensions: { error_code: 404 } }] };
    const forbidden = (message: string) => ({ errors: [{ message, extensions: { error_code: 403 } }] });
    const badRequest = (message: string) => ({ errors: [{ message, extensions: { error_code: 400 } }] });
    const data = (path: string, value: unknown): Record<string, unknown> => ({ data: { [path]: value } });
    switch (queryId) {
      case Q.CREATE: {
        const input = (variables.input ?? {}) as { name?: string; description?: string | null };
        const created = this.store.create(me, input.name ?? 'Channel', input.description ?? '');
        return this.mexResult(iq, data('xwa2_newsletter_create', this.store.metadata(created, me)));
      }
      case Q.METADATA: {
        const input = (variables.input ?? {}) as { key?: string; type?: string };
        const found = input.key ? this.store.get(input.key) : undefined;
        return this.mexResult(iq, found ? data('xwa2_newsletter', this.store.metadata(found, me)) : notFound);
      }
      case Q.UPDATE_METADATA: {
        if (!target) return this.mexResult(iq, notFound);
        if (!this.store.isAdmin(target, me)) return this.mexResult(iq, forbidden('not an admin'));
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
        return this.mexResult(iq, data('xwa2_newsletter_update', this.store.metadata(target, me)));
      }
      case Q.FOLLOW:
        if (!target) return this.mexResult(iq, notFound);
        target.followers.set(me.phone, { account: me, muted: false });
        return this.mexResult(iq, data('xwa2_newsletter_join_v2', this.store.metadata(target, me)));
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
        if (!this.store.isAdmin(target, me)) return this.mexResult(iq, forbidden('not an admin'));
        const user = this.userOf(variables.user_id);
        if (!user) return this.mexResult(iq, { errors: [{ message: 'user not found', extensions: { error_code: 404 } }] });
        if (user === target.owner || target.admins.has(user.phone)) return this.mexResult(iq, badRequest('already an admin'));
        const t = unixNow();
        target.adminInvites.set(user.phone, { account: user, t });
        return this.mexResult(iq, data('xwa2_newsletter_admin_invite_create', { id: user.lidJid, invite_expiration_time: String(t + 30 * 86_400) }));
      }
      case Q.ADMIN_INVITE_REVOKE: {
        if (!target) return this.mexResult(iq, notFound);
        if (!this.store.isAdmin(target, me)) return this.mexResult(iq, forbidden('not an admin'));
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
        const found = this.store
          .all()
          .filter((n) => !n.deleted && (!text || n.name.toLowerCase().includes(text) || n.description.toLowerCase().includes(text)))
          .sort((a, b) => b.followers.size - a.followers.size || a.name.localeCompare(b.name));
        const page = found.slice(start, start + limit);
        const cursor = (at: number) => Buffer.from(`arrayconnection:${at}`, 'utf-8').toString('base64');
        const path = queryId === Q.DIRECTORY_SEARCH ? 'xwa2_newsletters_directory_search' : 'xwa2_newsletters_directory_list';
        return this.mexResult(
          iq,
          data(path, {
            result: page.map((n) => this.store.metadata(n, me)),
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
        const mine = this.store.all().filter((n) => !n.deleted && (n.owner === me || n.followers.has(me.phone)));
        return this.mexResult(
          iq,
          data(
            'xwa2_newsletter_subscribed',
            mine.map((n) => this.store.metadata(n, me)),
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

  /** A `user_id` of a mex query: a LID or phone-number JID. */
  private userOf(value: unknown): Account | undefined {
    return typeof value === 'string' && value.includes('@') ? this.ctx.registry.resolveUser(value) : undefined;
  }

  private mexResult(iq: BinaryNode, payload: Record<string, unknown>): BinaryNode {
    return iqResult(iq, [node('result', {}, Buffer.from(JSON.stringify(payload), 'utf-8'))]);
  }
}
