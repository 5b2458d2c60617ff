import { ErrorCode, RpcError } from '@gw/contracts';
import type { OpHandlers, OpRequestParsers } from './op-handler';
import { groupCall, ownIds, toGroupObject } from './group-object';

/** The ops of the gateway's `group/` area: groups the instance creates, reads and runs. */
export type GroupOps = 'group.create' | 'group.info' | 'group.list';

const GROUP_JID = /^\d{5,}(-\d+)?@g\.us$/;
const USER_JID = /^\d{5,20}@s\.whatsapp\.net$|^\d{1,20}@lid$/;
const MAX_PARTICIPANTS = 1024;

function groupJidOf(raw: Record<string, unknown>): string {
  const groupJid = typeof raw.groupJid === 'string' ? raw.groupJid : '';
  if (!GROUP_JID.test(groupJid)) throw new RpcError(ErrorCode.BadRequest, 'groupJid must be a group JID');
  return groupJid;
}

function userJidsOf(value: unknown, field: string): string[] {
  if (!Array.isArray(value) || value.length > MAX_PARTICIPANTS || !value.every((jid): jid is string => typeof jid === 'string' && USER_JID.test(jid)))
    throw new RpcError(ErrorCode.BadRequest, `${field} must be user JIDs`);
  return value;
}

export const groupRequests = {
  'group.create': (raw, instanceId) => {
    const name = typeof raw.name === 'string' ? raw.name : '';
    if (!name.trim() || name.length > 100) throw new RpcError(ErrorCode.BadRequest, 'name must be 1 to 100 characters');
    return { instanceId, name, participants: userJidsOf(raw.participants, 'participants') };
  },
  'group.info': (raw, instanceId) => ({ instanceId, groupJid: groupJidOf(raw), inviteLink: raw.inviteLink === true, requests: raw.requests === true }),
  'group.list': (_raw, instanceId) => ({ instanceId }),
} satisfies OpRequestParsers<GroupOps>;

/** Where an invite code is a link. */
export const INVITE_URL_BASE = 'https://chat.whatsapp.com/';

export function groupOps(): OpHandlers<GroupOps> {
  return {
    'group.create': async (session, request) => {
      const socket = session.openSocket();
      const group = await groupCall('error creating group', () => socket.groupCreate(request.name, request.participants));
      return toGroupObject(group, ownIds(socket));
    },
    'group.info': async (session, request) => {
      const socket = session.openSocket();
      const group = await groupCall('error getting group info', () => socket.groupMetadata(request.groupJid), true);
      const reply: ReturnType<typeof toGroupObject> & { invite_link?: string; request_participants?: string } = toGroupObject(group, ownIds(socket));
      // The link and the requests are an admin's to read: a member gets the group with them empty.
      if (request.inviteLink && !reply.OwnerIsAdmin) reply.invite_link = '';
      if (request.requests && !reply.OwnerIsAdmin) reply.request_participants = '';
      if (request.inviteLink && reply.OwnerIsAdmin) {
        const code = await groupCall('error getting invite link', () => socket.groupInviteCode(request.groupJid));
        reply.invite_link = code ? `${INVITE_URL_BASE}${code}` : '';
      }
      if (request.requests && reply.OwnerIsAdmin) {
        const pending = await groupCall('error getting join requests', () => socket.groupRequestParticipantsList(request.groupJid));
        reply.request_participants = pending
          .map((entry) => String(entry.phone_number ?? entry.jid ?? ''))
          .filter(Boolean)
          .join(',');
      }
      return reply;
    },
    'group.list': async (session) => {
      const socket = session.openSocket();
      const groups = await groupCall('error listing groups', () => socket.groupFetchAllParticipating(), true);
      const me = ownIds(socket);
      return { groups: Object.values(groups).map((group) => toGroupObject(group, me)) };
    },
  };
}
