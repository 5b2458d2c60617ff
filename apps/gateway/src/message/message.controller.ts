import { Body, Controller, HttpCode, HttpStatus, Post, UseGuards } from '@nestjs/common';
import type { InstanceEntity } from '@gw/persistence';
import { CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { FindMessagesDto } from './dto/find-messages.dto';
import { DeleteDto, DownloadDto, EditDto, HistorySyncDto, MarkReadDto, PinDto, ReactDto } from './dto/message-actions.dto';
import { HistorySyncService } from './history-sync.service';
import { MessageDownloadService } from './message-download.service';
import { MessageActionsService } from './message-actions.service';
import { MessageService } from './message.service';

/** `/message/*` on stored messages (GET|DELETE /message/async is in async/). */
@Controller('message')
@UseGuards(InstanceGuard)
export class MessageController {
  constructor(
    private readonly messages: MessageService,
    private readonly actions: MessageActionsService,
    private readonly downloads: MessageDownloadService,
    private readonly history: HistorySyncService,
  ) {}

  @Post('download')
  @HttpCode(HttpStatus.OK)
  download(@CurrentInstance() instance: InstanceEntity, @Body() dto: DownloadDto) {
    return this.downloads.download(instance, dto);
  }

  @Post('find')
  @HttpCode(HttpStatus.OK)
  find(@CurrentInstance() instance: InstanceEntity, @Body() dto: FindMessagesDto) {
    return this.messages.find(instance, dto);
  }

  @Post('react')
  @HttpCode(HttpStatus.OK)
  react(@CurrentInstance() instance: InstanceEntity, @Body() dto: ReactDto) {
    return this.actions.react(instance, dto);
  }

  @Post('edit')
  @HttpCode(HttpStatus.OK)
  edit(@CurrentInstance() instance: InstanceEntity, @Body() dto: EditDto) {
    return this.actions.edit(instance, dto);
  }

  @Post('delete')
  @HttpCode(HttpStatus.OK)
  remove(@CurrentInstance() instance: InstanceEntity, @Body() dto: DeleteDto) {
    return this.actions.remove(instance, dto);
  }

  @Post('pin')
  @HttpCode(HttpStatus.OK)
  pin(@CurrentInstance() instance: InstanceEntity, @Body() dto: PinDto) {
    return this.actions.pin(instance, dto);
  }

  @Post('history-sync')
  @HttpCode(HttpStatus.OK)
  historySync(@CurrentInstance() instance: InstanceEntity, @Body() dto: HistorySyncDto) {
    return this.history.request(instance, dto);
  }

  @Post('markread')
  @HttpCode(HttpStatus.OK)
  markRead(@CurrentInstance() instance: InstanceEntity, @Body() dto: MarkReadDto) {
    return this.actions.markRead(instance, dto);
  }
}
