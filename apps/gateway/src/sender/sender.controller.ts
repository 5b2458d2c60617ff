import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Post, Query, UseGuards } from '@nestjs/common';
import { ApiQuery } from '@nestjs/swagger';
import type { InstanceEntity } from '@gw/persistence';
import { CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { FOLDER_STATUS_FILTERS, SenderAdvancedDto, SenderClearDoneDto, SenderEditDto, SenderListMessagesDto, SenderSimpleDto } from './dto/sender.dto';
import { SenderService } from './sender.service';
import { FOLDER_EXAMPLE, MESSAGE_EXAMPLE } from '../openapi/examples';
import { ApiReply } from '../openapi/api-reply.decorator';
import { SCHEMAS } from '../openapi/schemas';

/** Campaigns: `/sender/*` (mass messaging, paced and scheduled). */
@Controller('sender')
@UseGuards(InstanceGuard)
export class SenderController {
  constructor(private readonly sender: SenderService) {}

  @Post('simple')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.CampaignCreated, { example: { folder_id: 'f4a1b2c3d4e5f', count: 2, status: 'queued' } })
  simple(@CurrentInstance() instance: InstanceEntity, @Body() dto: SenderSimpleDto) {
    return this.sender.simple(instance, dto);
  }

  @Post('advanced')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.CampaignCreated, { example: { folder_id: 'f5b2c3d4e5f6a', count: 2, status: 'queued' } })
  advanced(@CurrentInstance() instance: InstanceEntity, @Body() dto: SenderAdvancedDto) {
    return this.sender.advanced(instance, dto);
  }

  @Post('edit')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.CampaignEdited, { example: { status: 'scheduled', message: 'Folder resumed successfully' } })
  edit(@CurrentInstance() instance: InstanceEntity, @Body() dto: SenderEditDto) {
    return this.sender.edit(instance, dto);
  }

  @Post('cleardone')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.CampaignCleanup, { example: { status: 'cleanup started' } })
  clearDone(@CurrentInstance() instance: InstanceEntity, @Body() dto: SenderClearDoneDto) {
    return this.sender.clearDone(instance, dto);
  }

  @Delete('clearall')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.CampaignsCleared, { example: { status: 'processed', messages_deleted: 150, folders_deleted: 3 } })
  clearAll(@CurrentInstance() instance: InstanceEntity) {
    return this.sender.clearAll(instance);
  }

  @Get('listfolders')
  @HttpCode(HttpStatus.OK)
  @ApiQuery({ name: 'status', required: false, enum: FOLDER_STATUS_FILTERS, description: 'Active, Archived, or one folder status' })
  @ApiReply(SCHEMAS.MessageQueueFolder, { isArray: true, example: [FOLDER_EXAMPLE] })
  listFolders(@CurrentInstance() instance: InstanceEntity, @Query('status') status?: string) {
    return this.sender.listFolders(instance, status);
  }

  @Post('listmessages')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.CampaignMessages, {
    example: {
      messages: [{ ...MESSAGE_EXAMPLE, fromMe: true, wasSentByApi: true, status: 'Sent', text: 'Promoção!', send_folder_id: 'f4a1b2c3d4e5f' }],
      pagination: { totalRecords: 2, limit: 1000, offset: 0 },
    },
  })
  listMessages(@CurrentInstance() instance: InstanceEntity, @Body() dto: SenderListMessagesDto) {
    return this.sender.listMessages(instance, dto);
  }
}
