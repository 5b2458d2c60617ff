import { ErrorCode, RpcError, type InstanceRpc } from '@gw/contracts';
import type { GroupMetadata, WASocket } from '../baileys';
import type { GroupMetadataCache } from '../messaging/group-metadata-cache';

type GroupObject = InstanceRpc['group.create']['reply'];
type GroupParticipantObject = GroupObject['Participants'][number];

const ZERO_TIME = '0001-01-01T00:00:00Z';
const timeOf = (seconds: number | undefined): string => (seconds ? new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z') : ZERO_TIME);
const bare = (jid: string | undefined): string => (jid ?? '').replace(/:\d+@/, '@');

/** The instance's own number and LID JIDs (device suffix dropped). */
export function ownIds(socket: WASocket): string[] {
  return [socket.user?.id, socket.user?.lid].filter((jid): jid is string => Boolean(jid)).map(bare);
}

/** A member with its number and LID where the group gives them. */
export function toParticipantObject(participant: GroupMetadata['participants'][number]): GroupParticipantObject {
  const id = participant.id;
  return {
    JID: id,
    LID: participant.lid ?? (id.endsWith('@lid') ? id : ''),
    PhoneNumber: participant.phoneNumber ?? (id.endsWith('@s.whatsapp.net') ? id : ''),
    IsAdmin: participant.admin === 'admin' || participant.admin === 'superadmin',
    IsSuperAdmin: participant.admin === 'superadmin',
    DisplayName: '',
    Error: 0,
    AddRequest: null,
  };
}

/** uazapiGO's Group (whatsmeow's GroupInfo) from Baileys' metadata; `me`: the instance's own JIDs, for OwnerIsAdmin. */
export function toGroupObject(group: GroupMetadata, me: string[]): GroupObject {
  const participants = group.participants.map(toParticipantObject);
  const mine = participants.find((participant) => [participant.JID, participant.LID, participant.PhoneNumber].some((jid) => jid && me.includes(bare(jid))));
  const admin = Boolean(mine?.IsAdmin);
  return {
    JID: group.id,
    OwnerJID: group.owner ?? '',
    OwnerPN: group.ownerPn ?? '',
    Name: group.subject ?? '',
    NameSetAt: timeOf(group.subjectTime),
    NameSetBy: group.subjectOwner ?? '',
    NameSetByPN: group.subjectOwnerPn ?? '',
    Topic: group.desc ?? '',
    TopicID: group.descId ?? '',
    TopicSetAt: timeOf(group.descTime),
    TopicSetBy: group.descOwner ?? '',
    TopicSetByPN: group.descOwnerPn ?? '',
    TopicDeleted: false,
    IsLocked: group.restrict === true,
    IsAnnounce: group.announce === true,
    AnnounceVersionID: '',
    IsEphemeral: Boolean(group.ephemeralDuration),
    DisappearingTimer: group.ephemeralDuration ?? 0,
    IsIncognito: false,
    IsParent: group.isCommunity === true,
    DefaultMembershipApprovalMode: '',
    LinkedParentJID: group.linkedParent ?? '',
    IsDefaultSubGroup: group.isCommunityAnnounce === true,
    IsJoinApprovalRequired: group.joinApprovalMode === true,
    AddressingMode: group.addressingMode ?? '',
    GroupCreated: timeOf(group.creation),
    CreatorCountryCode: group.owner_country_code ?? '',
    ParticipantVersionID: '',
    Participants: participants,
    ParticipantCount: group.size ?? participants.length,
    MemberAddMode: group.memberAddMode ? 'all_member_add' : 'admin_add',
    OwnerIsAdmin: admin,
    OwnerCanSendMessage: Boolean(mine) && (!group.announce || admin),
  };
}

/** What a read of a group WhatsApp does not show the instance answers (as a send to it does). */
export const GROUP_NOT_FOUND = 'group not found: it does not exist or this instance is not in it';

/**
 * WhatsApp's refusal of a group IQ as a bus error. Baileys throws a Boom whose `data` is the IQ error's
 * code (or, for metadata, the error node with the code in `output.statusCode`): item-not-found (404)
 * for a group that does not exist; 403 for one the instance is not in (`forbidden`) or not an admin of
 * (`not-admin`). A read (`read`) of a group the instance is not in is a NotFound, as for sends; an
 * action there is Forbidden. Anything else passes through unchanged.
 */
export function groupRefusal(error: unknown, what: string, read = false): unknown {
  if (!error || typeof error !== 'object' || error instanceof RpcError) return error;
  const { data, message, output } = error as { data?: unknown; message?: unknown; output?: { statusCode?: number } };
  const code = typeof data === 'number' ? data : (error as { isBoom?: boolean }).isBoom ? output?.statusCode : undefined;
  const text = typeof message === 'string' && message ? message : 'forbidden';
  if (code === 404 || (code === 403 && read)) return new RpcError(ErrorCode.NotFound, `${what}: ${GROUP_NOT_FOUND}`);
  if (code === 403 || code === 401)
    return new RpcError(
      ErrorCode.Forbidden,
      `${what}: ${text === 'not-admin' ? 'the instance is not an admin of this group' : `WhatsApp does not allow the instance to (${text})`}`,
    );
  if (code === 400 || code === 406) return new RpcError(ErrorCode.BadRequest, `${what}: ${typeof message === 'string' && message ? message : 'bad request'}`);
  if (code === 408) return new RpcError(ErrorCode.Timeout, `${what}: WhatsApp did not answer in time`);
  return otherRefusal(error, code, what);
}

/**
 * What a refusal no operation maps itself becomes, instead of an internal error (a 500): Baileys'
 * closed connection (428) a not-connected conflict, WhatsApp's 409 a conflict, any other error code
 * WhatsApp answered (429 rate-overlimit, 419 resource-limit, 500…) a refusal naming it (502).
 * Errors without a code (our own bugs) stay what they are.
 */
export function otherRefusal(error: unknown, code: number | undefined, what: string): unknown {
  if (code === undefined || !Number.isInteger(code) || code < 400) return error;
  const text = (error as { message?: unknown }).message;
  const detail = typeof text === 'string' && text ? text : 'error';
  if (code === 428) return new RpcError(ErrorCode.NotConnected, `${what}: the connection to WhatsApp closed`);
  if (code === 409) return new RpcError(ErrorCode.Conflict, `${what}: ${detail}`);
  return new RpcError(ErrorCode.Refused, `${what}: WhatsApp answered ${code} (${detail})`);
}

/** Runs a group IQ; WhatsApp's refusals become bus errors (see groupRefusal). */
export async function groupCall<T>(what: string, call: () => Promise<T>, read = false): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw groupRefusal(error, what, read);
  }
}

export const GROUP_JID = /^\d{5,}(-\d+)?@g\.us$/;
/** A group's (or community's) longest description. */
export const MAX_DESCRIPTION = 2048;

export function groupJidOf(raw: Record<string, unknown>): string {
  const groupJid = typeof raw.groupJid === 'string' ? raw.groupJid : '';
  if (!GROUP_JID.test(groupJid)) throw new RpcError(ErrorCode.BadRequest, 'groupJid must be a group JID');
  return groupJid;
}

/** Reads a group as cached (unless `force`), else from WhatsApp, and caches it (the group and community ops share one cache). */
export function groupReader(cache: GroupMetadataCache) {
  return async (socket: WASocket, instanceId: string, groupJid: string, what: string, force = true): Promise<GroupMetadata> => {
    const cached = force ? undefined : cache.get(instanceId, groupJid);
    if (cached) return cached;
    try {
      const metadata = await groupCall(what, () => socket.groupMetadata(groupJid), true);
      cache.put(instanceId, metadata);
      return metadata;
    } catch (error) {
      if (error instanceof RpcError && error.code === ErrorCode.NotFound) cache.remove(instanceId, groupJid);
      throw error;
    }
  };
}
