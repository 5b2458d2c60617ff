import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';

/** A member: `JID` as the group addresses it (a LID in LID-addressed groups), with the number and LID where known. */
@ApiSchema({ name: 'GroupParticipant', description: 'A participant of a group' })
export class GroupParticipantResponse {
  @ApiProperty({ description: 'The participant as the group addresses it (a LID or a number JID)', example: '150512325316788@lid' })
  JID!: string;
  @ApiProperty({ description: 'The participant as a LID, when known ("" otherwise)', example: '150512325316788@lid' })
  LID!: string;
  @ApiProperty({ description: 'The participant\'s number as a JID, when known ("" otherwise)', example: '5521987654321@s.whatsapp.net' })
  PhoneNumber!: string;
  @ApiProperty({ description: 'The participant is an admin of the group' })
  IsAdmin!: boolean;
  @ApiProperty({ description: 'The participant is a super admin (the creator) of the group' })
  IsSuperAdmin!: boolean;
  @ApiProperty({ description: 'The name shown in the group (for anonymous users; "" otherwise)' })
  DisplayName!: string;
  @ApiProperty({ type: 'integer', description: "The error code from adding the participant (0: none, else WhatsApp's code)" })
  Error!: number;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    description: 'The join request sent instead of adding the participant (always null here)',
  })
  AddRequest!: Record<string, unknown> | null;
}

/** A group as WhatsApp describes it (whatsmeow's GroupInfo, as uazapi answers it). Times are RFC 3339, the zero time when unknown. */
@ApiSchema({ name: 'Group', description: 'A group as WhatsApp describes it' })
export class GroupResponse {
  @ApiProperty({ description: "The group's JID (`<id>@g.us`)", example: '120363153742561022@g.us' })
  JID!: string;
  @ApiProperty({ description: "The owner's JID (a LID in LID-addressed groups)" })
  OwnerJID!: string;
  @ApiProperty({ description: "The owner's number as a JID, when known" })
  OwnerPN!: string;
  @ApiProperty({ description: "The group's name", example: 'Grupo de Suporte' })
  Name!: string;
  @ApiProperty({ format: 'date-time', description: 'When the name last changed' })
  NameSetAt!: string;
  @ApiProperty({ description: 'Who set the name (JID)' })
  NameSetBy!: string;
  @ApiProperty({ description: 'Who set the name, as a number JID when known' })
  NameSetByPN!: string;
  @ApiProperty({ description: "The group's description" })
  Topic!: string;
  @ApiProperty({ description: "The description's internal id" })
  TopicID!: string;
  @ApiProperty({ format: 'date-time', description: 'When the description last changed' })
  TopicSetAt!: string;
  @ApiProperty({ description: 'Who changed the description (JID)' })
  TopicSetBy!: string;
  @ApiProperty({ description: 'Who changed the description, as a number JID when known' })
  TopicSetByPN!: string;
  @ApiProperty({ description: 'The description was deleted' })
  TopicDeleted!: boolean;
  @ApiProperty({ description: 'Only admins edit the group info (true), or every participant (false)' })
  IsLocked!: boolean;
  @ApiProperty({ description: 'Only admins send messages' })
  IsAnnounce!: boolean;
  @ApiProperty({ description: 'The version of the announcement setting' })
  AnnounceVersionID!: string;
  @ApiProperty({ description: 'Messages disappear (see `DisappearingTimer`)' })
  IsEphemeral!: boolean;
  @ApiProperty({ type: 'integer', minimum: 0, description: 'Seconds after which messages disappear (0: off)' })
  DisappearingTimer!: number;
  @ApiProperty({ description: 'The group is incognito' })
  IsIncognito!: boolean;
  @ApiProperty({ description: 'The group is a parent group (a community)' })
  IsParent!: boolean;
  @ApiProperty({ description: "A community's default membership approval mode" })
  DefaultMembershipApprovalMode!: string;
  @ApiProperty({ description: 'The community the group belongs to (JID; "" when none)' })
  LinkedParentJID!: string;
  @ApiProperty({ description: "The group is its community's default subgroup (announcements)" })
  IsDefaultSubGroup!: boolean;
  @ApiProperty({ description: "New members wait for an admin's approval" })
  IsJoinApprovalRequired!: boolean;
  @ApiProperty({ enum: ['pn', 'lid'], description: 'How the group addresses its participants: by number (`pn`) or by LID (`lid`)' })
  AddressingMode!: string;
  @ApiProperty({ format: 'date-time', description: 'When the group was created' })
  GroupCreated!: string;
  @ApiProperty({ description: "The creator's country code" })
  CreatorCountryCode!: string;
  @ApiProperty({ description: 'The version of the participant list' })
  ParticipantVersionID!: string;
  @ApiProperty({ type: () => GroupParticipantResponse, isArray: true, description: "The group's participants (empty with `noparticipants`)" })
  Participants!: GroupParticipantResponse[];
  @ApiProperty({ type: 'integer', description: 'How many participants the group has' })
  ParticipantCount!: number;
  @ApiProperty({
    enum: ['admin_add', 'all_member_add'],
    description: 'Who adds new members: only admins (`admin_add`) or every participant (`all_member_add`)',
  })
  MemberAddMode!: string;
  @ApiProperty({ description: 'The instance is an admin of the group' })
  OwnerIsAdmin!: boolean;
  @ApiProperty({ description: 'The instance may send messages to the group' })
  OwnerCanSendMessage!: boolean;
  @ApiPropertyOptional({ description: '`/group/info` with `getInviteLink`: the link to join the group (admins only; "" otherwise)' })
  invite_link?: string;
  @ApiPropertyOptional({ description: '`/group/info` with `getRequestsParticipants`: the pending join requests, comma-separated (admins only)' })
  request_participants?: string;
}

