/**
 * A group as the API answers it: uazapiGO's `Group` (whatsmeow's GroupInfo, PascalCase), built by the
 * session worker from what WhatsApp answers. Times are RFC 3339 (the zero time when unknown).
 */
export interface GroupObject {
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
}

/** The group, plus its invite link and pending join requests when asked for. */
export type GroupInfoReply = GroupObject & { invite_link?: string; request_participants?: string };

export interface GroupListReply {
  groups: GroupObject[];
}
