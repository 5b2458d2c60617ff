import { Inject, Injectable } from '@nestjs/common';
import { Bus } from '@gw/bus';
import { messagesUpdatePayload, Subjects, type OutboundContent, type SendReply, type SendRequest } from '@gw/contracts';
import { MessageRepository, OutboxRepository, UnitOfWork, type MessageRow, type Tx } from '@gw/persistence';
import { ApiError } from '../common/api-error';
import { normaliseMessageId } from '../common/message-id';
import { BUS } from '../runtime/tokens';
import { SessionClient } from '../session/session.client';
import { newMessageIds } from '../send/message-ids';
import type { DeleteDto, EditDto, MarkReadDto, PinDto, ReactDto } from './dto/message-actions.dto';
import type { MarkReadResponse, MarkReadResult, MessageActionResponse, MessageDeletedResponse, MessagePinnedResponse } from './dto/message.response';
import type { RequestInstance } from '../common/request-instance';

const PIN_DAYS = new Set([1, 7, 30]);

/** The emoji the pin response carries in `reaction` (spec: "an emoji in the pin response"). */
const PIN_EMOJI = '\u{1F4CC}';

/**
 * Actions on stored messages: react, edit, delete for everyone, pin in chat, mark read. Each goes out
 * through the worker's send op (so ids are fixed and never relayed twice); the change it makes to the
 * original message is written here with its `messages_update` event, in one transaction.
 */
@Injectable()
export class MessageActionsService {
  constructor(
    private readonly unitOfWork: UnitOfWork,
    private readonly messages: MessageRepository,
    private readonly outbox: OutboxRepository,
    @Inject(BUS) private readonly bus: Bus,
    private readonly sessions: SessionClient,
  ) {}

  /** A stored message by our id or the provider's (the DTOs require a non-blank id). */
  async find(instance: RequestInstance, id: string): Promise<MessageRow> {
    const row = await this.messages.findOne(instance.id, normaliseMessageId(id));
    if (!row) throw ApiError.notFound('Message not found');
    return row;
  }

  async react(instance: RequestInstance, body: ReactDto): Promise<MessageActionResponse> {
    const target = await this.find(instance, body.id);
    const record = await this.relay(instance, target.chatId, { kind: 'reaction', targetMessageId: target.messageId, emoji: body.text }, 'SendReaction', body);
    return {
      id: record.id,
      messageid: record.messageid,
      content: record.content,
      messageTimestamp: record.messageTimestamp,
      messageType: 'reaction',
      status: 'Pending',
      owner: instance.owner,
      reaction: target.messageId,
    };
  }

  async edit(instance: RequestInstance, body: EditDto): Promise<MessageActionResponse> {
    const target = await this.find(instance, body.id);
    if (!target.fromMe) throw ApiError.badRequest('only messages sent by this instance can be edited');
    const record = await this.relay(instance, target.chatId, { kind: 'edit', targetMessageId: target.messageId, text: body.text }, 'EditMessage', body);
    // Recorded as the network path records an edit (the captures' meaning of `edited`: a message id):
    // the original shows the new text and names the edit. Written now so the answer and listings
    // agree at once; the worker writes the same when the sent edit comes back as our own message, and
    // emits the one messages_update `Edited` there (for API and phone edits alike).
    await this.messages.applyEdit(instance.id, target.messageId, {
      text: body.text,
      content: record.content,
      editId: String(record.messageid),
    });
    return {
      id: target.id,
      messageid: target.messageId,
      content: record.content,
      messageTimestamp: record.messageTimestamp,
      messageType: target.messageType,
      status: record.status,
      owner: instance.owner,
    };
  }

  async remove(instance: RequestInstance, body: DeleteDto): Promise<MessageDeletedResponse> {
    const target = await this.find(instance, body.id);
    await this.relay(instance, target.chatId, { kind: 'delete', targetMessageId: target.messageId }, 'DeleteMessage', body);
    await this.changeOriginal(instance, target, (tx) => this.messages.within(tx).markDeleted(instance.id, target.messageId), 'Deleted');
    return { timestamp: Date.now(), id: target.id };
  }

