import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Post, Query, UseGuards } from '@nestjs/common';
import type { InstanceEntity } from '@gw/persistence';
import { CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { SenderService } from './sender.service';

type Payload = Record<string, unknown>;

/** Campaigns: `/sender/*` (mass messaging, paced and scheduled). */
@Controller('sender')
@UseGuards(InstanceGuard)
export class SenderController {
  constructor(private readonly sender: SenderService) {}

  @Post('simple')
  @HttpCode(HttpStatus.OK)
  simple(@CurrentInstance() instance: InstanceEntity, @Body() body: Payload) {
    return this.sender.simple(instance, body ?? {});
  }

  @Post('advanced')
  @HttpCode(HttpStatus.OK)
  advanced(@CurrentInstance() instance: InstanceEntity, @Body() body: Payload) {
    return this.sender.advanced(instance, body ?? {});
  }

  @Post('edit')
  @HttpCode(HttpStatus.OK)
  edit(@CurrentInstance() instance: InstanceEntity, @Body() body: Payload) {
    return this.sender.edit(instance, body ?? {});
  }

  @Post('cleardone')
  @HttpCode(HttpStatus.OK)
  clearDone(@CurrentInstance() instance: InstanceEntity, @Body() body: Payload) {
    return this.sender.clearDone(instance, body ?? {});
  }

  @Delete('clearall')
  @HttpCode(HttpStatus.OK)
  clearAll(@CurrentInstance() instance: InstanceEntity) {
    return this.sender.clearAll(instance);
  }

  @Get('listfolders')
  @HttpCode(HttpStatus.OK)
  listFolders(@CurrentInstance() instance: InstanceEntity, @Query('status') status?: string) {
    return this.sender.listFolders(instance, status);
  }

  @Post('listmessages')
  @HttpCode(HttpStatus.OK)
  listMessages(@CurrentInstance() instance: InstanceEntity, @Body() body: Payload) {
    return this.sender.listMessages(instance, body ?? {});
  }
}
