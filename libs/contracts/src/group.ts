/**
 * A group as the API answers it: uazapiGO's `Group` (whatsmeow's GroupInfo, PascalCase), built by the
 * session worker from what WhatsApp answers. Times are RFC 3339 (the zero time when unknown).
 */
/** The fields of whatsmeow's GroupInfo, shared by the API's Group and the `JoinedGroup` event. */
export interface GroupInfoFields {
  JID: string;
  OwnerJID: string;
  OwnerPN: string;
  Name: string;
  NameSetAt: string;
  NameSetBy: string;
  NameSetByPN: string;
  Topic: string;
  TopicID: string;
  TopicSetAt: string;
  TopicSetBy: string;
  TopicSetByPN: string;
  TopicDeleted: boolean;
  IsLocked: boolean;
  IsAnnounce: boolean;
  AnnounceVersionID: string;
  IsEphemeral: boolean;
  DisappearingTimer: number;
  IsIncognito: boolean;
  IsParent: boolean;
  DefaultMembershipApprovalMode: string;
  LinkedParentJID: string;
  IsDefaultSubGroup: boolean;
  IsJoinApprovalRequired: boolean;
  AddressingMode: string;
  GroupCreated: string;
  CreatorCountryCode: string;
  ParticipantVersionID: string;
  Participants: GroupParticipantObject[];
  ParticipantCount: number;
  MemberAddMode: string;
}

export interface GroupObject extends GroupInfoFields {
  OwnerIsAdmin: boolean;
  OwnerCanSendMessage: boolean;
}

/** A member: `JID` as the group addresses it (a LID in LID-addressed groups), with the number and LID where known. */
export interface GroupParticipantObject {
  JID: string;
  LID: string;
  PhoneNumber: string;
  IsAdmin: boolean;
  IsSuperAdmin: boolean;
  DisplayName: string;
  Error: number;
  AddRequest: null;
}

export interface GroupCreateRequest {
  instanceId: string;
  name: string;
  /** User JIDs (numbers or LIDs). */
  participants: string[];
}

export interface GroupInfoRequest {
  instanceId: string;
  groupJid: string;
  /** Also read the invite link (needs admin rights). */
  inviteLink: boolean;
  /** Also read the pending join requests (needs admin rights). */
  requests: boolean;
  /** Ask WhatsApp even when the group is cached (see the worker's groups cache). */
  force?: boolean;
}

/** Every group of the instance; `force` asks WhatsApp even when the list is cached. */
export interface GroupListRequest {
  instanceId: string;
  force?: boolean;
}

/** The group, plus its invite link and pending join requests when asked for. */
export type GroupInfoReply = GroupObject & { invite_link?: string; request_participants?: string };

export interface GroupListReply {
  groups: GroupObject[];
}

/** An invite code (the part after `https://chat.whatsapp.com/`). */
export interface GroupInviteRequest {
  instanceId: string;
  code: string;
}

/** The instance joined (`joined`), or asked to join a group whose admins approve joins (`requested`). */
export interface GroupJoinReply {
  status: 'joined' | 'requested';
  group: GroupObject;
}

export interface GroupJidRequest {
  instanceId: string;
  groupJid: string;
}

export interface GroupResetInviteReply {
  /** The new invite code. */
  code: string;
  group: GroupObject;
}

export type GroupParticipantAction = 'add' | 'remove' | 'promote' | 'demote' | 'approve' | 'reject';

export interface GroupParticipantsRequest {
  instanceId: string;
  groupJid: string;
  action: GroupParticipantAction;
  /** User JIDs (numbers or LIDs). */
  participants: string[];
}

/** Each participant's outcome as WhatsApp answered it (`Error` 0 for done, else WhatsApp's code: 403, 404, 409…). */
export interface GroupParticipantsReply {
  groupUpdated: Array<{ JID: string; Error: number }>;
  group: GroupObject;
}

export interface GroupJoinApprovalRequest {
  instanceId: string;
  groupJid: string;
  required: boolean;
}

/** A new group name (1 to 100 characters). */
export interface GroupNameRequest {
  instanceId: string;
  groupJid: string;
  name: string;
}

/** A new description; '' removes it. */
export interface GroupDescriptionRequest {
  instanceId: string;
  groupJid: string;
  description: string;
}

/** Who may send (`announcement` admins only / `not_announcement` everyone) or edit the group's info (`locked` / `unlocked`). */
export type GroupSetting = 'announcement' | 'not_announcement' | 'locked' | 'unlocked';

export interface GroupSettingRequest {
  instanceId: string;
  groupJid: string;
  setting: GroupSetting;
}

export type GroupMemberAddMode = 'admin_add' | 'all_member_add';

export interface GroupMemberAddModeRequest {
  instanceId: string;
  groupJid: string;
  mode: GroupMemberAddMode;
}

/** Disappearing messages: the timer in seconds, 0 turns them off. */
export interface GroupEphemeralRequest {
  instanceId: string;
  groupJid: string;
  seconds: number;
}

/** `/group/updateImage`: a new picture (a URL or a staged upload) or `remove`; admins only when the group is locked. */
export interface GroupImageRequest {
  instanceId: string;
  groupJid: string;
  picture: { url: string } | { fileId: string } | { remove: true };
}

/** `/community/create`: a community (parent group) with its announcements group. */
export interface CommunityCreateRequest {
  instanceId: string;
  name: string;
  description: string;
}

/** `/community/editgroups`: link (`add`) or unlink (`remove`) groups; community admins only. */
export interface CommunityGroupsRequest {
  instanceId: string;
  communityJid: string;
  action: 'add' | 'remove';
  groupJids: string[];
}

/** The groups done and those WhatsApp refused. */
export interface CommunityGroupsReply {
  success: string[];
  failed: string[];
}
