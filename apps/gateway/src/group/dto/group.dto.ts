import { applyDecorators } from '@nestjs/common';
import { Transform } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayNotEmpty,
  IsArray,
  IsBoolean,
  IsDefined,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateIf,
} from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';

const NOT_BLANK = /\S/;
/** A group JID (`120363…@g.us`), or its digits alone. */
export const GROUP_JID = /^\s*\d{5,}(-\d+)?(@g\.us)?\s*$/;
export const INVALID_GROUP_JID = 'groupjid must be a group JID (digits@g.us)';

/** An optional boolean flag. */
const Flag = (field: string): PropertyDecorator => applyDecorators(IsOptional(), IsBoolean({ message: `${field} must be a boolean` }));

/** `groupjid` (the reference's spelling), required unless an older client sends `groupJid`. */
function GroupJid(): PropertyDecorator {
  return applyDecorators(
    // Checked whenever sent (a non-string next to a valid groupJid too), required only without groupJid.
    ValidateIf((dto: { groupjid?: unknown; groupJid?: unknown }) => dto.groupjid !== undefined || dto.groupJid === undefined),
    IsDefined({ message: 'groupjid is required' }),
    IsString({ message: INVALID_GROUP_JID }),
    Matches(GROUP_JID, { message: INVALID_GROUP_JID }),
  );
}

/** The older spelling of `groupjid`. */
function OlderGroupJid(): PropertyDecorator {
  return applyDecorators(IsOptional(), IsString({ message: INVALID_GROUP_JID }), Matches(GROUP_JID, { message: INVALID_GROUP_JID }));
}

/** The body of every route that names one group. */
export class GroupJidDto {
  @JSONSchema({ description: "The group's JID (`…@g.us`)" })
  @GroupJid()
  groupjid?: string;
  @JSONSchema({ description: 'The same as `groupjid`, under the spelling some clients send' })
  @OlderGroupJid()
  groupJid?: string;
}

/** `participants`: 1 to 1000 phone numbers or user JIDs. */
const Participants = (): PropertyDecorator =>
  applyDecorators(
    IsDefined({ message: 'participants is required' }),
    IsArray({ message: 'participants must be an array of phone numbers' }),
    ArrayNotEmpty({ message: 'participants must name at least one phone number' }),
    ArrayMaxSize(1000, { message: 'participants must name at most 1000 phone numbers' }),
    IsString({ each: true, message: 'participants must be an array of phone numbers' }),
    MaxLength(100, { each: true, message: 'participants must be an array of phone numbers' }),
  );

/** `POST /group/create`: a name and the first members (numbers or JIDs); the instance is the group's super admin. */
export class CreateGroupDto {
  @IsDefined({ message: 'name is required' })
  @IsString({ message: 'name must be a string' })
  @Matches(NOT_BLANK, { message: 'name is required' })
  @MaxLength(100, { message: 'name must be at most 100 characters' })
  @JSONSchema({ description: "The group's name" })
  name!: string;

  @JSONSchema({ description: "The first participants' phone numbers (international format, digits only); at least one" })
  @Participants()
  participants!: string[];
}

/** `POST /group/info`. */
export class GroupInfoDto extends GroupJidDto {
  @JSONSchema({ description: "Include the group's invite link" })
  @Flag('getInviteLink')
  getInviteLink?: boolean;
  @JSONSchema({ description: 'Include the pending join requests' })
  @Flag('getRequestsParticipants')
  getRequestsParticipants?: boolean;
  /** Leave the members out. */
  @JSONSchema({ description: 'Leave the participants out' })
  @Flag('noparticipants')
  noparticipants?: boolean;
  /** Read WhatsApp instead of the groups cache. */
  @JSONSchema({ description: 'Ask WhatsApp again instead of the cache' })
  @Flag('force')
  force?: boolean;
}

/** Numbers may come as numeric strings (older clients); '' is absent. */
const Numeric = () =>
  Transform(({ value }: { value: unknown }) => {
    if (value === '' || value === null) return undefined;
    if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
    return value;
  });

function IntegerWithin(field: string, min: number, max: number): PropertyDecorator {
  const message = `${field} must be an integer between ${min} and ${max}`;
  return applyDecorators(Numeric(), IsOptional(), IsInt({ message }), Min(min, { message }), Max(max, { message }));
}

