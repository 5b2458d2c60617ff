import { Body, Controller, HttpCode, Post, UseGuards } from '@nestjs/common';
import type { InstanceEntity } from '@gw/persistence';
import { CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { FindMessagesDto } from './dto/find-messages.dto';
import { DeleteDto, DownloadDto, EditDto, MarkReadDto, PinDto, ReactDto } from './dto/message-actions.dto';
import { MessageDownloadService } from './message-download.service';
import { MessageActionsService } from './message-actions.service';
import { MessageService } from './message.service';

@Controller('message')
@UseGuards(InstanceGuard)
export class MessageController {
  constructor(
    private readonly messages: MessageService,
    private readonly actions: MessageActionsService,
    private readonly downloads: MessageDownloadService,
  ) {}

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

  @Post('markread')
  @HttpCode(200)
  markRead(@CurrentInstance() instance: InstanceEntity, @Body() dto: MarkReadDto) {
    return this.actions.markRead(instance, dto.id);
  }
}
