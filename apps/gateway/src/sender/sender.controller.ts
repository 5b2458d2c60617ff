import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Post, Query, UseGuards } from '@nestjs/common';
import { ApiQuery } from '@nestjs/swagger';
import type { InstanceEntity } from '@gw/persistence';
import { CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { FOLDER_STATUS_FILTERS, SenderAdvancedDto, SenderClearDoneDto, SenderEditDto, SenderListMessagesDto, SenderSimpleDto } from './dto/sender.dto';
import { SenderService } from './sender.service';

/** Campaigns: `/sender/*` (mass messaging, paced and scheduled). */
@Controller('sender')
@UseGuards(InstanceGuard)
export class SenderController {
  constructor(private readonly sender: SenderService) {}

  @Post('simple')
  @HttpCode(HttpStatus.OK)
  simple(@CurrentInstance() instance: InstanceEntity, @Body() dto: SenderSimpleDto) {
    return this.sender.simple(instance, dto);
  }

  @Post('advanced')
  @HttpCode(HttpStatus.OK)
  advanced(@CurrentInstance() instance: InstanceEntity, @Body() dto: SenderAdvancedDto) {
    return this.sender.advanced(instance, dto);
  }

  @Post('edit')
  @HttpCode(HttpStatus.OK)
  edit(@CurrentInstance() instance: InstanceEntity, @Body() dto: SenderEditDto) {
    return this.sender.edit(instance, dto);
  }

  @Post('cleardone')
  @HttpCode(HttpStatus.OK)
  clearDone(@CurrentInstance() instance: InstanceEntity, @Body() dto: SenderClearDoneDto) {
    return this.sender.clearDone(instance, dto);
  }

  @Delete('clearall')
  @HttpCode(HttpStatus.OK)
  clearAll(@CurrentInstance() instance: InstanceEntity) {
    return this.sender.clearAll(instance);
  }

  @Get('listfolders')
  @HttpCode(HttpStatus.OK)
  @ApiQuery({ name: 'status', required: false, enum: FOLDER_STATUS_FILTERS, description: 'Active, Archived, or one folder status' })
  listFolders(@CurrentInstance() instance: InstanceEntity, @Query('status') status?: string) {
    return this.sender.listFolders(instance, status);
  }

  @Post('listmessages')
  @HttpCode(HttpStatus.OK)
  listMessages(@CurrentInstance() instance: InstanceEntity, @Body() dto: SenderListMessagesDto) {
    return this.sender.listMessages(instance, dto);
  }
}
