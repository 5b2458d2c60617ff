import { Injectable } from '@nestjs/common';
import { isBase64, parseChatTarget } from '@gw/domain';

import { ApiError } from '../common/api-error';
import { SendContentTools } from '../send/send-content-tools';
import { SessionClient } from '../session/session.client';
import { INVALID_GROUP_JID, type CreateGroupDto, type GroupInfoDto, type GroupJidDto, type GroupListDto } from './dto/group.dto';
import type { GroupInviteDto, GroupJoinApprovalDto, GroupParticipantsDto } from './dto/group.dto';
import type { GroupAnnounceDto, GroupDescriptionDto, GroupEphemeralDto, GroupLockedDto, GroupMemberAddModeDto, GroupNameDto } from './dto/group.dto';
import type { CommunityGroupsDto, CreateCommunityDto, GroupImageDto } from './dto/group.dto';
import type { CommunityCreatedResponse, CommunityGroupsResponse, GroupEphemeralResponse, GroupInviteInfoResponse } from './dto/group.response';
import type { GroupInviteLinkResponse, GroupJoinApprovalResponse, GroupJoinResponse, GroupListResponse } from './dto/group.response';
import type { GroupPageResponse, GroupParticipantsUpdateResponse, GroupResetInviteCodeResponse } from './dto/group.response';
import type { GroupResponse, GroupUpdateResponse } from './dto/group.response';
import type { ReplyResponse } from '../common/dto/reply.response';
import type { RequestInstance } from '../common/request-instance';

/** The group's JID from `groupjid` (or the older `groupJid`): `<digits>@g.us`. */
export function groupJidOf(dto: GroupJidDto): string {
  const value = (dto.groupjid ?? dto.groupJid ?? '').trim();
  if (!value) throw ApiError.badRequest('groupjid is required');
  const jid = value.endsWith('@g.us') ? value : `${value}@g.us`;
  if (parseChatTarget(jid)?.kind !== 'group') throw ApiError.badRequest(INVALID_GROUP_JID);
  return jid;
}

/** Members named by number or JID, as user JIDs; a 400 naming the first that is neither. */
export function participantJids(participants: string[]): string[] {
  return participants.map((participant) => {
    const parsed = parseChatTarget(participant);
    if (!parsed || (parsed.kind !== 'user' && parsed.kind !== 'lid')) throw ApiError.badRequest(`Could not parse phone: ${participant}`);
    return parsed.jid;
  });
}