  async pin(instance: RequestInstance, body: PinDto): Promise<MessagePinnedResponse> {
    const target = await this.find(instance, body.id);
    if (target.chatId.endsWith('@newsletter')) throw ApiError.badRequest('message pinning not supported for newsletters');
    const pin = body.pin !== false;
    const days = typeof body.duration === 'number' && PIN_DAYS.has(body.duration) ? body.duration : 30;
    let record: SendReply;
    try {
      record = await this.relay(
        instance,
        target.chatId,
        { kind: 'pin', targetMessageId: target.messageId, pin, durationSeconds: days * 86_400 },
        'PinMessage',
        { ...body, duration: pin ? days : undefined },
      );
    } catch (error) {
      if (error instanceof ApiError) throw error;
      if ((error as { code?: string }).code === 'no_session' || (error as { code?: string }).code === 'timeout') throw error;
      throw ApiError.badRequest(`error pinning message: ${(error as Error).message}`);
    }
    await this.changeOriginal(instance, target, (tx) => this.messages.within(tx).setPinned(instance.id, target.messageId, pin), pin ? 'Pinned' : 'Unpinned');
    return {
      id: `${instance.owner}:${record.messageid}`,
      messageid: record.messageid,
      chatid: target.chatId,
      sender: record.sender,
      senderName: record.senderName,
      isGroup: target.isGroup,
      fromMe: true,
      content: record.content,
      messageType: 'PinInChatMessage',
      source: record.source,
      messageTimestamp: record.messageTimestamp,
      status: record.status === 'Sent' ? 'Pending' : record.status,
      text: '',
      quoted: '',
      edited: '',
      reaction: PIN_EMOJI,
      convertOptions: '',
      owner: instance.owner,
      targetMessageID: target.messageId,
      pinned: pin,
    };
  }

  private async relay(instance: RequestInstance, chatJid: string, content: OutboundContent, sendFunction: string, payload: object): Promise<SendReply> {
    const request: SendRequest = {
      instanceId: instance.id,
      ...newMessageIds(),
      chatJid,
      content,
      record: { sendFunction, sendPayload: { ...payload }, trackSource: '', trackId: '', sendFolderId: '' },
    };
    const record = await this.sessions.request(instance.id, 'send', request, 30_000);
    if (record.status === 'Failed') throw ApiError.refused(record);
    return record;
  }

  /** Changes the original message and records the `messages_update` event, in one transaction. */
  private async changeOriginal(
    instance: RequestInstance,
    target: MessageRow,
    change: (tx: Tx) => Promise<unknown>,
    type: 'Pinned' | 'Unpinned' | 'Deleted' | 'Edited',
  ): Promise<void> {
    const lastId = await this.unitOfWork.transaction(async (tx) => {
      await change(tx);
      // The one messages_update builder, as the worker's receipts and revokes use (strings for IsGroup and Timestamp).
      const payload = messagesUpdatePayload({
        messageIds: [target.messageId],
        chat: target.chatId,
        sender: { jid: target.sender, pn: target.senderPn, lid: target.senderLid },
        fromMe: target.fromMe,
        isGroup: target.isGroup,
        type,
        state: type,
        timestamp: Date.now() / 1000,
        instanceName: instance.name,
        owner: instance.owner,
      });
      return this.outbox.within(tx).insert(instance.id, [{ eventType: 'messages_update', chatId: target.chatId, payload }]);
    });
    if (lastId) this.bus.publish(Subjects.outbox(instance.id), { instanceId: instance.id, lastId });
  }

  /** POST /message/markread: read receipts for messages by id. */
  async markRead(instance: RequestInstance, dto: MarkReadDto): Promise<MarkReadResponse> {
    const ids = dto.id;
    const results: MarkReadResult[] = [];
    const found: MessageRow[] = [];
    // One statement for the whole list, then each id is answered from what it found.
    const rows = await this.messages.findMany(instance.id, [...new Set(ids.map(normaliseMessageId))]);
    for (const id of ids) {
      const key = normaliseMessageId(id);
      const row = rows.find((candidate) => candidate.messageId === key) ?? rows.find((candidate) => candidate.id === key);
      if (!row) results.push({ message_id: id, status: 'error', error: 'Message not found' });
      else if (row.fromMe) results.push({ message_id: id, status: 'error', error: 'a message sent by this instance cannot be marked read' });
      else found.push(row);
    }
    if (found.length) {
      await this.sessions.request(instance.id, 'read', {
        instanceId: instance.id,
        keys: found.map((row) => ({ remoteJid: row.chatId, id: row.messageId, participant: row.isGroup ? row.sender : undefined })),
      });
      for (const row of found) results.push({ message_id: row.messageId, status: 'success' });
    }
    return { results };
  }
}
