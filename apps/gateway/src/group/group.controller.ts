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

/** Groups the instance creates, reads and runs: `/group/*`. */
@Controller('group')
@UseGuards(InstanceGuard)
export class GroupController {
  constructor(private readonly groups: GroupService) {}

  @Post('create')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.Group, { example: GROUP_EXAMPLE })
  create(@CurrentInstance() instance: InstanceEntity, @Body() dto: CreateGroupDto) {
    return this.groups.create(instance, dto);
  }

  @Post('info')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.Group, { example: { ...GROUP_EXAMPLE, invite_link: 'https://chat.whatsapp.com/IYnl5Zg9bUcJD32rJrDzO7', request_participants: '' } })
  info(@CurrentInstance() instance: InstanceEntity, @Body() dto: GroupInfoDto) {
    return this.groups.info(instance, dto);
  }

  @Get('list')
  @ApiReply(SCHEMAS.GroupList, { example: { groups: [GROUP_EXAMPLE] } })
  list(@CurrentInstance() instance: InstanceEntity, @Query('force') force?: unknown, @Query('noparticipants') noparticipants?: unknown) {
    return this.groups.listAll(instance, { force, noparticipants });
  }

  @Post('list')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.GroupPage, { example: { groups: [{ ...GROUP_EXAMPLE, Participants: [] }], pagination: { totalRecords: 1, limit: 50, offset: 0 } } })
  page(@CurrentInstance() instance: InstanceEntity, @Body() dto: GroupListDto) {
    return this.groups.page(instance, dto);
  }

  @Post('inviteInfo')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.GroupInviteInfo, {
    example: { response: 'Group info retrieved successfully', group: { ...GROUP_EXAMPLE, OwnerIsAdmin: false, OwnerCanSendMessage: false } },
  })
  inviteInfo(@CurrentInstance() instance: InstanceEntity, @Body() dto: GroupInviteDto) {
    return this.groups.inviteInfo(instance, dto);
  }

  @Post('join')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.GroupJoin, { example: { response: 'Group join successful', group: GROUP_EXAMPLE, needs_refresh: false } })
  join(@CurrentInstance() instance: InstanceEntity, @Body() dto: GroupInviteDto) {
    return this.groups.join(instance, dto);
  }

  @Post('leave')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.Response, { example: { response: 'Group leave successful' } })
  leave(@CurrentInstance() instance: InstanceEntity, @Body() dto: GroupJidDto) {
    return this.groups.leave(instance, dto);
  }

  /** uazapi 2.0's spelling, still called by published clients (no spec version lists it). */
  @Get('invitelink/:groupJid')
  @ApiReply(SCHEMAS.GroupInviteLink, { example: { inviteLink: 'https://chat.whatsapp.com/IYnl5Zg9bUcJD32rJrDzO7' } })
  inviteLink(@CurrentInstance() instance: InstanceEntity, @Param('groupJid') groupJid: string) {
    return this.groups.inviteLink(instance, { groupjid: groupJid });
  }

  @Post('resetInviteCode')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.GroupResetInviteCode, {
    example: { InviteLink: 'https://chat.whatsapp.com/AbCdEfGhIjKlMnOpQrStUv', group: GROUP_EXAMPLE, needs_refresh: false },
  })
  resetInviteCode(@CurrentInstance() instance: InstanceEntity, @Body() dto: GroupJidDto) {
    return this.groups.resetInviteCode(instance, dto);
  }

  @Post('updateParticipants')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.GroupParticipantsUpdate, {
    example: { groupUpdated: [{ JID: '150512325316788@lid', Error: 0 }], group: GROUP_EXAMPLE, needs_refresh: false },
  })
  updateParticipants(@CurrentInstance() instance: InstanceEntity, @Body() dto: GroupParticipantsDto) {
    return this.groups.updateParticipants(instance, dto);
  }

  @Post('updateJoinApproval')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.GroupJoinApproval, {
    example: { response: 'Group join approval enabled successfully', group: { JID: GROUP_EXAMPLE.JID, IsJoinApprovalRequired: true }, needs_refresh: false },
  })
  updateJoinApproval(@CurrentInstance() instance: InstanceEntity, @Body() dto: GroupJoinApprovalDto) {
    return this.groups.updateJoinApproval(instance, dto);
  }

  @Post('updateName')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.GroupUpdate, { example: { response: 'Group name updated successfully', group: GROUP_EXAMPLE, needs_refresh: false } })
  updateName(@CurrentInstance() instance: InstanceEntity, @Body() dto: GroupNameDto) {
    return this.groups.updateName(instance, dto);
  }

  @Post('updateDescription')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.GroupUpdate, {
    example: { response: 'Group description updated successfully', group: { ...GROUP_EXAMPLE, Topic: 'Grupo oficial de suporte' }, needs_refresh: false },
  })
  updateDescription(@CurrentInstance() instance: InstanceEntity, @Body() dto: GroupDescriptionDto) {
    return this.groups.updateDescription(instance, dto);
  }

  @Post('updateAnnounce')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.GroupUpdate, {
    example: { response: 'Group announce enabled successfully', group: { ...GROUP_EXAMPLE, IsAnnounce: true }, needs_refresh: false },
  })
  updateAnnounce(@CurrentInstance() instance: InstanceEntity, @Body() dto: GroupAnnounceDto) {
    return this.groups.updateAnnounce(instance, dto);
  }

  @Post('updateLocked')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.GroupUpdate, {
    example: { response: 'Group lock status changed successfully', group: { ...GROUP_EXAMPLE, IsLocked: true }, needs_refresh: false },
  })
  updateLocked(@CurrentInstance() instance: InstanceEntity, @Body() dto: GroupLockedDto) {
    return this.groups.updateLocked(instance, dto);
  }

  @Post('updateMemberAddMode')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.GroupUpdate, {
    example: { response: 'Group member add mode set to admin_add successfully', group: { ...GROUP_EXAMPLE, MemberAddMode: 'admin_add' }, needs_refresh: false },
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
  updateEphemeral(@CurrentInstance() instance: InstanceEntity, @Body() dto: GroupEphemeralDto) {
    return this.groups.updateEphemeral(instance, dto);
  }

  @Post('updateImage')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.GroupUpdate, { example: { response: 'Group image updated successfully', group: GROUP_EXAMPLE, needs_refresh: false } })
  updateImage(@CurrentInstance() instance: InstanceEntity, @Body() dto: GroupImageDto) {
    return this.groups.updateImage(instance, dto);
  }
}

/** Communities (a parent group, its announcements group and the groups linked to it): `/community/*`. */
@Controller('community')
@UseGuards(InstanceGuard)
export class CommunityController {
  constructor(private readonly groups: GroupService) {}

  @Post('create')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.CommunityCreated, { example: { group: COMMUNITY_EXAMPLE, failed: [] } })
  create(@CurrentInstance() instance: InstanceEntity, @Body() dto: CreateCommunityDto) {
    return this.groups.createCommunity(instance, dto);
  }

  @Post('editgroups')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.CommunityGroups, { example: { message: 'community updated', success: ['120363324255083289@g.us'], failed: [] } })
  editGroups(@CurrentInstance() instance: InstanceEntity, @Body() dto: CommunityGroupsDto) {
    return this.groups.editCommunityGroups(instance, dto);
  }
}
