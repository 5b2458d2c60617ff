// The control API's routes over groups (`/sim/groups…`): create, read, change participants and settings,
// join requests, pictures, presence and the chat states an account saw.
import type { Account } from './accounts';
import { digitsOnly } from './accounts';
import type { SimContext } from './context';
import { SimError } from './errors';
import type { Group } from './group-model';
import { jpegSize } from './group-pictures';
import type { GroupStore } from './groups';
import { node, unixNow } from './node-io';
import type { RouteSpec } from './route-spec';

/** A 1×1 JPEG. */
const TINY_JPEG =
  '/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP//////////////////////////////////////////////////////////////////////////////////////wgALCAABAAEBAREA/8QAFBABAAAAAAAAAAAAAAAAAAAAAP/aAAgBAQABPxA=';

/** The group routes, handled by the group store. */
export function groupRoutes(store: GroupStore, ctx: Pick<SimContext, 'registry'>): RouteSpec[] {
  const requireGroup = (jid: string): Group => {
    const group = store.get(jid);
    if (!group) throw new SimError(404, `no group ${jid}`);
    return group;
  };
  const requireAccount = (phone: unknown): Account => {
    const account = typeof phone === 'string' || typeof phone === 'number' ? ctx.registry.resolveUser(String(phone)) : undefined;
    if (!account) throw new SimError(404, `no account ${String(phone)}`);
    return account;
  };
  const accountsFrom = (value: unknown): Account[] => {
    if (!Array.isArray(value)) throw new SimError(400, 'participants must be an array');
    return value.map((v) => requireAccount(typeof v === 'string' && v.includes('@') ? v : digitsOnly(String(v))));
  };
  return [
    {
      method: 'POST',
      path: '/sim/groups',
      handler: ({ body }) => {
        const creator = requireAccount(body.creator);
        const subject = typeof body.subject === 'string' ? body.subject : 'Sim group';
        const mode = body.addressingMode === 'pn' ? 'pn' : 'lid';
        if (body.community === true) {
          // A community the creator runs: its parent group and its announcements group.
          const community = store.create(creator, subject, accountsFrom(body.participants ?? []), {
            addressingMode: mode,
            parent: { defaultMembershipApprovalMode: 'request_required' },
          });
          store.create(creator, subject, accountsFrom(body.participants ?? []), {
            addressingMode: mode,
            linkedParent: community.jid,
            defaultSubGroup: true,
            announce: true,
          });
          return store.info(community);
        }
        return store.info(store.create(creator, subject, accountsFrom(body.participants ?? []), { addressingMode: mode }));
      },
    },
    { method: 'GET', path: '/sim/groups/{jid}', handler: ({ params }) => store.info(requireGroup(params.jid)) },
    {
      // A member (`actor`) sets the group's picture from its phone (`image`: base64 of a JPEG; a tiny one when absent) or removes it (`remove: true`).
      method: 'POST',
      path: '/sim/groups/{jid}/picture',
      handler: ({ params, body }) => {
        const group = requireGroup(params.jid);
        const actor = requireAccount(body.actor ?? group.creator.phone);
        if (!group.members.has(actor.phone)) throw new SimError(403, `${actor.phone} is not in ${group.jid}`);
        const bytes = body.remove === true ? undefined : Buffer.from(typeof body.image === 'string' ? body.image : TINY_JPEG, 'base64');
        if (bytes && (bytes[0] !== 0xff || bytes[1] !== 0xd8)) throw new SimError(400, 'image must be a JPEG');
        store.setPicture(group, actor, bytes);
        return store.info(group);
      },
    },
    {
      // The picture WhatsApp keeps for the group: its size and format, read from the JPEG.
      method: 'GET',
      path: '/sim/groups/{jid}/picture',
      handler: ({ params }) => {
        const picture = requireGroup(params.jid).picture;
        if (!picture) throw new SimError(404, `${params.jid} has no picture`);
        return jpegSize(picture.bytes);
      },
    },
    {
      method: 'POST',
      path: '/sim/groups/{jid}/participants',
      handler: ({ params, body }) => {
        const group = requireGroup(params.jid);
        const actor = requireAccount(body.actor ?? group.creator.phone);
        const action = body.action;
        if (action !== 'add' && action !== 'remove' && action !== 'promote' && action !== 'demote')
          throw new SimError(400, 'action must be add|remove|promote|demote');
        const results = store.changeParticipants(
          group,
          actor,
          action,
          accountsFrom(body.participants).map((a) => a.jid),
        );
        return { results: results.map((r) => ({ jid: r.attrs.jid, status: r.attrs.error ?? '200' })), group: store.info(group) };
      },
    },
    {
      method: 'POST',
      path: '/sim/groups/{jid}/join-requests',
      handler: ({ params, body }) => {
        const group = requireGroup(params.jid);
        const account = requireAccount(body.phone);
        if (body.cancel === true) {
          if (!store.dropRequest(group, account, account)) throw new SimError(404, `${account.phone} has no join request in ${group.jid}`);
          return store.info(group);
        }
        if (!group.joinApproval) throw new SimError(409, `${group.jid} does not require approval to join: use its invite link`);
        if (group.members.has(account.phone)) throw new SimError(409, `${account.phone} is already in ${group.jid}`);
        store.requestJoin(group, account, typeof body.method === 'string' ? body.method : 'invite_link');
        return store.info(group);
      },
    },
    {
      method: 'POST',
      path: '/sim/groups/{jid}/subject',
      handler: ({ params, body }) => {
        const group = requireGroup(params.jid);
        const actor = requireAccount(body.actor ?? group.creator.phone);
        if (typeof body.subject !== 'string') throw new SimError(400, 'subject is required');
        group.subject = body.subject;
        group.subjectOwner = actor;
        group.subjectTime = unixNow();
        store.notify(group, actor, node('subject', { subject: group.subject, s_t: String(group.subjectTime), s_o: store.memberJid(group, actor) }));
        return store.info(group);
      },
    },
    {
      // How often the account's devices listed their groups (the `participating` query).
      method: 'GET',
      path: '/sim/accounts/{phone}/group-reads',
      handler: ({ params }) => ({ participating: store.readCount(`participating:${requireAccount(params.phone).phone}`) }),
    },
    {
      method: 'GET',
      path: '/sim/accounts/{phone}/chatstates',
      handler: ({ params }) => ({ chatstates: store.chatstatesOf(requireAccount(params.phone).phone) }),
    },
    {
      method: 'POST',
      path: '/sim/groups/{jid}/settings',
      handler: ({ params, body }) => {
        const group = requireGroup(params.jid);
        const actor = requireAccount(body.actor ?? group.creator.phone);
        if (body.locked !== undefined && typeof body.locked !== 'boolean') throw new SimError(400, 'locked must be a boolean');
        if (body.announce !== undefined && typeof body.announce !== 'boolean') throw new SimError(400, 'announce must be a boolean');
        if (typeof body.locked === 'boolean' && body.locked !== group.locked) {
          group.locked = body.locked;
          store.notify(group, actor, node(group.locked ? 'locked' : 'unlocked', {}));
        }
        if (typeof body.announce === 'boolean' && body.announce !== group.announce) {
          group.announce = body.announce;
          store.notify(group, actor, node(group.announce ? 'announcement' : 'not_announcement', {}));
        }
        if (body.ephemeral !== undefined) {
          const seconds = Number(body.ephemeral);
          if (![0, 86_400, 604_800, 7_776_000].includes(seconds)) throw new SimError(400, 'ephemeral must be 0, 86400, 604800 or 7776000');
          if (seconds !== group.ephemeral) {
            group.ephemeral = seconds;
            store.notify(group, actor, seconds ? node('ephemeral', { expiration: String(seconds) }) : node('not_ephemeral', {}));
          }
        }
        if (body.memberAddMode !== undefined) {
          if (body.memberAddMode !== 'admin_add' && body.memberAddMode !== 'all_member_add')
            throw new SimError(400, 'memberAddMode must be admin_add or all_member_add');
          if (body.memberAddMode !== group.memberAddMode) {
            group.memberAddMode = body.memberAddMode;
            store.notify(group, actor, node('member_add_mode', {}, group.memberAddMode));
          }
        }
        if (body.joinApproval !== undefined && typeof body.joinApproval !== 'boolean') throw new SimError(400, 'joinApproval must be a boolean');
        if (typeof body.joinApproval === 'boolean' && body.joinApproval !== group.joinApproval) {
          group.joinApproval = body.joinApproval;
          store.notify(group, actor, node('membership_approval_mode', {}, [node('group_join', { state: group.joinApproval ? 'on' : 'off' })]));
        }
        return store.info(group);
      },
    },
    {
      method: 'POST',
      path: '/sim/accounts/{phone}/presence',
      handler: ({ params, body }) => {
        const account = requireAccount(params.phone);
        const type = body.type;
        if (type === 'available' || type === 'unavailable') {
          store.setPresence(account, type);
        } else if (type === 'composing' || type === 'recording' || type === 'paused') {
          if (typeof body.to !== 'string') throw new SimError(400, 'to is required for chatstates');
          const to = body.to.includes('@') ? body.to : `${digitsOnly(body.to)}@s.whatsapp.net`;
          store.forwardChatstate(account, to, type === 'recording' ? node('composing', { media: 'audio' }) : node(type, {}));
        } else {
          throw new SimError(400, 'type must be available|unavailable|composing|recording|paused');
        }
        return { ok: true };
      },
    },
  ];
}
