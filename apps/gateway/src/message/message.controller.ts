import { Body, Controller, HttpCode, Inject, Post, UseGuards } from '@nestjs/common';
import type { InstanceEntity } from '@gw/persistence';
import type { DataSource } from 'typeorm';
import { DATA_SOURCE } from '../runtime/tokens';
import { SessionClient } from '../session/session.client';
import { CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { FindMessagesDto } from './dto/find-messages.dto';
import { DeleteDto, DownloadDto, EditDto, HistorySyncDto, MarkReadDto, PinDto, ReactDto } from './dto/message-actions.dto';
import { HistorySyncRequester } from './history-sync.service';
import { MessageDownloadService } from './message-download.service';
import { MessageActionsService } from './message-actions.service';
import { MessageService } from './message.service';

@Controller('message')
@UseGuards(InstanceGuard)
export class MessageController {
  private readonly history: HistorySyncRequester;

  constructor(
    private readonly messages: MessageService,
    private readonly actions: MessageActionsService,
    private readonly downloads: MessageDownloadService,
    sessions: SessionClient,
    @Inject(DATA_SOURCE) dataSource: DataSource,
  ) {
    this.history = new HistorySyncRequester(dataSource, sessions);
  }

  @Post('download')
  @HttpCode(200)
  download(@CurrentInstance() instance: InstanceEntity, @Body() dto: DownloadDto) {
    return this.downloads.download(instance, dto);
  }

  @Post('find')
  @HttpCode(200)
  find(@CurrentInstance() instance: InstanceEntity, @Body() dto: FindMessagesDto) {
    return this.messages.find(instance, dto);
  }

  @Post('react')
  @HttpCode(200)
  react(@CurrentInstance() instance: InstanceEntity, @Body() dto: ReactDto) {
    return this.actions.react(instance, dto);
  }

  @Post('edit')
  @HttpCode(200)
  edit(@CurrentInstance() instance: InstanceEntity, @Body() dto: EditDto) {
    return this.actions.edit(instance, dto);
  }

  @Post('delete')
  @HttpCode(200)
  remove(@CurrentInstance() instance: InstanceEntity, @Body() dto: DeleteDto) {
    return this.actions.remove(instance, dto);
  }

  @Post('pin')
  @HttpCode(200)
  pin(@CurrentInstance() instance: InstanceEntity, @Body() dto: PinDto) {
    return this.actions.pin(instance, dto);
  }

  @Post('history-sync')
  @HttpCode(200)
  historySync(@CurrentInstance() instance: InstanceEntity, @Body() dto: HistorySyncDto) {
    return this.history.request(instance, dto);
  }

  @Post('markread')
  @HttpCode(200)
  markRead(@CurrentInstance() instance: InstanceEntity, @Body() dto: MarkReadDto) {
    return this.actions.markRead(instance, dto.id);
  }
}
