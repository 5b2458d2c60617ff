import { Body, Controller, Get, Headers, HttpCode, HttpStatus, Post, UseGuards } from '@nestjs/common';
import type { InstanceEntity } from '@gw/persistence';
import { CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { EditLabelDto, RefreshLabelsDto } from './dto/label.dto';
import { LabelService } from './label.service';
import { LABEL_EXAMPLE } from '../openapi/examples';
import { ApiReply } from '../openapi/api-reply.decorator';
import { SCHEMAS } from '../openapi/schemas';
import { ApiArea } from '../openapi/api-areas';
import { ApiHeader, ApiOperation } from '@nestjs/swagger';

/** The instance's labels: `/labels`, `/labels/refresh`, `/label/edit`. */
@ApiArea('Labels')
@Controller()
@UseGuards(InstanceGuard)
export class LabelController {
  constructor(private readonly labels: LabelService) {}

  @Get('labels')
  @ApiReply(SCHEMAS.Label, { isArray: true, example: [LABEL_EXAMPLE] })
  @ApiOperation({ summary: 'List the labels', description: 'Every label of the instance (WhatsApp Business).' })
  list(@CurrentInstance() instance: InstanceEntity) {
    return this.labels.list(instance);
  }

  @Post('labels/refresh')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.LabelRefresh, {
    example: {
      success: true,
      request_id: 'req_01HQ5Z8K3M',
      status: 'started',
      message: 'Label refresh started. Use GET /labels to fetch the refreshed list.',
      force: false,
      fullSync: false,
    },
  })
  @ApiOperation({
    summary: 'Reload the labels from WhatsApp',
    description:
      "Starts reading the labels again from WhatsApp in the background, and the chats' label associations with them; the answer says it started (or one is already running). `GET /labels` shows the result.",
  })
  @ApiHeader({ name: 'x-request-id', required: false, description: 'Your id for this request: answered as `request_id` and written in the logs' })
  refresh(@CurrentInstance() instance: InstanceEntity, @Body() dto: RefreshLabelsDto, @Headers('x-request-id') requestId?: string) {
    return this.labels.refresh(instance, dto, requestId);
  }

  @Post('label/edit')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.LabelEdited, { example: { response: 'Label edited' } })
  @ApiOperation({
    summary: 'Create, edit or delete a label',
    description:
      'Send `labelid: "new"` to create a label (the next free id is given), a real `labelid` to change its `name` or `color`, or a real `labelid` with `delete: true` to delete it.',
  })
  edit(@CurrentInstance() instance: InstanceEntity, @Body() dto: EditLabelDto) {
    return this.labels.edit(instance, dto);
  }
}
