import { Body, Controller, Get, HttpCode, HttpStatus, Param, Post, UseFilters, UseGuards } from '@nestjs/common';
import type { InstanceEntity } from '@gw/persistence';
import { CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { ApiReply } from '../openapi/api-reply.decorator';
import { SCHEMAS } from '../openapi/schemas';
import { QuickReplyEditDto } from './dto/quick-reply-edit.dto';
import { QuickReplyErrorFilter, QuickReplyRecordErrorFilter } from './quick-reply-errors.filter';
import { QUICK_REPLY_EDITED_EXAMPLE, QUICK_REPLY_EXAMPLE, QUICK_REPLY_MEDIA_EXAMPLE } from './quick-reply.examples';
import { QuickReplyService } from './quick-reply.service';

/** The instance's quick replies: uazapi's `/quickreply/edit` and `/quickreply/showall`, and the seed's `GET /quick-replies/{id}`. */
@Controller()
@UseGuards(InstanceGuard)
export class QuickReplyController {
  constructor(private readonly quickReplies: QuickReplyService) {}

  @Post('quickreply/edit')
  @HttpCode(HttpStatus.OK)
  @UseFilters(QuickReplyErrorFilter)
  @ApiReply(SCHEMAS.QuickReplyEdited, {
    example: QUICK_REPLY_EDITED_EXAMPLE,
    errors: [
      'validation_failed',
      'invalid_token',
      'quick_reply_not_found',
      'conflict',
      'payload_too_large',
      'unsupported_media_type',
      'whatsapp_refused',
      'timeout',
      'internal',
    ],
  })
  editQuickReply(@CurrentInstance() instance: InstanceEntity, @Body() dto: QuickReplyEditDto) {
    return this.quickReplies.edit(instance, dto);
  }

  @Get('quickreply/showall')
  @UseFilters(QuickReplyErrorFilter)
  @ApiReply(SCHEMAS.QuickReply, { isArray: true, example: [QUICK_REPLY_EXAMPLE, QUICK_REPLY_MEDIA_EXAMPLE], errors: ['invalid_token', 'internal'] })
  listQuickReplies(@CurrentInstance() instance: InstanceEntity) {
    return this.quickReplies.showAll(instance);
  }

  @Get('quick-replies/:id')
  @UseFilters(QuickReplyRecordErrorFilter)
  @ApiReply(SCHEMAS.QuickReply, { example: QUICK_REPLY_EXAMPLE, errors: ['invalid_token_coded', 'quick_reply_not_found', 'internal'] })
  getQuickReply(@CurrentInstance() instance: InstanceEntity, @Param('id') id: string) {
    return this.quickReplies.get(instance, id);
  }
}