/** Where an invite code is a link. */
export const INVITE_URL_BASE = 'https://chat.whatsapp.com/';
const INVITE_LINK = /^(?:https?:\/\/)?(?:chat\.whatsapp\.com)\/(?:invite\/)?([^/?#\s]+)\/?(?:[?#].*)?$/i;
const INVITE_CODE = /^[A-Za-z0-9_-]{6,64}$/;

/** The code of `invitecode` (or the older `inviteCode`): the code alone or the link `https://chat.whatsapp.com/<code>`; else 400 `invalid invite code`. */
export function inviteCodeOf(dto: GroupInviteDto): string {
  const value = (dto.invitecode ?? dto.inviteCode ?? '').trim();
  if (!value) throw ApiError.badRequest('invitecode is required');
  const code = INVITE_LINK.exec(value)?.[1] ?? value;
  if (!INVITE_CODE.test(code)) throw ApiError.badRequest('invalid invite code');
  return code;
}

const withoutParticipants = <T extends GroupResponse>(group: T): T => ({ ...group, Participants: [] });

/** Groups the instance creates, reads and runs (`/group/*`), each a request to the worker holding it. */
@Injectable()
export class GroupService {
  constructor(
    private readonly sessions: SessionClient,
    private readonly tools: SendContentTools,
  ) {}

  async create(instance: RequestInstance, dto: CreateGroupDto): Promise<GroupResponse> {
    return this.sessions.request(instance.id, 'group.create', {
      instanceId: instance.id,
      name: dto.name.trim(),
      participants: participantJids(dto.participants),
    });
  }

  async info(instance: RequestInstance, dto: GroupInfoDto): Promise<GroupResponse> {
    const group = await this.sessions.request(instance.id, 'group.info', {
      instanceId: instance.id,
      groupJid: groupJidOf(dto),
      inviteLink: dto.getInviteLink === true,
      requests: dto.getRequestsParticipants === true,
      force: dto.force === true,
    });
    return dto.noparticipants ? withoutParticipants(group) : group;
  }

  /** `POST /group/inviteInfo`: the group an invite leads to, without joining it. */
  async inviteInfo(instance: RequestInstance, dto: GroupInviteDto): Promise<GroupInviteInfoResponse> {
    const group = await this.sessions.request(instance.id, 'group.inviteInfo', { instanceId: instance.id, code: inviteCodeOf(dto) });
    return { response: 'Group info retrieved successfully', group };
  }

  /** `POST /group/join`: by code or link; with join approval on, the request waits for an admin. */
  async join(instance: RequestInstance, dto: GroupInviteDto): Promise<GroupJoinResponse> {
    const { status, group } = await this.sessions.request(instance.id, 'group.join', { instanceId: instance.id, code: inviteCodeOf(dto) });
    return { response: status === 'joined' ? 'Group join successful' : 'Group join request sent', group, needs_refresh: false };
  }

  async leave(instance: RequestInstance, dto: GroupJidDto): Promise<ReplyResponse> {
    await this.sessions.request(instance.id, 'group.leave', { instanceId: instance.id, groupJid: groupJidOf(dto) });
    return { response: 'Group leave successful' };
  }

  /** `GET /group/invitelink/{groupJid}` (uazapi 2.0): the group's current invite link; admins only (403 otherwise). */
  async inviteLink(instance: RequestInstance, dto: GroupJidDto): Promise<GroupInviteLinkResponse> {
    const group = await this.sessions.request(instance.id, 'group.info', {
      instanceId: instance.id,
      groupJid: groupJidOf(dto),
      inviteLink: true,
      requests: false,
      force: false,
    });
    if (!group.OwnerIsAdmin) throw new ApiError('forbidden', 'Only an admin of this group can read its invite link');
    if (!group.invite_link) throw new ApiError('whatsapp_refused', 'WhatsApp did not give the invite link');
    return { inviteLink: group.invite_link };
  }

  /** `POST /group/resetInviteCode`: a new link; the old one stops working. */
  async resetInviteCode(instance: RequestInstance, dto: GroupJidDto): Promise<GroupResetInviteCodeResponse> {
    const { code, group } = await this.sessions.request(instance.id, 'group.resetInvite', { instanceId: instance.id, groupJid: groupJidOf(dto) });
    return { InviteLink: `${INVITE_URL_BASE}${code}`, group, needs_refresh: false };
  }

  /** `POST /group/updateParticipants`: each participant's outcome, and the group after. */
  async updateParticipants(instance: RequestInstance, dto: GroupParticipantsDto): Promise<GroupParticipantsUpdateResponse> {
    const reply = await this.sessions.request(instance.id, 'group.participants', {
      instanceId: instance.id,
      groupJid: groupJidOf(dto),
      action: dto.action,
      participants: participantJids(dto.participants),
    });
    return { ...reply, needs_refresh: false };
  }

  /** `POST /group/updateJoinApproval`: admins only (403 otherwise). */
  async updateJoinApproval(instance: RequestInstance, dto: GroupJoinApprovalDto): Promise<GroupJoinApprovalResponse> {
    const group = await this.sessions.request(instance.id, 'group.joinApproval', {
      instanceId: instance.id,
      groupJid: groupJidOf(dto),
      required: dto.IsJoinApprovalRequired,
    });
    return {
      response: `Group join approval ${group.IsJoinApprovalRequired ? 'enabled' : 'disabled'} successfully`,
      group: { JID: group.JID, IsJoinApprovalRequired: group.IsJoinApprovalRequired },
      needs_refresh: false,
    };
  }

  /** `POST /group/updateName`: admins only when the group is locked (403 otherwise). */
  async updateName(instance: RequestInstance, dto: GroupNameDto): Promise<GroupUpdateResponse> {
    const group = await this.sessions.request(instance.id, 'group.name', { instanceId: instance.id, groupJid: groupJidOf(dto), name: dto.name.trim() });
    return { response: 'Group name updated successfully', group, needs_refresh: false };
  }

  /** `POST /group/updateDescription`: '' removes it; admins only when the group is locked. */
  async updateDescription(instance: RequestInstance, dto: GroupDescriptionDto): Promise<GroupUpdateResponse> {
    const group = await this.sessions.request(instance.id, 'group.description', {
      instanceId: instance.id,
      groupJid: groupJidOf(dto),
      description: dto.description.trim(),
    });
    return { response: 'Group description updated successfully', group, needs_refresh: false };
  }

  /** `POST /group/updateAnnounce`: admins only. */
  async updateAnnounce(instance: RequestInstance, dto: GroupAnnounceDto): Promise<GroupUpdateResponse> {
    const setting = dto.announce ? 'announcement' : 'not_announcement';
    const group = await this.sessions.request(instance.id, 'group.setting', { instanceId: instance.id, groupJid: groupJidOf(dto), setting });
    return { response: `Group announce ${dto.announce ? 'enabled' : 'disabled'} successfully`, group, needs_refresh: false };
  }

  /** `POST /group/updateLocked`: admins only. */
  async updateLocked(instance: RequestInstance, dto: GroupLockedDto): Promise<GroupUpdateResponse> {
    const setting = dto.locked ? 'locked' : 'unlocked';
    const group = await this.sessions.request(instance.id, 'group.setting', { instanceId: instance.id, groupJid: groupJidOf(dto), setting });
    return { response: 'Group lock status changed successfully', group, needs_refresh: false };
  }

  /** `POST /group/updateMemberAddMode`: admins only. */
  async updateMemberAddMode(instance: RequestInstance, dto: GroupMemberAddModeDto): Promise<GroupUpdateResponse> {
    const mode = dto.MemberAddMode;
    const group = await this.sessions.request(instance.id, 'group.memberAddMode', { instanceId: instance.id, groupJid: groupJidOf(dto), mode });
    return { response: `Group member add mode set to ${mode} successfully`, group, needs_refresh: false };
  }

  /** `POST /group/ephemeral`: disappearing messages off, 1 day, 7 days or 90 days; admins only when the group is locked. */
  async updateEphemeral(instance: RequestInstance, dto: GroupEphemeralDto): Promise<GroupEphemeralResponse> {
    const { seconds, label } = ephemeralDuration(dto.duration);
    const group = await this.sessions.request(instance.id, 'group.ephemeral', { instanceId: instance.id, groupJid: groupJidOf(dto), seconds });
    return { response: 'Ephemeral timer updated successfully', ephemeral: { enabled: seconds > 0, seconds, label }, group, needs_refresh: false };
  }

  /** `POST /group/updateImage`: a URL, base64 or data URI (a picture of at most 5 MB; WhatsApp gets a 640×640 JPEG of it), or `remove` / `delete`. */
  async updateImage(instance: RequestInstance, dto: GroupImageDto): Promise<GroupUpdateResponse> {
    const groupJid = groupJidOf(dto);
    const picture = await pictureSource(this.tools, instance, dto.image, 'image', MAX_GROUP_PICTURE_BYTES, 'unsupported_media_type');
    const group = await withStagedPicture(this.tools, instance, picture, () =>
      this.sessions.request(instance.id, 'group.image', { instanceId: instance.id, groupJid, picture }),
    );
    return { response: `Group image ${'remove' in picture ? 'removed' : 'updated'} successfully`, group, needs_refresh: false };
  }

  /** `POST /community/create`: the community's parent group (its announcements group is made with it). */
  async createCommunity(instance: RequestInstance, dto: CreateCommunityDto): Promise<CommunityCreatedResponse> {
    const group = await this.sessions.request(instance.id, 'community.create', {
      instanceId: instance.id,
      name: dto.name.trim(),
      description: dto.description?.trim() ?? '',
    });
    return { group, failed: [] };
  }

  /** `POST /community/editgroups`: each group linked or unlinked, or listed in `failed` when WhatsApp refused it. */
  async editCommunityGroups(instance: RequestInstance, dto: CommunityGroupsDto): Promise<CommunityGroupsResponse> {
    const communityJid = groupJidOf({ groupjid: dto.community });
    const groupJids = dto.groupjids.map((jid) => groupJidOf({ groupjid: jid }));
    if (groupJids.includes(communityJid)) throw ApiError.badRequest('groupjids must not name the community itself');
    const reply = await this.sessions.request(instance.id, 'community.groups', { instanceId: instance.id, communityJid, action: dto.action, groupJids });
    return { message: 'community updated', ...reply };
  }

  /** `GET /group/list?force=&noparticipants=`: every group the instance is in (cached; `force` reads WhatsApp). */
  async listAll(instance: RequestInstance, query: { force?: unknown; noparticipants?: unknown }): Promise<GroupListResponse> {
    return this.list(instance, queryFlag('noparticipants', query.noparticipants), queryFlag('force', query.force));
  }

  private async list(instance: RequestInstance, noParticipants: boolean, force: boolean): Promise<GroupListResponse> {
    const { groups } = await this.sessions.request(instance.id, 'group.list', { instanceId: instance.id, force });
    return { groups: noParticipants ? groups.map(withoutParticipants) : groups };
  }

  /** `POST /group/list`: a page of them (ordered by name), filtered by name or JID. */
  async page(instance: RequestInstance, dto: GroupListDto): Promise<GroupPageResponse> {
    const { groups } = await this.list(instance, dto.noParticipants === true || dto.noparticipants === true, dto.force === true);
    const search = dto.search?.trim().toLowerCase();
    const found = (search ? groups.filter((group) => group.Name.toLowerCase().includes(search) || group.JID.includes(search)) : groups).sort(
      (a, b) => a.Name.localeCompare(b.Name) || a.JID.localeCompare(b.JID),
    );
    const limit = dto.limit ?? 50;
    const offset = dto.offset ?? 0;
    return { groups: found.slice(offset, offset + limit), pagination: { totalRecords: found.length, limit, offset } };
  }
}

/** The largest group picture taken (the reference answers 413 above it). */
export const MAX_GROUP_PICTURE_BYTES = 5 * 1024 * 1024;
const REMOVE_PICTURE = /^\s*(remove|delete)\s*$/i;

/**
 * A picture field: `remove` / `delete`, an http(s) URL (the worker fetches it through the SSRF guard), or base64 /
 * a data URI, staged as an upload after checking it is an image (400, or 415 as `notAnImage` says) of at most `maxBytes` (413; the worker answers the same for a URL).
 */
export async function pictureSource(
  tools: SendContentTools,
  instance: RequestInstance,
  value: string,
  field: string,
  maxBytes: number,
  /** What bytes that are no image answer: 400, or 415 where the reference says so (`/group/updateImage`). */
  notAnImage: 'invalid_request' | 'unsupported_media_type' = 'invalid_request',
) {
  const text = value.trim();
  if (!text) throw ApiError.badRequest(`empty ${field} source`);
  if (REMOVE_PICTURE.test(text)) return { remove: true as const };
  if (/^https?:\/\//i.test(text)) {
    try {
      new URL(text);
    } catch {
      throw ApiError.badRequest(`${field} must be a URL, base64 or remove`);
    }
    return { url: text };
  }
  const base64 = text.replace(/^data:([^;,]+)?(;base64)?,/, '').replace(/\s+/g, '');
  if (!isBase64(base64)) throw ApiError.badRequest(`${field} must be a URL, base64 or remove`);
  if (Math.floor((base64.length * 3) / 4) > maxBytes)
    throw new ApiError('payload_too_large', `${field} is larger than ${Math.round(maxBytes / 1024 / 1024) || 1} MB`);
  try {
    return { fileId: await tools.stageFile(instance, base64, 'image/jpeg', `${field}.jpg`, 'image') };
  } catch (error) {
    // The base64 was checked above: what stageFile still refuses is bytes that are no image.
    if (error instanceof ApiError && error.kind === 'invalid_request') throw new ApiError(notAnImage, error.message.replace(/^file /, `${field} `));
    throw error;
  }
}

/** Runs the operation that reads a staged picture, then deletes the upload whatever came of it (the worker has read it by then). */
export async function withStagedPicture<T>(tools: SendContentTools, instance: RequestInstance, picture: object | undefined, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } finally {
    if (picture && 'fileId' in picture && typeof picture.fileId === 'string') await tools.discardFile(instance, picture.fileId);
  }
}

/** A query string flag: absent, `true` / `false` or `1` / `0` (any case); anything else (a repeated parameter too) is a 400 naming it. */
export function queryFlag(name: string, value: unknown): boolean {
  if (value === undefined || value === '') return false;
  if (typeof value === 'string' && /^\s*(true|1|false|0)\s*$/i.test(value)) return /^\s*(true|1)\s*$/i.test(value);
  throw ApiError.badRequest(`${name} must be true or false`);
}

/** WhatsApp's disappearing-message timers by label. */
const EPHEMERAL_TIMERS: ReadonlyArray<{ label: string; seconds: number }> = [
  { label: 'off', seconds: 0 },
  { label: '1d', seconds: 86_400 },
  { label: '7d', seconds: 604_800 },
  { label: '90d', seconds: 7_776_000 },
];

/** `duration`: 0 / off, 1d, 7d, 90d (any case), or one of those in seconds; anything else is a 400 naming it. */
export function ephemeralDuration(value: unknown): { seconds: number; label: string } {
  const text = typeof value === 'number' || typeof value === 'string' ? String(value).trim().toLowerCase() : '';
  const found = EPHEMERAL_TIMERS.find(
    (timer) => text !== '' && (timer.label === text || String(timer.seconds) === text || (text === '0' && timer.seconds === 0)),
  );
  if (!found)
    throw ApiError.badRequest(`duration must be one of 0, off, 1d, 7d, 90d (or ${EPHEMERAL_TIMERS.map((timer) => timer.seconds).join(', ')} seconds)`);
  return found;
}
