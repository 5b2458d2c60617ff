/** Example bodies of the `/group/*` and `/community/*` answers, from a run against the simulator. */
import type { CommunityCreatedResponse, CommunityGroupsResponse, GroupEphemeralResponse, GroupInviteInfoResponse } from './group.response';
import type { GroupInviteLinkResponse, GroupJoinApprovalResponse, GroupJoinResponse, GroupListResponse } from './group.response';
import type { GroupPageResponse, GroupParticipantResponse, GroupParticipantsUpdateResponse, GroupResetInviteCodeResponse } from './group.response';
import type { GroupResponse, GroupUpdateResponse } from './group.response';
import type { ReplyResponse } from '../../common/dto/reply.response';

const MEMBER: GroupParticipantResponse = {
  JID: '150512325316788@lid',
  LID: '150512325316788@lid',
  PhoneNumber: '5521987654321@s.whatsapp.net',
  IsAdmin: false,
  IsSuperAdmin: false,
  DisplayName: '',
  Error: 0,
  AddRequest: null,
};

const OWNER: GroupParticipantResponse = {
  ...MEMBER,
  JID: '208716931563744@lid',
  LID: '208716931563744@lid',
  PhoneNumber: '5511999990001@s.whatsapp.net',
  IsAdmin: true,
  IsSuperAdmin: true,
};

export const GROUP_EXAMPLE: GroupResponse = {
  JID: '120363153742561022@g.us',
  OwnerJID: '208716931563744@lid',
  OwnerPN: '5511999990001@s.whatsapp.net',
  Name: 'uazapiGO grupo',
  NameSetAt: '2026-05-04T13:20:11Z',
  NameSetBy: '208716931563744@lid',
  NameSetByPN: '5511999990001@s.whatsapp.net',
  Topic: '',
  TopicID: '',
  TopicSetAt: '0001-01-01T00:00:00Z',
  TopicSetBy: '',
  TopicSetByPN: '',
  TopicDeleted: false,
  IsLocked: false,
  IsAnnounce: false,
  AnnounceVersionID: '',
  IsEphemeral: false,
  DisappearingTimer: 0,
  IsIncognito: false,
  IsParent: false,
  DefaultMembershipApprovalMode: '',
  LinkedParentJID: '',
  IsDefaultSubGroup: false,
  IsJoinApprovalRequired: false,
  AddressingMode: 'lid',
  GroupCreated: '2026-05-04T13:20:11Z',
  CreatorCountryCode: '',
  ParticipantVersionID: '',
  Participants: [OWNER, MEMBER],
  ParticipantCount: 2,
  MemberAddMode: 'admin_add',
  OwnerIsAdmin: true,
  OwnerCanSendMessage: true,
};

/** `/group/info` with `getInviteLink` and `getRequestsParticipants`. */
export const GROUP_INFO_EXAMPLE: GroupResponse = {
  ...GROUP_EXAMPLE,
  invite_link: 'https://chat.whatsapp.com/IYnl5Zg9bUcJD32rJrDzO7',
  request_participants: '',
};

export const GROUP_LIST_EXAMPLE: GroupListResponse = { groups: [GROUP_EXAMPLE] };

export const GROUP_PAGE_EXAMPLE: GroupPageResponse = {
  groups: [{ ...GROUP_EXAMPLE, Participants: [] }],
  pagination: { totalRecords: 1, limit: 50, offset: 0 },
};

export const GROUP_INVITE_INFO_EXAMPLE: GroupInviteInfoResponse = {
  response: 'Group info retrieved successfully',
  group: { ...GROUP_EXAMPLE, OwnerIsAdmin: false, OwnerCanSendMessage: false },
};

export const GROUP_JOIN_EXAMPLE: GroupJoinResponse = { response: 'Group join successful', group: GROUP_EXAMPLE, needs_refresh: false };

export const GROUP_INVITE_LINK_EXAMPLE: GroupInviteLinkResponse = { inviteLink: 'https://chat.whatsapp.com/IYnl5Zg9bUcJD32rJrDzO7' };

export const GROUP_RESET_INVITE_CODE_EXAMPLE: GroupResetInviteCodeResponse = {
  InviteLink: 'https://chat.whatsapp.com/AbCdEfGhIjKlMnOpQrStUv',
  group: GROUP_EXAMPLE,
  needs_refresh: false,
};

export const GROUP_PARTICIPANTS_UPDATE_EXAMPLE: GroupParticipantsUpdateResponse = {
  groupUpdated: [{ JID: '150512325316788@lid', Error: 0 }],
  group: GROUP_EXAMPLE,
  needs_refresh: false,
};

export const GROUP_JOIN_APPROVAL_EXAMPLE: GroupJoinApprovalResponse = {
  response: 'Group join approval enabled successfully',
  group: { JID: GROUP_EXAMPLE.JID, IsJoinApprovalRequired: true },
  needs_refresh: false,
};

/** The answers of the `/group/update*` routes, by route. */
export const GROUP_UPDATE_EXAMPLES = {
  name: { response: 'Group name updated successfully', group: GROUP_EXAMPLE, needs_refresh: false },
  description: {
    response: 'Group description updated successfully',
    group: { ...GROUP_EXAMPLE, Topic: 'Grupo oficial de suporte' },
    needs_refresh: false,
  },
  announce: { response: 'Group announce enabled successfully', group: { ...GROUP_EXAMPLE, IsAnnounce: true }, needs_refresh: false },
  locked: { response: 'Group lock status changed successfully', group: { ...GROUP_EXAMPLE, IsLocked: true }, needs_refresh: false },
  memberAddMode: {
    response: 'Group member add mode set to admin_add successfully',
    group: { ...GROUP_EXAMPLE, MemberAddMode: 'admin_add' },
    needs_refresh: false,
  },
  image: { response: 'Group image updated successfully', group: GROUP_EXAMPLE, needs_refresh: false },
} satisfies Record<string, GroupUpdateResponse>;

export const GROUP_EPHEMERAL_EXAMPLE: GroupEphemeralResponse = {
  response: 'Ephemeral timer updated successfully',
  ephemeral: { enabled: true, seconds: 86400, label: '1d' },
  group: { ...GROUP_EXAMPLE, IsEphemeral: true, DisappearingTimer: 86400 },
  needs_refresh: false,
};

/** A community's parent group, as /community/create answers it. */
export const COMMUNITY_CREATED_EXAMPLE: CommunityCreatedResponse = {
  group: {
    ...GROUP_EXAMPLE,
    JID: '120363153742561023@g.us',
    Name: 'Comunidade do Bairro',
    IsParent: true,
    Participants: [OWNER],
    ParticipantCount: 1,
  },
  failed: [],
};

export const COMMUNITY_GROUPS_EXAMPLE: CommunityGroupsResponse = {
  message: 'community updated',
  success: ['120363324255083289@g.us'],
  failed: [],
};

export const GROUP_LEFT_EXAMPLE: ReplyResponse = { response: 'Group leave successful' };
