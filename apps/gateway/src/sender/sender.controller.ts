import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Post, Query, UseGuards } from '@nestjs/common';
import { ApiQuery, ApiOperation } from '@nestjs/swagger';

import { CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { FOLDER_STATUS_FILTERS, SenderAdvancedDto, SenderClearDoneDto, SenderEditDto, SenderListMessagesDto, SenderSimpleDto } from './dto/sender.dto';
import { SenderService } from './sender.service';
import {
  ADVANCED_CAMPAIGN_CREATED_EXAMPLE,
  CAMPAIGN_CLEANUP_EXAMPLE,
  CAMPAIGN_EDITED_EXAMPLE,
  CAMPAIGN_MESSAGES_EXAMPLE,
  CAMPAIGNS_CLEARED_EXAMPLE,
  FOLDER_EXAMPLE,
  SIMPLE_CAMPAIGN_CREATED_EXAMPLE,
} from './dto/sender.examples';
import {
  CampaignCleanupResponse,
  CampaignCreatedResponse,
  CampaignEditedResponse,
  CampaignMessagesResponse,
  CampaignsClearedResponse,
  MessageQueueFolderResponse,
} from './dto/sender.response';
import { ApiReply } from '../openapi/api-reply.decorator';
import { ApiArea } from '../openapi/api-areas';
import type { RequestInstance } from '../common/request-instance';

/** Campaigns: `/sender/*` (mass messaging, paced and scheduled). */
@ApiArea('Mass sending')
@Controller('sender')
@UseGuards(InstanceGuard)
export class SenderController {
  constructor(private readonly sender: SenderService) {}

  @Post('simple')
  @HttpCode(HttpStatus.OK)
  @ApiReply(CampaignCreatedResponse, { example: SIMPLE_CAMPAIGN_CREATED_EXAMPLE })
  @ApiOperation({
    summary: 'Create a simple campaign',
    description:
      "Sends one message to many `numbers`, paced by a random pause between `delayMin` and `delayMax` seconds, now or at `scheduled_for`; the message's fields are those of the matching `/send/*` route. Answers the campaign's folder id.",
  })
  simple(@CurrentInstance() instance: RequestInstance, @Body() dto: SenderSimpleDto): Promise<CampaignCreatedResponse> {
    return this.sender.simple(instance, dto);
  }

  @Post('advanced')
  @HttpCode(HttpStatus.OK)
  @ApiReply(CampaignCreatedResponse, { example: ADVANCED_CAMPAIGN_CREATED_EXAMPLE })
  @ApiOperation({
    summary: 'Create an advanced campaign',
    description:
      'Sends a list of `messages`, each to its own `number` with its own content, with a default delay between them; the campaign is a folder whose messages can be listed and controlled.',
  })
  advanced(@CurrentInstance() instance: RequestInstance, @Body() dto: SenderAdvancedDto): Promise<CampaignCreatedResponse> {
    return this.sender.advanced(instance, dto);
  }

  @Post('edit')
  @HttpCode(HttpStatus.OK)
  @ApiReply(CampaignEditedResponse, { example: CAMPAIGN_EDITED_EXAMPLE })
  @ApiOperation({
    summary: 'Control a campaign',
    description:
      'Acts on a campaign (`folder_id`) by `action`: `stop` pauses it, `continue` resumes a paused one (not a finished one), `delete` removes it with its pending messages. Messages already sent are not affected.',
  })
  edit(@CurrentInstance() instance: RequestInstance, @Body() dto: SenderEditDto): Promise<CampaignEditedResponse> {
    return this.sender.edit(instance, dto);
  }

  @Post('cleardone')
  @HttpCode(HttpStatus.OK)
  @ApiReply(CampaignCleanupResponse, { example: CAMPAIGN_CLEANUP_EXAMPLE })
  @ApiOperation({
    summary: 'Clear finished campaigns',
    description:
      'Deletes the finished (`done`) campaigns, with their messages, that ended more than `hours` hours ago; every finished campaign when `hours` is absent. The answer says the cleanup started.',
  })
  clearDone(@CurrentInstance() instance: RequestInstance, @Body() dto: SenderClearDoneDto): Promise<CampaignCleanupResponse> {
    return this.sender.clearDone(instance, dto);
  }

  @Delete('clearall')
  @HttpCode(HttpStatus.OK)
  @ApiReply(CampaignsClearedResponse, { example: CAMPAIGNS_CLEARED_EXAMPLE })
  @ApiOperation({
    summary: 'Clear every campaign message',
    description: 'Deletes every campaign of the instance with its messages, pending ones included (they are canceled). Irreversible.',
  })
  clearAll(@CurrentInstance() instance: RequestInstance): Promise<CampaignsClearedResponse> {
    return this.sender.clearAll(instance);
  }

  @Get('listfolders')
  @HttpCode(HttpStatus.OK)
  @ApiQuery({ name: 'status', required: false, enum: FOLDER_STATUS_FILTERS, description: 'Active, Archived, or one folder status' })
  @ApiReply(MessageQueueFolderResponse, { isArray: true, example: [FOLDER_EXAMPLE] })
  @ApiOperation({ summary: 'List the campaigns', description: "The instance's campaigns, newest first, with their counts; `status` filters them." })
  listFolders(@CurrentInstance() instance: RequestInstance, @Query('status') status?: string): Promise<MessageQueueFolderResponse[]> {
    return this.sender.listFolders(instance, status);
  }

  @Post('listmessages')
  @HttpCode(HttpStatus.OK)
  @ApiReply(CampaignMessagesResponse, { example: CAMPAIGN_MESSAGES_EXAMPLE })
  @ApiOperation({
    summary: "List a campaign's messages",
    description: 'The messages of one campaign (`folder_id`), filtered by `messageStatus` and paginated (`page`, `pageSize`).',
  })
  listMessages(@CurrentInstance() instance: RequestInstance, @Body() dto: SenderListMessagesDto): Promise<CampaignMessagesResponse> {
    return this.sender.listMessages(instance, dto);
  }
}
