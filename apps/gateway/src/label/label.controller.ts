import { Body, Controller, Get, Headers, HttpCode, HttpStatus, Post, UseGuards } from '@nestjs/common';

import { CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { EditLabelDto, RefreshLabelsDto } from './dto/label.dto';
import { LabelService } from './label.service';
import { LABEL_EDITED_EXAMPLE, LABEL_EXAMPLE, LABEL_REFRESH_EXAMPLE } from './dto/label.examples';
import { LabelEditedResponse, LabelRefreshResponse, LabelResponse } from './dto/label.response';
import { ApiReply } from '../openapi/api-reply.decorator';
import { ApiArea } from '../openapi/api-areas';
import { ApiHeader, ApiOperation } from '@nestjs/swagger';
import type { RequestInstance } from '../common/request-instance';

/** The instance's labels: `/labels`, `/labels/refresh`, `/label/edit`. */
@ApiArea('Labels')
@Controller()
@UseGuards(InstanceGuard)
export class LabelController {
  constructor(private readonly labels: LabelService) {}

  @Get('labels')
  @ApiReply(LabelResponse, { isArray: true, example: [LABEL_EXAMPLE] })
  @ApiOperation({ summary: 'List the labels', description: 'Every label of the instance (WhatsApp Business).' })
  list(@CurrentInstance() instance: RequestInstance): Promise<LabelResponse[]> {
    return this.labels.list(instance);
  }

  @Post('labels/refresh')
  @HttpCode(HttpStatus.OK)
  @ApiReply(LabelRefreshResponse, { example: LABEL_REFRESH_EXAMPLE })
  @ApiOperation({
    summary: 'Reload the labels from WhatsApp',
    description:
      "Starts reading the labels again from WhatsApp in the background, and the chats' label associations with them; the answer says it started (or one is already running). `GET /labels` shows the result.",
  })
  @ApiHeader({ name: 'x-request-id', required: false, description: 'Your id for this request: answered as `request_id` and written in the logs' })
  refresh(
    @CurrentInstance() instance: RequestInstance,
    @Body() dto: RefreshLabelsDto,
    @Headers('x-request-id') requestId?: string,
  ): Promise<LabelRefreshResponse> {
    return this.labels.refresh(instance, dto, requestId);
  }

  @Post('label/edit')
  @HttpCode(HttpStatus.OK)
  @ApiReply(LabelEditedResponse, { example: LABEL_EDITED_EXAMPLE })
  @ApiOperation({
    summary: 'Create, edit or delete a label',
    description:
      'Send `labelid: "new"` to create a label (the next free id is given), a real `labelid` to change its `name` or `color`, or a real `labelid` with `delete: true` to delete it.',
  })
  edit(@CurrentInstance() instance: RequestInstance, @Body() dto: EditLabelDto): Promise<LabelEditedResponse> {
    return this.labels.edit(instance, dto);
  }
}
