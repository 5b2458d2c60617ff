import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Post, Query, UseGuards } from '@nestjs/common';
import { ApiQuery, ApiOperation } from '@nestjs/swagger';
import type { InstanceEntity } from '@gw/persistence';
import { CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { FOLDER_STATUS_FILTERS, SenderAdvancedDto, SenderClearDoneDto, SenderEditDto, SenderListMessagesDto, SenderSimpleDto } from './dto/sender.dto';
import { SenderService } from './sender.service';
import { FOLDER_EXAMPLE, MESSAGE_EXAMPLE } from '../openapi/examples';
import { ApiReply } from '../openapi/api-reply.decorator';
import { SCHEMAS } from '../openapi/schemas';
import { ApiArea } from '../openapi/api-areas';

/** Campaigns: `/sender/*` (mass messaging, paced and scheduled). */
@ApiArea('Mass sending')
@Controller('sender')
@UseGuards(InstanceGuard)
export class SenderController {
  constructor(private readonly sender: SenderService) {}

  @Post('simple')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.CampaignCreated, { example: { folder_id: 'f4a1b2c3d4e5f', count: 2, status: 'queued' } })
  @ApiOperation({
    summary: 'Create a simple campaign',
    description:
      "Sends one message to many `numbers`, paced by a random pause between `delayMin` and `delayMax` seconds, now or at `scheduled_for`; the message's fields are those of the matching `/send/*` route. Answers the campaign's folder id.",
  })
  simple(@CurrentInstance() instance: InstanceEntity, @Body() dto: SenderSimpleDto) {
    return this.sender.simple(instance, dto);
  }

  @Post('advanced')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.CampaignCreated, { example: { folder_id: 'f5b2c3d4e5f6a', count: 2, status: 'queued' } })
  @ApiOperation({
    summary: 'Create an advanced campaign',
    description:
      'Sends a list of `messages`, each to its own `number` with its own content, with a default delay between them; the campaign is a folder whose messages can be listed and controlled.',
  })
  advanced(@CurrentInstance() instance: InstanceEntity, @Body() dto: SenderAdvancedDto) {
    return this.sender.advanced(instance, dto);
  }

  @Post('edit')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.CampaignEdited, { example: { status: 'scheduled', message: 'Folder resumed successfully' } })
  @ApiOperation({
    summary: 'Control a campaign',
    description:
      'Acts on a campaign (`folder_id`) by `action`: `stop` pauses it, `continue` resumes a paused one (not a finished one), `delete` removes it with its pending messages. Messages already sent are not affected.',
  })
  edit(@CurrentInstance() instance: InstanceEntity, @Body() dto: SenderEditDto) {
    return this.sender.edit(instance, dto);
  }

  @Post('cleardone')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.CampaignCleanup, { example: { status: 'cleanup started' } })
  @ApiOperation({
    summary: 'Clear finished campaigns',
    description:
      'Deletes the finished (`done`) campaigns, with their messages, that ended more than `hours` hours ago; every finished campaign when `hours` is absent. The answer says the cleanup started.',
  })
  clearDone(@CurrentInstance() instance: InstanceEntity, @Body() dto: SenderClearDoneDto) {
    return this.sender.clearDone(instance, dto);
  }

  @Delete('clearall')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.CampaignsCleared, { example: { status: 'processed', messages_deleted: 150, folders_deleted: 3 } })
  @ApiOperation({
    summary: 'Clear every campaign message',
    description: 'Deletes every campaign of the instance with its messages, pending ones included (they are canceled). Irreversible.',
  })
  clearAll(@CurrentInstance() instance: InstanceEntity) {
    return this.sender.clearAll(instance);
  }

  @Get('listfolders')
  @HttpCode(HttpStatus.OK)
  @ApiQuery({ name: 'status', required: false, enum: FOLDER_STATUS_FILTERS, description: 'Active, Archived, or one folder status' })
  @ApiReply(SCHEMAS.MessageQueueFolder, { isArray: true, example: [FOLDER_EXAMPLE] })
  @ApiOperation({ summary: 'List the campaigns', description: "The instance's campaigns, newest first, with their counts; `status` filters them." })
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
  @ApiOperation({
    summary: "List a campaign's messages",
    description: 'The messages of one campaign (`folder_id`), filtered by `messageStatus` and paginated (`page`, `pageSize`).',
  })
  listMessages(@CurrentInstance() instance: InstanceEntity, @Body() dto: SenderListMessagesDto) {
    return this.sender.listMessages(instance, dto);
  }
}
