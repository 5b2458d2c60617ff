import { Body, Controller, Get, HttpCode, HttpStatus, Param, Post, Query, UseGuards } from '@nestjs/common';
import type { InstanceEntity } from '@gw/persistence';
import { CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { ApiReply } from '../openapi/api-reply.decorator';
import { SCHEMAS } from '../openapi/schemas';
import { CreateGroupDto, GroupInfoDto, GroupListDto } from './dto/group.dto';
import { GroupInviteDto, GroupJidDto, GroupJoinApprovalDto, GroupParticipantsDto } from './dto/group.dto';
import { GroupAnnounceDto, GroupDescriptionDto, GroupEphemeralDto, GroupLockedDto, GroupMemberAddModeDto, GroupNameDto } from './dto/group.dto';
import { CommunityGroupsDto, CreateCommunityDto, GroupImageDto } from './dto/group.dto';
import { COMMUNITY_EXAMPLE, GROUP_EXAMPLE } from './group.examples';
import { GroupService } from './group.service';
import { ApiArea } from '../openapi/api-areas';
import { ApiOperation, ApiParam, ApiQuery } from '@nestjs/swagger';

/** Groups the instance creates, reads and runs: `/group/*`. */
@ApiArea('Groups & Communities')
@Controller('group')
@UseGuards(InstanceGuard)
export class GroupController {
  constructor(private readonly groups: GroupService) {}

  @Post('create')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.Group, { example: GROUP_EXAMPLE })
  @ApiOperation({
    summary: 'Create a group',
    description:
      'Creates a WhatsApp group with a `name` and at least one participant besides the creator (digits only). Answers the group, with the participants that could and could not be added.',
  })
  create(@CurrentInstance() instance: InstanceEntity, @Body() dto: CreateGroupDto) {
    return this.groups.create(instance, dto);
  }

  @Post('info')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.Group, { example: { ...GROUP_EXAMPLE, invite_link: 'https://chat.whatsapp.com/IYnl5Zg9bUcJD32rJrDzO7', request_participants: '' } })
  @ApiOperation({
    summary: "Get a group's details",
    description:
      "A group's details: name, description, settings, participants and admins, and optionally its invite link (`getInviteLink`) and pending join requests (`getRequestsParticipants`).",
  })
  info(@CurrentInstance() instance: InstanceEntity, @Body() dto: GroupInfoDto) {
    return this.groups.info(instance, dto);
  }

  @Get('list')
  @ApiReply(SCHEMAS.GroupList, { example: { groups: [GROUP_EXAMPLE] } })
  @ApiOperation({
    summary: 'List the groups',
    description: 'Every group of the connected account; `force` refreshes the cache from WhatsApp and `noparticipants` leaves the participants out.',
  })
  @ApiQuery({ name: 'force', required: false, type: String, description: 'Refresh the group cache from WhatsApp first (true)' })
  @ApiQuery({ name: 'noparticipants', required: false, type: String, description: 'Leave the participants out (true): a lighter answer' })
  list(@CurrentInstance() instance: InstanceEntity, @Query('force') force?: unknown, @Query('noparticipants') noparticipants?: unknown) {
    return this.groups.listAll(instance, { force, noparticipants });
  }

  @Post('list')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.GroupPage, { example: { groups: [{ ...GROUP_EXAMPLE, Participants: [] }], pagination: { totalRecords: 1, limit: 50, offset: 0 } } })
  @ApiOperation({
    summary: 'List the groups, filtered and paginated',
    description: 'The groups, filtered and a page at a time (`limit`, `offset`, `search` in the body). `GET /group/list` answers them all at once.',
  })
  page(@CurrentInstance() instance: InstanceEntity, @Body() dto: GroupListDto) {
    return this.groups.page(instance, dto);
  }

  @Post('inviteInfo')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.GroupInviteInfo, {
    example: { response: 'Group info retrieved successfully', group: { ...GROUP_EXAMPLE, OwnerIsAdmin: false, OwnerCanSendMessage: false } },
  })
  @ApiOperation({
    summary: 'Get a group from its invite code',
    description:
      "What an invite code (or full invite URL) leads to, before joining: the group's name, size and entry restrictions; also checks the link is valid.",
  })
  inviteInfo(@CurrentInstance() instance: InstanceEntity, @Body() dto: GroupInviteDto) {
    return this.groups.inviteInfo(instance, dto);
  }

  @Post('join')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.GroupJoin, { example: { response: 'Group join successful', group: GROUP_EXAMPLE, needs_refresh: false } })
  @ApiOperation({
    summary: 'Join a group by invite code',
    description: 'Joins the group an invite code or full invite URL leads to, and answers the group; an invalid or expired invite is refused.',
  })
  join(@CurrentInstance() instance: InstanceEntity, @Body() dto: GroupInviteDto) {
    return this.groups.join(instance, dto);
  }

  @Post('leave')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.Response, { example: { response: 'Group leave successful' } })
  @ApiOperation({ summary: 'Leave a group', description: 'The account leaves the group `groupjid`.' })
  leave(@CurrentInstance() instance: InstanceEntity, @Body() dto: GroupJidDto) {
    return this.groups.leave(instance, dto);
  }

  /** uazapi 2.0's spelling, still called by published clients (no spec version lists it). */
  @Get('invitelink/:groupJid')
  @ApiReply(SCHEMAS.GroupInviteLink, { example: { inviteLink: 'https://chat.whatsapp.com/IYnl5Zg9bUcJD32rJrDzO7' } })
  @ApiOperation({
    summary: "Get a group's invite link (older path)",
    description: "The group's current invite link: uazapi 2.0's spelling, still called by published clients. Not in uazapiGO 2.1's document.",
  })
  @ApiParam({ name: 'groupJid', description: "The group's JID (`…@g.us`)" })
  inviteLink(@CurrentInstance() instance: InstanceEntity, @Param('groupJid') groupJid: string) {
    return this.groups.inviteLink(instance, { groupjid: groupJid });
  }

  @Post('resetInviteCode')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.GroupResetInviteCode, {
    example: { InviteLink: 'https://chat.whatsapp.com/AbCdEfGhIjKlMnOpQrStUv', group: GROUP_EXAMPLE, needs_refresh: false },
  })
  @ApiOperation({
    summary: "Reset a group's invite code",
    description: 'Makes a new invite code for the group, so the old link stops working; admins only. Answers the group with the new link.',
  })
  resetInviteCode(@CurrentInstance() instance: InstanceEntity, @Body() dto: GroupJidDto) {
    return this.groups.resetInviteCode(instance, dto);
  }

  @Post('updateParticipants')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.GroupParticipantsUpdate, {
    example: { groupUpdated: [{ JID: '150512325316788@lid', Error: 0 }], group: GROUP_EXAMPLE, needs_refresh: false },
  })
  @ApiOperation({
    summary: "Manage a group's participants",
    description:
      'Acts on `participants` by `action`: `add`, `remove`, `promote` and `demote` admins, `approve` or `reject` join requests; admins only. Answers the result per participant.',
  })
  updateParticipants(@CurrentInstance() instance: InstanceEntity, @Body() dto: GroupParticipantsDto) {
    return this.groups.updateParticipants(instance, dto);
  }

  @Post('updateJoinApproval')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.GroupJoinApproval, {
    example: { response: 'Group join approval enabled successfully', group: { JID: GROUP_EXAMPLE.JID, IsJoinApprovalRequired: true }, needs_refresh: false },
  })
  @ApiOperation({
    summary: 'Require approval to join a group',
    description:
      "With `IsJoinApprovalRequired: true` new members wait for an admin's approval (their requests show in `/group/info`); with `false` they enter directly; admins only.",
  })
  updateJoinApproval(@CurrentInstance() instance: InstanceEntity, @Body() dto: GroupJoinApprovalDto) {
    return this.groups.updateJoinApproval(instance, dto);
  }

  @Post('updateName')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.GroupUpdate, { example: { response: 'Group name updated successfully', group: GROUP_EXAMPLE, needs_refresh: false } })
  @ApiOperation({ summary: 'Rename a group', description: "Changes the group's name (1 to 25 characters); admins only." })
  updateName(@CurrentInstance() instance: InstanceEntity, @Body() dto: GroupNameDto) {
    return this.groups.updateName(instance, dto);
  }

  @Post('updateDescription')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.GroupUpdate, {
    example: { response: 'Group description updated successfully', group: { ...GROUP_EXAMPLE, Topic: 'Grupo oficial de suporte' }, needs_refresh: false },
  })
  @ApiOperation({
    summary: "Change a group's description",
    description: "Changes the group's description (its topic), seen by every participant; admins only.",
  })
  updateDescription(@CurrentInstance() instance: InstanceEntity, @Body() dto: GroupDescriptionDto) {
    return this.groups.updateDescription(instance, dto);
  }

  @Post('updateAnnounce')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.GroupUpdate, {
    example: { response: 'Group announce enabled successfully', group: { ...GROUP_EXAMPLE, IsAnnounce: true }, needs_refresh: false },
  })
  @ApiOperation({
    summary: 'Let only admins send messages',
    description: 'With `announce: true` only admins can send messages to the group (the others read); with `false`, everyone can.',
  })
  updateAnnounce(@CurrentInstance() instance: InstanceEntity, @Body() dto: GroupAnnounceDto) {
    return this.groups.updateAnnounce(instance, dto);
  }

  @Post('updateLocked')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.GroupUpdate, {
    example: { response: 'Group lock status changed successfully', group: { ...GROUP_EXAMPLE, IsLocked: true }, needs_refresh: false },
  })
  @ApiOperation({
    summary: 'Let only admins edit the group',
    description: "With `locked: true` only admins can change the group's name, description, picture and settings; with `false`, any participant can.",
  })
  updateLocked(@CurrentInstance() instance: InstanceEntity, @Body() dto: GroupLockedDto) {
    return this.groups.updateLocked(instance, dto);
  }

  @Post('updateMemberAddMode')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.GroupUpdate, {
    example: { response: 'Group member add mode set to admin_add successfully', group: { ...GROUP_EXAMPLE, MemberAddMode: 'admin_add' }, needs_refresh: false },
  })
  @ApiOperation({
    summary: 'Choose who can add members',
    description: '`admin_add`: only admins add participants; `all_member_add`: any participant can. Shown as `MemberAddMode`; admins only.',
  })
  updateMemberAddMode(@CurrentInstance() instance: InstanceEntity, @Body() dto: GroupMemberAddModeDto) {
    return this.groups.updateMemberAddMode(instance, dto);
  }

  @Post('ephemeral')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.GroupEphemeral, {
    example: {
      response: 'Ephemeral timer updated successfully',
      ephemeral: { enabled: true, seconds: 86400, label: '1d' },
      group: { ...GROUP_EXAMPLE, IsEphemeral: true, DisappearingTimer: 86400 },
      needs_refresh: false,
    },
  })
  @ApiOperation({
    summary: 'Set disappearing messages in a group',
    description:
      "Sets the group's disappearing-messages timer: `duration` `0` or `off`, `1d`, `7d` or `90d`; admins only. Private chats use `/chat/ephemeral`.",
  })
  updateEphemeral(@CurrentInstance() instance: InstanceEntity, @Body() dto: GroupEphemeralDto) {
    return this.groups.updateEphemeral(instance, dto);
  }

  @Post('updateImage')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.GroupUpdate, { example: { response: 'Group image updated successfully', group: GROUP_EXAMPLE, needs_refresh: false } })
  @ApiOperation({
    summary: "Change a group's picture",
    description: 'Sets the group\'s picture from a URL or base64 (JPEG, at most 640×640 pixels), or removes it with `image: "remove"` (or `"delete"`).',
  })
  updateImage(@CurrentInstance() instance: InstanceEntity, @Body() dto: GroupImageDto) {
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
  @ApiReply(SCHEMAS.CommunityCreated, { example: { group: COMMUNITY_EXAMPLE, failed: [] } })
  @ApiOperation({
    summary: 'Create a community',
    description:
      'Creates a community, which gathers related groups under one administration; it starts with its announcements group only, and groups are linked later with `/community/editgroups`. The creator is its admin.',
  })
  create(@CurrentInstance() instance: InstanceEntity, @Body() dto: CreateCommunityDto) {
    return this.groups.createCommunity(instance, dto);
  }

  @Post('editgroups')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.CommunityGroups, { example: { message: 'community updated', success: ['120363324255083289@g.us'], failed: [] } })
  @ApiOperation({
    summary: "Add or remove a community's groups",
    description: "Links (`action: add`) or unlinks (`remove`) existing groups (`groupjids`) to a community; the community's admins only.",
  })
  editGroups(@CurrentInstance() instance: InstanceEntity, @Body() dto: CommunityGroupsDto) {
    return this.groups.editCommunityGroups(instance, dto);
  }
}