/** `GET /group/list`. */
@ApiSchema({ name: 'GroupList', description: 'Every group of the instance' })
export class GroupListResponse {
  @ApiProperty({ type: () => GroupResponse, isArray: true, description: 'The groups the instance is in' })
  groups!: GroupResponse[];
}

/** Where a page of `POST /group/list` sits. */
@ApiSchema({ name: 'GroupPagination', description: 'Where a page of the groups sits' })
export class GroupPagination {
  @ApiProperty({ type: 'integer', description: 'How many groups match the search, in all pages' })
  totalRecords!: number;
  @ApiProperty({ type: 'integer', description: 'The most groups a page holds' })
  limit!: number;
  @ApiProperty({ type: 'integer', description: 'How many matching groups come before this page' })
  offset!: number;
}

/** `POST /group/list`: a page of the groups. */
@ApiSchema({ name: 'GroupPage', description: 'A page of the groups, ordered by name' })
export class GroupPageResponse {
  @ApiProperty({ type: () => GroupResponse, isArray: true, description: 'The groups of this page' })
  groups!: GroupResponse[];
  @ApiProperty({ type: () => GroupPagination, description: 'Where the page sits' })
  pagination!: GroupPagination;
}

/** `POST /group/inviteInfo`: the group an invite leads to (not joined). */
@ApiSchema({ name: 'GroupInviteInfo', description: 'The group an invite leads to, before joining it' })
export class GroupInviteInfoResponse {
  @ApiProperty({ enum: ['Group info retrieved successfully'], description: 'What was done, in words' })
  response!: string;
  @ApiProperty({ type: () => GroupResponse, description: 'The group the invite leads to' })
  group!: GroupResponse;
}

/** `POST /group/join`: joined, or (join approval on) the request sent to the admins. */
@ApiSchema({ name: 'GroupJoin', description: 'The group joined, or the request to join sent to its admins' })
export class GroupJoinResponse {
  @ApiProperty({
    enum: ['Group join successful', 'Group join request sent'],
    description: 'Joined, or the group requires approval and the request waits for an admin',
  })
  response!: 'Group join successful' | 'Group join request sent';
  @ApiProperty({ type: () => GroupResponse, description: 'The group' })
  group!: GroupResponse;
  @ApiProperty({ description: 'The group should be read again for its latest state (always false here)' })
  needs_refresh!: boolean;
}

/** `GET /group/invitelink/{groupJid}` (uazapi 2.0): the group's current invite link. */
@ApiSchema({ name: 'GroupInviteLink', description: "The group's current invite link" })
export class GroupInviteLinkResponse {
  @ApiProperty({ description: 'The link to join the group: `https://chat.whatsapp.com/<code>`' })
  inviteLink!: string;
}

/** `POST /group/resetInviteCode`: the new link (the old one stops working). */
@ApiSchema({ name: 'GroupResetInviteCode', description: "The group's new invite link (the old one stops working)" })
export class GroupResetInviteCodeResponse {
  @ApiProperty({ description: 'The new invite link: `https://chat.whatsapp.com/<new code>`' })
  InviteLink!: string;
  @ApiProperty({ type: () => GroupResponse, description: 'The group' })
  group!: GroupResponse;
  @ApiProperty({ description: 'The group should be read again for its latest state (always false here)' })
  needs_refresh!: boolean;
}

/** One participant's outcome of `/group/updateParticipants`. */
@ApiSchema({ name: 'GroupParticipantOutcome', description: "A participant's outcome: 0 when done, else WhatsApp's code" })
export class GroupParticipantOutcome {
  @ApiProperty({ description: 'The participant (JID)' })
  JID!: string;
  @ApiProperty({
    type: 'integer',
    description: '0 when done; else 403 (not allowed), 404 (not a member / no request), 409 (already a member)…',
  })
  Error!: number;
}