/** `POST /group/list`: a page of the groups, optionally filtered by name or JID. */
export class GroupListDto {
  @JSONSchema({ description: 'Groups per page (50 by default, at most 1000)' })
  @IntegerWithin('limit', 1, 1000)
  limit?: number;
  @JSONSchema({ description: 'How many groups to skip' })
  @IntegerWithin('offset', 0, Number.MAX_SAFE_INTEGER)
  offset?: number;
  @JSONSchema({ description: 'Only groups whose name or JID contains this' })
  @IsOptional()
  @IsString({ message: 'search must be a string' })
  @MaxLength(200)
  search?: string;
  /** Read WhatsApp instead of the groups cache. */
  @JSONSchema({ description: 'Refresh the group cache from WhatsApp first' })
  @Flag('force')
  force?: boolean;
  @JSONSchema({ description: 'Leave the participants out (a lighter answer)' })
  @Flag('noParticipants')
  noParticipants?: boolean;
  /** The GET route's spelling. */
  @JSONSchema({ description: 'The same as `noParticipants`, lowercase' })
  @Flag('noparticipants')
  noparticipants?: boolean;
}

/** `invitecode` (the reference's spelling), required unless an older client sends `inviteCode`: a code or the link. */
export class GroupInviteDto {
  @ValidateIf((dto: { invitecode?: unknown; inviteCode?: unknown }) => dto.invitecode !== undefined || dto.inviteCode === undefined)
  @IsDefined({ message: 'invitecode is required' })
  @IsString({ message: 'invalid invite code' })
  @MaxLength(200, { message: 'invalid invite code' })
  @JSONSchema({ description: 'The invite code, or the whole invite URL (`https://chat.whatsapp.com/…`)' })
  invitecode?: string;

  /** The older spelling of `invitecode`. */
  @JSONSchema({ description: 'The same as `invitecode`, under the spelling some clients send' })
  @IsOptional()
  @IsString({ message: 'invalid invite code' })
  @MaxLength(200, { message: 'invalid invite code' })
  inviteCode?: string;
}

export const PARTICIPANT_ACTIONS = ['add', 'remove', 'promote', 'demote', 'approve', 'reject'] as const;

/** `POST /group/updateParticipants`: members to add, remove, promote or demote, or join requests to approve or reject. */
export class GroupParticipantsDto extends GroupJidDto {
  @IsDefined({ message: 'action is required' })
  @IsIn(PARTICIPANT_ACTIONS, { message: `action must be one of ${PARTICIPANT_ACTIONS.join(', ')}` })
  @JSONSchema({ description: '`add`, `remove`, `promote` (to admin), `demote`, `approve` or `reject` (join requests)' })
  action!: (typeof PARTICIPANT_ACTIONS)[number];

  @JSONSchema({ description: 'Phone numbers (international format, no `+` nor spaces) or JIDs of the participants' })
  @Participants()
  participants!: string[];
}

/** `POST /group/updateJoinApproval`. */
export class GroupJoinApprovalDto extends GroupJidDto {
  @IsDefined({ message: 'IsJoinApprovalRequired is required' })
  @IsBoolean({ message: 'IsJoinApprovalRequired must be a boolean' })
  @JSONSchema({ description: "New members need an admin's approval (true) or enter directly (false)" })
  IsJoinApprovalRequired!: boolean;
}

/** `POST /group/updateName`. */
export class GroupNameDto extends GroupJidDto {
  @IsDefined({ message: 'name is required' })
  @IsString({ message: 'name must be a string' })
  @Matches(NOT_BLANK, { message: 'name is required' })
  @MaxLength(100, { message: 'name must be at most 100 characters' })
  @JSONSchema({ description: "The group's new name (1 to 25 characters)" })
  name!: string;
}

/** `POST /group/updateDescription`: '' removes the description. */
export class GroupDescriptionDto extends GroupJidDto {
  @IsDefined({ message: 'description is required' })
  @IsString({ message: 'description must be a string' })
  @MaxLength(2048, { message: 'description must be at most 2048 characters' })
  @JSONSchema({ description: "The group's new description (topic)" })
  description!: string;
}

/** `POST /group/updateAnnounce`: only admins send (true) or everyone (false). */
export class GroupAnnounceDto extends GroupJidDto {
  @IsDefined({ message: 'announce is required' })
  @IsBoolean({ message: 'announce must be a boolean' })
  @JSONSchema({ description: 'Only admins send messages (true), or everyone (false)' })
  announce!: boolean;
}

