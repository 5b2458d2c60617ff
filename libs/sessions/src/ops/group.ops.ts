import { ErrorCode, RpcError } from '@gw/contracts';
import type { OpHandlers, OpRequestParsers } from './op-handler';
import type { WASocket } from '../baileys';
import { GroupMetadataCache } from '../messaging/group-metadata-cache';
import type { MediaSource } from '../outbound/media-source';
import { groupCall, groupJidOf, groupReader, groupRefusal, MAX_DESCRIPTION, ownIds, toGroupObject } from './group-object';
import { loadPicture, pictureSourceOf } from './picture-source';

/** The `group.*` ops: groups the instance creates, reads and runs. */
export type GroupOps =
  | 'group.create'
  | 'group.info'
  | 'group.list'
  | 'group.inviteInfo'
  | 'group.join'
  | 'group.leave'
  | 'group.resetInvite'
  | 'group.participants'
  | 'group.joinApproval'
  | 'group.name'
  | 'group.description'
  | 'group.setting'
  | 'group.memberAddMode'
  | 'group.ephemeral'
  | 'group.image';

const USER_JID = /^\d{5,20}@s\.whatsapp\.net$|^\d{1,20}@lid$/;
const MAX_PARTICIPANTS = 1024;
/** What follows `https://chat.whatsapp.com/`. */
export const INVITE_CODE = /^[A-Za-z0-9_-]{6,64}$/;
const PARTICIPANT_ACTIONS = ['add', 'remove', 'promote', 'demote', 'approve', 'reject'] as const;
type ParticipantAction = (typeof PARTICIPANT_ACTIONS)[number];
const GROUP_SETTINGS = ['announcement', 'not_announcement', 'locked', 'unlocked'] as const;
const MEMBER_ADD_MODES = ['admin_add', 'all_member_add'] as const;
/** WhatsApp's disappearing-message timers: off, 24 hours, 7 days, 90 days. */
export const EPHEMERAL_SECONDS = [0, 86_400, 604_800, 7_776_000] as const;
/** A group picture's largest source (the reference answers 413 above it); Baileys makes a 640×640 JPEG of it. */
export const MAX_GROUP_PICTURE_BYTES = 5 * 1024 * 1024;

function inviteCodeOf(raw: Record<string, unknown>): string {
  const code = typeof raw.code === 'string' ? raw.code : '';
  if (!INVITE_CODE.test(code)) throw new RpcError(ErrorCode.BadRequest, 'invalid invite code');
  return code;
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
  'group.info': (raw, instanceId) => ({
    instanceId,
    groupJid: groupJidOf(raw),
    inviteLink: raw.inviteLink === true,
    requests: raw.requests === true,
    force: raw.force === true,
  }),
  'group.list': (raw, instanceId) => ({ instanceId, force: raw.force === true }),
  'group.inviteInfo': (raw, instanceId) => ({ instanceId, code: inviteCodeOf(raw) }),
  'group.join': (raw, instanceId) => ({ instanceId, code: inviteCodeOf(raw) }),
  'group.leave': (raw, instanceId) => ({ instanceId, groupJid: groupJidOf(raw) }),
  'group.resetInvite': (raw, instanceId) => ({ instanceId, groupJid: groupJidOf(raw) }),
  'group.participants': (raw, instanceId) => {
    const action = PARTICIPANT_ACTIONS.find((known) => known === raw.action);
    if (!action) throw new RpcError(ErrorCode.BadRequest, `action must be one of ${PARTICIPANT_ACTIONS.join(', ')}`);
    const participants = userJidsOf(raw.participants, 'participants');
    if (!participants.length) throw new RpcError(ErrorCode.BadRequest, 'participants must name at least one user');
    return { instanceId, groupJid: groupJidOf(raw), action, participants };
  },
  'group.joinApproval': (raw, instanceId) => {
    if (typeof raw.required !== 'boolean') throw new RpcError(ErrorCode.BadRequest, 'required must be a boolean');
    return { instanceId, groupJid: groupJidOf(raw), required: raw.required };
  },
  'group.name': (raw, instanceId) => {
    const name = typeof raw.name === 'string' ? raw.name : '';
    if (!name.trim() || name.length > 100) throw new RpcError(ErrorCode.BadRequest, 'name must be 1 to 100 characters');
    return { instanceId, groupJid: groupJidOf(raw), name };
  },
  'group.description': (raw, instanceId) => {
    if (typeof raw.description !== 'string' || raw.description.length > MAX_DESCRIPTION)
      throw new RpcError(ErrorCode.BadRequest, `description must be a string of at most ${MAX_DESCRIPTION} characters`);
    return { instanceId, groupJid: groupJidOf(raw), description: raw.description };
  },
  'group.setting': (raw, instanceId) => {
    const setting = GROUP_SETTINGS.find((known) => known === raw.setting);
    if (!setting) throw new RpcError(ErrorCode.BadRequest, `setting must be one of ${GROUP_SETTINGS.join(', ')}`);
    return { instanceId, groupJid: groupJidOf(raw), setting };
  },
  'group.memberAddMode': (raw, instanceId) => {
    const mode = MEMBER_ADD_MODES.find((known) => known === raw.mode);
    if (!mode) throw new RpcError(ErrorCode.BadRequest, `mode must be one of ${MEMBER_ADD_MODES.join(', ')}`);
    return { instanceId, groupJid: groupJidOf(raw), mode };
  },
  'group.ephemeral': (raw, instanceId) => {
    const seconds = EPHEMERAL_SECONDS.find((known) => known === raw.seconds);
    if (seconds === undefined) throw new RpcError(ErrorCode.BadRequest, `seconds must be one of ${EPHEMERAL_SECONDS.join(', ')}`);
    return { instanceId, groupJid: groupJidOf(raw), seconds };
  },
  'group.image': (raw, instanceId) => ({ instanceId, groupJid: groupJidOf(raw), picture: pictureSourceOf(raw.picture, 'image') }),
} satisfies OpRequestParsers<GroupOps>;

