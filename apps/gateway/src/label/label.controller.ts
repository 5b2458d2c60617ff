import { Body, Controller, Get, Headers, HttpCode, HttpStatus, Post, UseGuards } from '@nestjs/common';
import type { InstanceEntity } from '@gw/persistence';
import { CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { EditLabelDto, RefreshLabelsDto } from './dto/label.dto';
import { LabelService } from './label.service';

/** The instance's labels: `/labels`, `/labels/refresh`, `/label/edit`. */
@Controller()
@UseGuards(InstanceGuard)
export class LabelController {
  constructor(private readonly labels: LabelService) {}

  @Get('labels')
  list(@CurrentInstance() instance: InstanceEntity) {
    return this.labels.list(instance);
  }

  @Post('labels/refresh')
  @HttpCode(HttpStatus.OK)
  refresh(@CurrentInstance() instance: InstanceEntity, @Body() dto: RefreshLabelsDto, @Headers('x-request-id') requestId?: string) {
    return this.labels.refresh(instance, dto, requestId);
  }

  @Post('label/edit')
  @HttpCode(HttpStatus.OK)
  edit(@CurrentInstance() instance: InstanceEntity, @Body() dto: EditLabelDto) {
    return this.labels.edit(instance, dto);
  }
}