/** `POST /group/updateLocked`: only admins edit the group's info (true) or everyone (false). */
export class GroupLockedDto extends GroupJidDto {
  @IsDefined({ message: 'locked is required' })
  @IsBoolean({ message: 'locked must be a boolean' })
  @JSONSchema({ description: "Only admins edit the group's info (true), or any participant (false)" })
  locked!: boolean;
}

export const MEMBER_ADD_MODES = ['admin_add', 'all_member_add'] as const;

/** `POST /group/updateMemberAddMode`. */
export class GroupMemberAddModeDto extends GroupJidDto {
  @IsDefined({ message: 'MemberAddMode is required' })
  @IsIn(MEMBER_ADD_MODES, { message: `MemberAddMode must be one of ${MEMBER_ADD_MODES.join(', ')}` })
  @JSONSchema({ description: '`admin_add` (only admins add members) or `all_member_add` (anyone)' })
  MemberAddMode!: (typeof MEMBER_ADD_MODES)[number];
}

/** `POST /group/ephemeral`: `duration` is 0 / off, 1d, 7d or 90d (or those in seconds). */
export class GroupEphemeralDto extends GroupJidDto {
  @IsDefined({ message: 'duration is required' })
  @JSONSchema({ description: 'The timer: `0` or `off`, `1d`, `7d` or `90d`', example: '7d' })
  duration!: string | number;
}

/** The longest `image` (a URL, base64 or a data URI of up to 5 MB); the service answers 413 for larger pictures. */
export const MAX_IMAGE_FIELD = 8 * 1024 * 1024;

/** `POST /group/updateImage`: `image` is a URL, base64 or a data URI of a picture, or `remove` / `delete`. */
export class GroupImageDto extends GroupJidDto {
  @IsDefined({ message: 'image is required' })
  @IsString({ message: 'image must be a URL, base64 or remove' })
  @Matches(NOT_BLANK, { message: 'image is required' })
  @MaxLength(MAX_IMAGE_FIELD, { message: 'image is larger than 5 MB' })
  @JSONSchema({ description: 'The picture: a URL or base64 (JPEG, at most 640×640), or `remove` / `delete` to remove it' })
  image!: string;
}

/** `POST /community/create`: its name (and optionally a description); the instance is its admin. */
export class CreateCommunityDto {
  @IsDefined({ message: 'name is required' })
  @IsString({ message: 'name must be a string' })
  @Matches(NOT_BLANK, { message: 'name is required' })
  @MaxLength(100, { message: 'name must be at most 100 characters' })
  @JSONSchema({ description: "The community's name" })
  name!: string;

  @IsOptional()
  @IsString({ message: 'description must be a string' })
  @MaxLength(2048, { message: 'description must be at most 2048 characters' })
  @JSONSchema({ description: "The community's description" })
  description?: string;
}

export const COMMUNITY_ACTIONS = ['add', 'remove'] as const;

/** `POST /community/editgroups`: link (`add`) or unlink (`remove`) groups of a community. */
export class CommunityGroupsDto {
  @IsDefined({ message: 'community is required' })
  @IsString({ message: 'community must be a group JID (digits@g.us)' })
  @Matches(GROUP_JID, { message: 'community must be a group JID (digits@g.us)' })
  @JSONSchema({ description: "The community's JID" })
  community!: string;

  @IsDefined({ message: 'action is required' })
  @IsIn(COMMUNITY_ACTIONS, { message: 'action must be add or remove' })
  @JSONSchema({ description: '`add` or `remove` the groups' })
  action!: (typeof COMMUNITY_ACTIONS)[number];

  @IsDefined({ message: 'groupjids is required' })
  @IsArray({ message: 'groupjids must be an array of group JIDs' })
  @ArrayNotEmpty({ message: 'groupjids must name at least one group' })
  @ArrayMaxSize(100, { message: 'groupjids must name at most 100 groups' })
  @IsString({ each: true, message: 'groupjids must be an array of group JIDs' })
  @Matches(GROUP_JID, { each: true, message: 'groupjids must be an array of group JIDs (digits@g.us)' })
  @JSONSchema({ description: 'The JIDs of the groups to add or remove' })
  groupjids!: string[];
}