/** Where an invite code is a link. */
export const INVITE_URL_BASE = 'https://chat.whatsapp.com/';

export function groupOps(media?: MediaSource, cache: GroupMetadataCache = new GroupMetadataCache()): OpHandlers<GroupOps> {
  /** The group as cached (unless `force`), else read from WhatsApp and cached. */
  const readGroup = groupReader(cache);
  /** A change WhatsApp makes to the group (its refusals as bus errors), then the group as it is after (cached). */
  const changeAndRead = async (socket: WASocket, instanceId: string, groupJid: string, what: string, change: () => Promise<unknown>) => {
    await groupCall(what, change);
    cache.invalidate(instanceId, groupJid, false);
    return toGroupObject(await readGroup(socket, instanceId, groupJid, what), ownIds(socket));
  };
  return {
    'group.create': async (session, request) => {
      const socket = session.openSocket();
      const group = await groupCall('error creating group', () => socket.groupCreate(request.name, request.participants));
      cache.put(request.instanceId, group);
      return toGroupObject(group, ownIds(socket));
    },
    'group.info': async (session, request) => {
      const socket = session.openSocket();
      const group = await readGroup(socket, request.instanceId, request.groupJid, 'error getting group info', request.force === true);
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
    'group.list': async (session, request) => {
      const socket = session.openSocket();
      let groups = request.force ? undefined : cache.list(request.instanceId);
      if (!groups) {
        groups = Object.values(await groupCall('error listing groups', () => socket.groupFetchAllParticipating(), true));
        cache.putList(request.instanceId, groups);
      }
      const me = ownIds(socket);
      return { groups: groups.map((group) => toGroupObject(group, me)) };
    },
    'group.inviteInfo': async (session, request) => {
      const socket = session.openSocket();
      const group = await inviteCall('error getting group info', () => socket.groupGetInviteInfo(request.code));
      return toGroupObject(group, ownIds(socket));
    },
    'group.join': async (session, request) => {
      const socket = session.openSocket();
      // The code is checked first: WhatsApp's answer to a join does not tell an unknown code from a request.
      const invited = await inviteCall('error joining group', () => socket.groupGetInviteInfo(request.code));
      const joined = await inviteCall('error joining group', () => socket.groupAcceptInvite(request.code));
      if (!joined) return { status: 'requested', group: toGroupObject(invited, ownIds(socket)) };
      cache.invalidate(request.instanceId, joined, true);
      const group = await readGroup(socket, request.instanceId, joined, 'error joining group');
      return { status: 'joined', group: toGroupObject(group, ownIds(socket)) };
    },
    'group.leave': async (session, request) => {
      const socket = session.openSocket();
      // WhatsApp answers a leave of any group alike: a group the instance is not in is a 404 first.
      await readGroup(socket, request.instanceId, request.groupJid, 'error leaving group', false);
      await groupCall('error leaving group', () => socket.groupLeave(request.groupJid));
      cache.remove(request.instanceId, request.groupJid);
      return { ok: true };
    },
    'group.resetInvite': async (session, request) => {
      const socket = session.openSocket();
      const code = await groupCall('error resetting invite link', () => socket.groupRevokeInvite(request.groupJid));
      if (!code) throw new RpcError(ErrorCode.Internal, 'error resetting invite link: WhatsApp answered no code');
      const group = await readGroup(socket, request.instanceId, request.groupJid, 'error resetting invite link');
      return { code, group: toGroupObject(group, ownIds(socket)) };
    },
    'group.participants': async (session, request) => {
      const socket = session.openSocket();
      const what = `error updating participants (${request.action})`;
      const results = await groupCall(what, () =>
        request.action === 'approve' || request.action === 'reject'
          ? socket.groupRequestParticipantsUpdate(request.groupJid, request.participants, request.action)
          : socket.groupParticipantsUpdate(request.groupJid, request.participants, request.action as Exclude<ParticipantAction, 'approve' | 'reject'>),
      );
      cache.invalidate(request.instanceId, request.groupJid, true);
      const group = await readGroup(socket, request.instanceId, request.groupJid, what);
      return {
        groupUpdated: results.map((result) => ({ JID: result.jid ?? '', Error: Number(result.status) === 200 ? 0 : Number(result.status) || 500 })),
        group: toGroupObject(group, ownIds(socket)),
      };
    },
    'group.joinApproval': async (session, request) => {
      const socket = session.openSocket();
      const what = 'error updating join approval';
      return changeAndRead(socket, request.instanceId, request.groupJid, what, () =>
        socket.groupJoinApprovalMode(request.groupJid, request.required ? 'on' : 'off'),
      );
    },
    'group.name': async (session, request) => {
      const socket = session.openSocket();
      return changeAndRead(socket, request.instanceId, request.groupJid, 'error updating group name', () =>
        socket.groupUpdateSubject(request.groupJid, request.name),
      );
    },
    'group.description': async (session, request) => {
      const socket = session.openSocket();
      const what = 'error updating group description';
      return changeAndRead(socket, request.instanceId, request.groupJid, what, () =>
        socket.groupUpdateDescription(request.groupJid, request.description || undefined),
      );
    },
    'group.setting': async (session, request) => {
      const socket = session.openSocket();
      const what = `error updating group setting (${request.setting})`;
      return changeAndRead(socket, request.instanceId, request.groupJid, what, () => socket.groupSettingUpdate(request.groupJid, request.setting));
    },
    'group.memberAddMode': async (session, request) => {
      const socket = session.openSocket();
      const what = 'error updating member add mode';
      return changeAndRead(socket, request.instanceId, request.groupJid, what, () => socket.groupMemberAddMode(request.groupJid, request.mode));
    },
    'group.ephemeral': async (session, request) => {
      const socket = session.openSocket();
      const what = 'error updating ephemeral timer';
      return changeAndRead(socket, request.instanceId, request.groupJid, what, () => socket.groupToggleEphemeral(request.groupJid, request.seconds));
    },
    'group.image': async (session, request) => {
      const socket = session.openSocket();
      const what = 'error updating group image';
      // The group first: WhatsApp's answer to a picture of a group the instance is not in says little.
      await readGroup(socket, request.instanceId, request.groupJid, what, false);
      if ('remove' in request.picture)
        return changeAndRead(socket, request.instanceId, request.groupJid, what, () => socket.removeProfilePicture(request.groupJid));
      const picture = await loadPicture(media, request.instanceId, request.picture, 'image', MAX_GROUP_PICTURE_BYTES, ErrorCode.UnsupportedMedia);
      return changeAndRead(socket, request.instanceId, request.groupJid, what, () => socket.updateProfilePicture(request.groupJid, picture));
    },
  };
}

/** An invite IQ: a code WhatsApp does not know (404, 406, 410) is a NotFound naming the link, not the group. */
async function inviteCall<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const { data, output } = (error ?? {}) as { data?: unknown; output?: { statusCode?: number } };
    const code = typeof data === 'number' ? data : output?.statusCode;
    if (code === 404 || code === 406 || code === 410) throw new RpcError(ErrorCode.NotFound, `${what}: the invite link is invalid or has expired`);
    throw groupRefusal(error, what);
  }
}
