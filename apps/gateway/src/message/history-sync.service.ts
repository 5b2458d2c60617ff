import { Injectable } from '@nestjs/common';
import type { HistoryOnDemandRequest } from '@gw/contracts';
import { parseChatTarget } from '@gw/domain';
import { MessageRepository, type MessageRow } from '@gw/persistence';
import { ApiError } from '../common/api-error';
import { SessionClient } from '../session/session.client';
import type { HistorySyncDto } from './dto/message-actions.dto';
import type { HistorySyncResponse } from './dto/message.response';
import { normaliseMessageId } from '../common/message-id';
import type { RequestInstance } from '../common/request-instance';

const DEFAULT_COUNT = 50;
const MAX_COUNT = 100;
/** A placeholder resend waits ~2 s in Baileys before it asks the phone. */
const REQUEST_TIMEOUT_MS = 20_000;

type HistoryKey = HistoryOnDemandRequest['key'];

/**
 * `POST /message/history-sync`: asks the phone for older messages of a chat (`history`, before an
 * anchor message) or for one message again (`exact`). The phone answers later; what arrives is stored
 * and announced as `history` events carrying the request's id (both modes), and found by `/message/find`.
 */
@Injectable()
export class HistorySyncService {
  constructor(
    private readonly messages: MessageRepository,
    private readonly sessions: SessionClient,
  ) {}

  async request(instance: RequestInstance, dto: HistorySyncDto): Promise<HistorySyncResponse> {
    const target = parseChatTarget(dto.number);
    if (!target) throw ApiError.badRequest('Invalid number: give the chat JID (or an international phone number)');
    if (target.kind === 'newsletter') throw ApiError.badRequest('history sync is not available for newsletters');
    // The DTO allows history, exact (any case, blanks around) or nothing.
    const mode = (dto.mode ?? '').trim().toLowerCase() === 'exact' ? 'exact' : 'history';
    const messageId = dto.messageid?.trim() ? normaliseMessageId(dto.messageid) : '';

    if (mode === 'exact') {
      if (!messageId) throw ApiError.badRequest('messageid is required for mode=exact');
      const row = await this.inChat(instance, target.jid, messageId);
      // Known locally: its exact key; else the best guess (a message received in this chat).
      const key = row ? keyOf(row) : { remoteJid: target.jid, fromMe: false, id: messageId };
      const { requestId } = await this.ask(instance, { instanceId: instance.id, mode, key, timestampMs: row?.messageTimestamp ?? 0, count: 1 });
      return {
        success: true,
        mode,
        message: 'Exact message reload request sent. The message will be received if available.',
        details: { request_id: requestId, chatid: target.jid, messageid: messageId, known_locally: row !== null },
      };
    }

    const count = this.count(dto.count);
    let anchor: MessageRow | null;
    if (messageId) {
      anchor = await this.inChat(instance, target.jid, messageId);
      if (!anchor) throw ApiError.badRequest('messageid: no message with that id is stored for this chat (the anchor must be known)');
    } else {
      // The oldest message stored for the chat: history is asked from there backwards.
      anchor = (await this.messages.find(instance.id, { chatId: target.jid, ascending: true, limit: 1, offset: 0 })).rows[0] ?? null;
      if (!anchor) throw ApiError.badRequest('no message of this chat is stored to start from: give messageid');
    }
    const { requestId } = await this.ask(instance, { instanceId: instance.id, mode, key: keyOf(anchor), timestampMs: anchor.messageTimestamp, count });
    return {
      success: true,
      mode,
      message: 'History sync request sent. Messages will be received as history sync events.',
      details: { request_id: requestId, chatid: target.jid, anchor_messageid: anchor.messageId, anchor_timestamp: anchor.messageTimestamp, count },
    };
  }

  private count(value: unknown): number {
    if (value === undefined || value === null || value === '') return DEFAULT_COUNT;
    const number = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
    if (!Number.isInteger(number) || number < 1 || number > MAX_COUNT) throw ApiError.badRequest(`count must be an integer from 1 to ${MAX_COUNT}`);
    return number;
  }

  /** A stored message of this chat (by our id or the provider's), or null. */
  private async inChat(instance: RequestInstance, chatJid: string, id: string): Promise<MessageRow | null> {
    const row = await this.messages.findOne(instance.id, id);
    return row && (row.chatId === chatJid || row.chatLid === chatJid) ? row : null;
  }

  private ask(instance: RequestInstance, request: HistoryOnDemandRequest) {
    return this.sessions.request(instance.id, 'history.request', request, REQUEST_TIMEOUT_MS);
  }
}

/** The key the phone knows the message by: the one Baileys stored with it when there is one. */
function keyOf(row: MessageRow): HistoryKey {
  if (row.raw) {
    try {
      const key = (JSON.parse(row.raw) as { key?: { remoteJid?: string; fromMe?: boolean; id?: string; participant?: string } }).key;
      if (key?.remoteJid && key.id)
        return { remoteJid: key.remoteJid, fromMe: key.fromMe === true, id: key.id, ...(key.participant ? { participant: key.participant } : {}) };
    } catch {
      // an unreadable raw copy: fall back to the row's own fields
    }
  }
  return {
    remoteJid: row.chatLid || row.chatId,
    fromMe: row.fromMe,
    id: row.messageId,
    ...(row.isGroup && !row.fromMe && row.sender ? { participant: row.sender } : {}),
  };
}
