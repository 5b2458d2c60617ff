import { Body, Controller, Get, HttpCode, HttpStatus, Param, Post, UseFilters, UseGuards } from '@nestjs/common';

import { CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { ApiReply } from '../openapi/api-reply.decorator';
import { QuickReplyEditDto } from './dto/quick-reply-edit.dto';
import { QuickReplyErrorFilter, QuickReplyRecordErrorFilter } from './quick-reply-errors.filter';
import { QUICK_REPLY_EDITED_EXAMPLE, QUICK_REPLY_EXAMPLE, QUICK_REPLY_MEDIA_EXAMPLE } from './dto/quick-reply.examples';
import { QuickReplyEditedResponse, QuickReplyResponse } from './dto/quick-reply.response';
import { QuickReplyService } from './quick-reply.service';
import { ApiArea } from '../openapi/api-areas';
import { ApiOperation, ApiParam } from '@nestjs/swagger';
import type { RequestInstance } from '../common/request-instance';

/** The instance's quick replies: uazapi's `/quickreply/edit` and `/quickreply/showall`, and the seed's `GET /quick-replies/{id}`. */
@ApiArea('Quick replies')
@Controller()
@UseGuards(InstanceGuard)
export class QuickReplyController {
  constructor(private readonly quickReplies: QuickReplyService) {}

  @Post('quickreply/edit')
  @HttpCode(HttpStatus.OK)
  @UseFilters(QuickReplyErrorFilter)
  @ApiReply(QuickReplyEditedResponse, {
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
  @ApiOperation({
    summary: 'Create, update or delete a quick reply',
    description:
      "Stores canned answers, text or media, for a front end to offer: without `id` one is created, with `id` updated, with `delete: true` and the `id` removed. Quick replies that came from WhatsApp (`onWhatsApp: true`) follow uazapiGO 2.1.1's rules. The API stores them; it never sends them by itself.",
  })
  editQuickReply(@CurrentInstance() instance: RequestInstance, @Body() dto: QuickReplyEditDto): Promise<QuickReplyEditedResponse> {
    return this.quickReplies.edit(instance, dto);
  }

  @Get('quickreply/showall')
  @UseFilters(QuickReplyErrorFilter)
  @ApiReply(QuickReplyResponse, { isArray: true, example: [QUICK_REPLY_EXAMPLE, QUICK_REPLY_MEDIA_EXAMPLE], errors: ['invalid_token', 'internal'] })
  @ApiOperation({ summary: 'List the quick replies', description: 'Every quick reply of the instance.' })
  listQuickReplies(@CurrentInstance() instance: RequestInstance): Promise<QuickReplyResponse[]> {
    return this.quickReplies.showAll(instance);
  }

  @Get('quick-replies/:id')
  @UseFilters(QuickReplyRecordErrorFilter)
  @ApiReply(QuickReplyResponse, { example: QUICK_REPLY_EXAMPLE, errors: ['invalid_token_coded', 'quick_reply_not_found', 'internal'] })
  @ApiOperation({ summary: 'Show one quick reply', description: "One quick reply by its `id`. Not in uazapiGO's document." })
  @ApiParam({ name: 'id', description: "The quick reply's id" })
  getQuickReply(@CurrentInstance() instance: RequestInstance, @Param('id') id: string): Promise<QuickReplyResponse> {
    return this.quickReplies.get(instance, id);
  }
}
