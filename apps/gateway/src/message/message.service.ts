import { Injectable } from '@nestjs/common';
import { MessageRepository, toMessageRecord } from '@gw/persistence';
import { normaliseMessageId } from '../common/message-id';
import type { FindMessagesDto } from './dto/find-messages.dto';
import type { MessagePageResponse } from './dto/message.response';
import type { RequestInstance } from '../common/request-instance';

@Injectable()
export class MessageService {
  constructor(private readonly messages: MessageRepository) {}

  /** POST /message/find: filters, newest first by default, limit/offset (or page/pageSize). */
  async find(instance: RequestInstance, dto: FindMessagesDto): Promise<MessagePageResponse> {
    const limit = dto.limit ?? dto.pageSize ?? 100;
    const offset = dto.offset ?? (dto.page ? (dto.page - 1) * limit : 0);
    const { rows, total } = await this.messages.find(instance.id, {
      id: dto.id?.trim() ? normaliseMessageId(dto.id) : undefined,
      chatId: dto.chatid ?? dto.number,
      trackSource: dto.track_source,
      trackId: dto.track_id,
      status: dto.status,
      fromMe: dto.fromMe,
      messageType: dto.messageType,
      ascending: dto.sort === 'messageTimestamp',
      limit,
      offset,
    });
    const hasMore = offset + rows.length < total;
    return {
      returnedMessages: rows.length,
      messages: rows.map((row) => toMessageRecord(row, instance.owner)),
      limit,
      offset,
      nextOffset: offset + rows.length,
      hasMore,
    };
  }
}
