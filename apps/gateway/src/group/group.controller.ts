import { Body, Controller, Get, HttpCode, HttpStatus, Param, Post, Query, UseGuards } from '@nestjs/common';

import { CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { ApiReply } from '../openapi/api-reply.decorator';
import { CreateGroupDto, GroupInfoDto, GroupListDto } from './dto/group.dto';
import { GroupInviteDto, GroupJidDto, GroupJoinApprovalDto, GroupParticipantsDto } from './dto/group.dto';
import { GroupAnnounceDto, GroupDescriptionDto, GroupEphemeralDto, GroupLockedDto, GroupMemberAddModeDto, GroupNameDto } from './dto/group.dto';
import { CommunityGroupsDto, CreateCommunityDto, GroupImageDto } from './dto/group.dto';
import { COMMUNITY_CREATED_EXAMPLE, COMMUNITY_GROUPS_EXAMPLE, GROUP_EPHEMERAL_EXAMPLE, GROUP_EXAMPLE, GROUP_INFO_EXAMPLE } from './dto/group.examples';
import { GROUP_INVITE_INFO_EXAMPLE, GROUP_INVITE_LINK_EXAMPLE, GROUP_JOIN_APPROVAL_EXAMPLE, GROUP_JOIN_EXAMPLE } from './dto/group.examples';
import { GROUP_LIST_EXAMPLE, GROUP_PAGE_EXAMPLE, GROUP_PARTICIPANTS_UPDATE_EXAMPLE, GROUP_RESET_INVITE_CODE_EXAMPLE } from './dto/group.examples';
import { GROUP_LEFT_EXAMPLE, GROUP_UPDATE_EXAMPLES } from './dto/group.examples';
import { CommunityCreatedResponse, CommunityGroupsResponse, GroupEphemeralResponse, GroupInviteInfoResponse } from './dto/group.response';
import { GroupInviteLinkResponse, GroupJoinApprovalResponse, GroupJoinResponse, GroupListResponse } from './dto/group.response';
import { GroupPageResponse, GroupParticipantsUpdateResponse, GroupResetInviteCodeResponse } from './dto/group.response';
import { GroupResponse, GroupUpdateResponse } from './dto/group.response';
import { GroupService } from './group.service';
import { ApiArea } from '../openapi/api-areas';
import { ApiOperation, ApiParam, ApiQuery } from '@nestjs/swagger';
import { ReplyResponse } from '../common/dto/reply.response';
import type { RequestInstance } from '../common/request-instance';

/** Groups the instance creates, reads and runs: `/group/*`. */
@ApiArea('Groups & Communities')
@Controller('group')
@UseGuards(InstanceGuard)
export class GroupController {
  constructor(private readonly groups: GroupService) {}

  @Post('create')
  @HttpCode(HttpStatus.OK)
  @ApiReply(GroupResponse, { example: GROUP_EXAMPLE })
  @ApiOperation({
    summary: 'Create a group',
    description:
      'Creates a WhatsApp group with a `name` and at least one participant besides the creator (digits only). Answers the group, with the participants that could and could not be added.',
  })
  create(@CurrentInstance() instance: RequestInstance, @Body() dto: CreateGroupDto): Promise<GroupResponse> {
    return this.groups.create(instance, dto);
  }

  @Post('info')
  @HttpCode(HttpStatus.OK)
  @ApiReply(GroupResponse, { example: GROUP_INFO_EXAMPLE })
  @ApiOperation({
    summary: "Get a group's details",
    description:
      "A group's details: name, description, settings, participants and admins, and optionally its invite link (`getInviteLink`) and pending join requests (`getRequestsParticipants`).",
  })
  info(@CurrentInstance() instance: RequestInstance, @Body() dto: GroupInfoDto): Promise<GroupResponse> {
    return this.groups.info(instance, dto);
  }

  @Get('list')
  @ApiReply(GroupListResponse, { example: GROUP_LIST_EXAMPLE })
  @ApiOperation({
    summary: 'List the groups',
    description: 'Every group of the connected account; `force` refreshes the cache from WhatsApp and `noparticipants` leaves the participants out.',
  })
  @ApiQuery({ name: 'force', required: false, type: String, description: 'Refresh the group cache from WhatsApp first (true)' })
  @ApiQuery({ name: 'noparticipants', required: false, type: String, description: 'Leave the participants out (true): a lighter answer' })
  list(
    @CurrentInstance() instance: RequestInstance,
    @Query('force') force?: unknown,
    @Query('noparticipants') noparticipants?: unknown,
  ): Promise<GroupListResponse> {
    return this.groups.listAll(instance, { force, noparticipants });
  }

  @Post('list')
  @HttpCode(HttpStatus.OK)
  @ApiReply(GroupPageResponse, { example: GROUP_PAGE_EXAMPLE })
  @ApiOperation({
    summary: 'List the groups, filtered and paginated',
    description: 'The groups, filtered and a page at a time (`limit`, `offset`, `search` in the body). `GET /group/list` answers them all at once.',
  })
  page(@CurrentInstance() instance: RequestInstance, @Body() dto: GroupListDto): Promise<GroupPageResponse> {
    return this.groups.page(instance, dto);
  }

  @Post('inviteInfo')
  @HttpCode(HttpStatus.OK)
  @ApiReply(GroupInviteInfoResponse, { example: GROUP_INVITE_INFO_EXAMPLE })
  @ApiOperation({
    summary: 'Get a group from its invite code',
    description:
      "What an invite code (or full invite URL) leads to, before joining: the group's name, size and entry restrictions; also checks the link is valid.",
  })
  inviteInfo(@CurrentInstance() instance: RequestInstance, @Body() dto: GroupInviteDto): Promise<GroupInviteInfoResponse> {
    return this.groups.inviteInfo(instance, dto);
  }

  @Post('join')
  @HttpCode(HttpStatus.OK)
  @ApiReply(GroupJoinResponse, { example: GROUP_JOIN_EXAMPLE })
  @ApiOperation({
    summary: 'Join a group by invite code',
    description: 'Joins the group an invite code or full invite URL leads to, and answers the group; an invalid or expired invite is refused.',
  })
  join(@CurrentInstance() instance: RequestInstance, @Body() dto: GroupInviteDto): Promise<GroupJoinResponse> {
    return this.groups.join(instance, dto);
  }

  @Post('leave')
  @HttpCode(HttpStatus.OK)
  @ApiReply(ReplyResponse, { example: GROUP_LEFT_EXAMPLE })
  @ApiOperation({ summary: 'Leave a group', description: 'The account leaves the group `groupjid`.' })
  leave(@CurrentInstance() instance: RequestInstance, @Body() dto: GroupJidDto): Promise<ReplyResponse> {
    return this.groups.leave(instance, dto);
  }

  /** uazapi 2.0's spelling, still called by published clients (no spec version lists it). */
  @Get('invitelink/:groupJid')
  @ApiReply(GroupInviteLinkResponse, { example: GROUP_INVITE_LINK_EXAMPLE })
  @ApiOperation({
    summary: "Get a group's invite link (older path)",
    description: "The group's current invite link: uazapi 2.0's spelling, still called by published clients. Not in uazapiGO 2.1's document.",
  })
  @ApiParam({ name: 'groupJid', description: "The group's JID (`…@g.us`)" })
  inviteLink(@CurrentInstance() instance: RequestInstance, @Param('groupJid') groupJid: string): Promise<GroupInviteLinkResponse> {
    return this.groups.inviteLink(instance, { groupjid: groupJid });
  }

  @Post('resetInviteCode')
  @HttpCode(HttpStatus.OK)
  @ApiReply(GroupResetInviteCodeResponse, { example: GROUP_RESET_INVITE_CODE_EXAMPLE })
  @ApiOperation({
    summary: "Reset a group's invite code",
    description: 'Makes a new invite code for the group, so the old link stops working; admins only. Answers the group with the new link.',
  })
  resetInviteCode(@CurrentInstance() instance: RequestInstance, @Body() dto: GroupJidDto): Promise<GroupResetInviteCodeResponse> {
    return this.groups.resetInviteCode(instance, dto);
  }

  @Post('updateParticipants')
  @HttpCode(HttpStatus.OK)
  @ApiReply(GroupParticipantsUpdateResponse, { example: GROUP_PARTICIPANTS_UPDATE_EXAMPLE })
  @ApiOperation({
    summary: "Manage a group's participants",
    description:
      'Acts on `participants` by `action`: `add`, `remove`, `promote` and `demote` admins, `approve` or `reject` join requests; admins only. Answers the result per participant.',
  })
  updateParticipants(@CurrentInstance() instance: RequestInstance, @Body() dto: GroupParticipantsDto): Promise<GroupParticipantsUpdateResponse> {
    return this.groups.updateParticipants(instance, dto);
  }

  @Post('updateJoinApproval')
  @HttpCode(HttpStatus.OK)
  @ApiReply(GroupJoinApprovalResponse, { example: GROUP_JOIN_APPROVAL_EXAMPLE })
  @ApiOperation({
    summary: 'Require approval to join a group',
    description:
      "With `IsJoinApprovalRequired: true` new members wait for an admin's approval (their requests show in `/group/info`); with `false` they enter directly; admins only.",
  })
  updateJoinApproval(@CurrentInstance() instance: RequestInstance, @Body() dto: GroupJoinApprovalDto): Promise<GroupJoinApprovalResponse> {
    return this.groups.updateJoinApproval(instance, dto);
  }

  @Post('updateName')
  @HttpCode(HttpStatus.OK)
  @ApiReply(GroupUpdateResponse, { example: GROUP_UPDATE_EXAMPLES.name })
  @ApiOperation({ summary: 'Rename a group', description: "Changes the group's name (1 to 25 characters); admins only." })
  updateName(@CurrentInstance() instance: RequestInstance, @Body() dto: GroupNameDto): Promise<GroupUpdateResponse> {
    return this.groups.updateName(instance, dto);
  }

  @Post('updateDescription')
  @HttpCode(HttpStatus.OK)
  @ApiReply(GroupUpdateResponse, { example: GROUP_UPDATE_EXAMPLES.description })
  @ApiOperation({
    summary: "Change a group's description",
    description: "Changes the group's description (its topic), seen by every participant; admins only.",
  })
  updateDescription(@CurrentInstance() instance: RequestInstance, @Body() dto: GroupDescriptionDto): Promise<GroupUpdateResponse> {
    return this.groups.updateDescription(instance, dto);
  }

  @Post('updateAnnounce')
  @HttpCode(HttpStatus.OK)
  @ApiReply(GroupUpdateResponse, { example: GROUP_UPDATE_EXAMPLES.announce })
  @ApiOperation({
    summary: 'Let only admins send messages',
    description: 'With `announce: true` only admins can send messages to the group (the others read); with `false`, everyone can.',
  })
  updateAnnounce(@CurrentInstance() instance: RequestInstance, @Body() dto: GroupAnnounceDto): Promise<GroupUpdateResponse> {
    return this.groups.updateAnnounce(instance, dto);
  }

  @Post('updateLocked')
  @HttpCode(HttpStatus.OK)
  @ApiReply(GroupUpdateResponse, { example: GROUP_UPDATE_EXAMPLES.locked })
  @ApiOperation({
    summary: 'Let only admins edit the group',
    description: "With `locked: true` only admins can change the group's name, description, picture and settings; with `false`, any participant can.",
  })
  updateLocked(@CurrentInstance() instance: RequestInstance, @Body() dto: GroupLockedDto): Promise<GroupUpdateResponse> {
    return this.groups.updateLocked(instance, dto);
  }

  @Post('updateMemberAddMode')
  @HttpCode(HttpStatus.OK)
  @ApiReply(GroupUpdateResponse, { example: GROUP_UPDATE_EXAMPLES.memberAddMode })
  @ApiOperation({
    summary: 'Choose who can add members',
    description: '`admin_add`: only admins add participants; `all_member_add`: any participant can. Shown as `MemberAddMode`; admins only.',
  })
  updateMemberAddMode(@CurrentInstance() instance: RequestInstance, @Body() dto: GroupMemberAddModeDto): Promise<GroupUpdateResponse> {
    return this.groups.updateMemberAddMode(instance, dto);
  }

  @Post('ephemeral')
  @HttpCode(HttpStatus.OK)
  @ApiReply(GroupEphemeralResponse, { example: GROUP_EPHEMERAL_EXAMPLE })
  @ApiOperation({
    summary: 'Set disappearing messages in a group',
    description:
      "Sets the group's disappearing-messages timer: `duration` `0` or `off`, `1d`, `7d` or `90d`; admins only. Private chats use `/chat/ephemeral`.",
  })
  updateEphemeral(@CurrentInstance() instance: RequestInstance, @Body() dto: GroupEphemeralDto): Promise<GroupEphemeralResponse> {
    return this.groups.updateEphemeral(instance, dto);
  }

  @Post('updateImage')
  @HttpCode(HttpStatus.OK)
  @ApiReply(GroupUpdateResponse, { example: GROUP_UPDATE_EXAMPLES.image })
  @ApiOperation({
    summary: "Change a group's picture",
    description: 'Sets the group\'s picture from a URL or base64 (JPEG, at most 640×640 pixels), or removes it with `image: "remove"` (or `"delete"`).',
  })
  updateImage(@CurrentInstance() instance: RequestInstance, @Body() dto: GroupImageDto): Promise<GroupUpdateResponse> {
    return this.groups.updateImage(instance, dto);
  }
}

/** Communities (a parent group, its announcements group and the groups linked to it): `/community/*`. */
@ApiArea('Groups & Communities')
@Controller('community')
@UseGuards(InstanceGuard)
export class CommunityController {
  constructor(private readonly groups: GroupService) {}

  @Post('create')
  @HttpCode(HttpStatus.OK)
  @ApiReply(CommunityCreatedResponse, { example: COMMUNITY_CREATED_EXAMPLE })
  @ApiOperation({
    summary: 'Create a community',
    description:
      'Creates a community, which gathers related groups under one administration; it starts with its announcements group only, and groups are linked later with `/community/editgroups`. The creator is its admin.',
  })
  create(@CurrentInstance() instance: RequestInstance, @Body() dto: CreateCommunityDto): Promise<CommunityCreatedResponse> {
    return this.groups.createCommunity(instance, dto);
  }

  @Post('editgroups')
  @HttpCode(HttpStatus.OK)
  @ApiReply(CommunityGroupsResponse, { example: COMMUNITY_GROUPS_EXAMPLE })
  @ApiOperation({
    summary: "Add or remove a community's groups",
    description: "Links (`action: add`) or unlinks (`remove`) existing groups (`groupjids`) to a community; the community's admins only.",
  })
  editGroups(@CurrentInstance() instance: RequestInstance, @Body() dto: CommunityGroupsDto): Promise<CommunityGroupsResponse> {
    return this.groups.editCommunityGroups(instance, dto);
  }
}