/** `POST /group/updateParticipants`: each participant's outcome and the group after. */
@ApiSchema({ name: 'GroupParticipantsUpdate', description: "Each participant's outcome, and the group after" })
export class GroupParticipantsUpdateResponse {
  @ApiProperty({ type: () => GroupParticipantOutcome, isArray: true, description: "Each participant's outcome" })
  groupUpdated!: GroupParticipantOutcome[];
  @ApiProperty({ type: () => GroupResponse, description: 'The group after the change' })
  group!: GroupResponse;
  @ApiProperty({ description: 'The group should be read again for its latest state (always false here)' })
  needs_refresh!: boolean;
}

/** The join approval setting after `/group/updateJoinApproval`. */
@ApiSchema({ name: 'GroupJoinApprovalState', description: 'The group and whether it now requires approval to join' })
export class GroupJoinApprovalState {
  @ApiProperty({ description: "The group's JID (`<id>@g.us`)" })
  JID!: string;
  @ApiProperty({ description: "New members wait for an admin's approval" })
  IsJoinApprovalRequired!: boolean;
}

/** `POST /group/updateJoinApproval`. */
@ApiSchema({ name: 'GroupJoinApproval', description: 'Join approval turned on or off' })
export class GroupJoinApprovalResponse {
  @ApiProperty({ description: 'What was done, in words (`Group join approval enabled successfully` or `… disabled …`)' })
  response!: string;
  @ApiProperty({ type: () => GroupJoinApprovalState, description: 'The setting now' })
  group!: GroupJoinApprovalState;
  @ApiProperty({ description: 'The group should be read again for its latest state (always false here)' })
  needs_refresh!: boolean;
}

/** `POST /group/updateName`, `/updateDescription`, `/updateAnnounce`, `/updateLocked`, `/updateMemberAddMode`, `/updateImage`. */
@ApiSchema({ name: 'GroupUpdate', description: 'What changed, and the group after' })
export class GroupUpdateResponse {
  @ApiProperty({ description: 'What was done, in words' })
  response!: string;
  @ApiProperty({ type: () => GroupResponse, description: 'The group after the change' })
  group!: GroupResponse;
  @ApiProperty({ description: 'The group should be read again for its latest state (always false here)' })
  needs_refresh!: boolean;
}

/** The disappearing-messages timer `/group/ephemeral` set. */
@ApiSchema({ name: 'GroupEphemeralTimer', description: 'The disappearing-messages timer set' })
export class GroupEphemeralTimer {
  @ApiProperty({ description: 'Messages now disappear' })
  enabled!: boolean;
  @ApiProperty({ type: 'integer', format: 'int64', description: 'After how many seconds (0: off)' })
  seconds!: number;
  @ApiProperty({ enum: ['off', '1d', '7d', '90d'], description: 'The timer by name' })
  label!: string;
}

/** `POST /group/ephemeral`: the disappearing-messages timer set and the group after. */
@ApiSchema({ name: 'GroupEphemeral', description: 'The disappearing-messages timer set, and the group after' })
export class GroupEphemeralResponse {
  @ApiProperty({ description: 'What was done, in words' })
  response!: string;
  @ApiProperty({ type: () => GroupEphemeralTimer, description: 'The timer now' })
  ephemeral!: GroupEphemeralTimer;
  @ApiProperty({ type: () => GroupResponse, description: 'The group after the change' })
  group!: GroupResponse;
  @ApiProperty({ description: 'The group should be read again for its latest state (always false here)' })
  needs_refresh!: boolean;
}

/** `POST /community/create`: the community's parent group. */
@ApiSchema({ name: 'CommunityCreated', description: 'The community created: its parent group' })
export class CommunityCreatedResponse {
  @ApiProperty({ type: () => GroupResponse, description: "The community's parent group (`IsParent: true`)" })
  group!: GroupResponse;
  @ApiProperty({ type: 'string', isArray: true, description: 'Participants that could not be added (always empty: a community starts with its creator)' })
  failed!: string[];
}

/** `POST /community/editgroups`. */
@ApiSchema({ name: 'CommunityGroups', description: 'The groups linked or unlinked, and those WhatsApp refused' })
export class CommunityGroupsResponse {
  @ApiProperty({ enum: ['community updated'], description: 'What was done, in words' })
  message!: string;
  @ApiProperty({ type: 'string', isArray: true, description: 'The groups linked or unlinked (JIDs)' })
  success!: string[];
  @ApiProperty({ type: 'string', isArray: true, description: 'The groups WhatsApp refused (JIDs)' })
  failed!: string[];
}
