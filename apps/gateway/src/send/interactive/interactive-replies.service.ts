import { Injectable } from '@nestjs/common';
import {
  buildOptionReply,
  buildPollVote,
  InteractiveError,
  interactiveOriginal,
  normalizeUserJid,
  pollVoteNodes,
  selectOption,
  selectPollOption,
  type InteractiveOriginal,
  type ProtoMessage,
} from '@gw/domain';
import { MessageRepository, type MessageRow } from '@gw/persistence';
import { ApiError } from '../../common/api-error';
import { normaliseMessageId } from '../../common/message-id';
import type { SendTextDto } from '../dto/send-common.dto';
import { SendRequester } from '../send-requester';
import type { SentMessageResponse } from '../../common/dto/message.response';
import type { RequestInstance } from '../../common/request-instance';

/**
 * Interactive replies of `POST /send/text` (spec rules 3 and 4): with `replyid` and a text starting
 * with `>`, the reply selects an option of the original poll, list or buttons message and is sent as
 * the matching response message (vote, list response, button response).
 */
@Injectable()
export class InteractiveRepliesService {
  constructor(
    private readonly messages: MessageRepository,
    private readonly requester: SendRequester,
  ) {}

  /** The sent reply's record, or null when the request is not an interactive reply (plain text then). */
  async tryReply(instance: RequestInstance, chatJid: string, dto: SendTextDto): Promise<SentMessageResponse | null> {
    const text = dto.text.trimStart();
    if (!dto.replyid || !text.startsWith('>')) return null;
    const selector = text.slice(1).trim();
    if (!selector) throw ApiError.badRequest('interactive reply: give the option after ">" (a position, an id or the option text)');

    const row = await this.messages.findOne(instance.id, normaliseMessageId(dto.replyid));
    if (!row) throw ApiError.badRequest(`interactive reply: original message ${dto.replyid} is not available in this instance's history`);
    if (row.chatId !== chatJid && row.chatLid !== chatJid)
      throw ApiError.badRequest(`interactive reply: message ${dto.replyid} belongs to another chat (${row.chatId})`);

    const { message, fromRaw } = storedMessage(row);
    const original = interactiveOriginal(message);
    if (!original) {
      // Not a poll, list or buttons message: the text goes out as a plain reply quoting it.
      if (!message) throw ApiError.badRequest(`interactive reply: the content of message ${dto.replyid} is not available`);
      return null;
    }
    const own = ownJids(instance);
    const built = this.reply(original, selector, row, chatJid, own, fromRaw ? message : null);
    return this.requester.send(instance, dto, chatJid, { content: { kind: 'proto', ...built }, sendFunction: 'SendTextMessage', payload: { ...dto, text } });
  }

  private reply(
    original: InteractiveOriginal,
    selector: string,
    row: MessageRow,
    chatJid: string,
    own: { pn: string; lid: string },
    rawMessage: ProtoMessage | null,
  ) {
    try {
      if (original.kind === 'poll') {
        if (!original.secret || original.secret.length !== 32)
          throw new InteractiveError('interactive reply: the poll secret of this message is not stored, the vote cannot be encrypted');
        const index = selectPollOption(original.options, selector);
        const useLid = chatJid.endsWith('@lid') && own.lid !== '';
        const voterJid = useLid ? own.lid : own.pn;
        const pollCreatorJid = row.fromMe ? voterJid : (useLid ? row.senderLid : row.senderPn) || row.sender || row.chatId;
        const vote = buildPollVote([original.options[index]], {
          secret: original.secret,
          pollMsgId: row.messageId,
          pollCreatorJid,
          voterJid,
          chatJid: row.chatId,
          fromMe: row.fromMe,
          participant: row.isGroup && !row.fromMe ? row.sender : undefined,
        });
        return { ...vote, nodes: pollVoteNodes() };
      }
      const option = selectOption(original.options, selector, original.kind === 'list' ? 'list' : 'buttons');
      const participant = row.fromMe ? own.pn : row.isGroup ? row.sender : row.senderPn || row.chatId;
      const quotedMessage = rawMessage ? (jsonSafe(stripContext(rawMessage)) as Record<string, unknown>) : undefined;
      return { ...buildOptionReply(original.kind, option, { stanzaId: row.messageId, participant, quotedMessage }), nodes: [] };
    } catch (error) {
      if (error instanceof InteractiveError)
        throw ApiError.badRequest(error.message.startsWith('interactive reply') ? error.message : `interactive reply: ${error.message}`);
      throw error;
    }
  }
}

function ownJids(instance: RequestInstance): { pn: string; lid: string } {
  const pn = instance.jid ? normalizeUserJid(instance.jid) : instance.owner ? `${instance.owner}@s.whatsapp.net` : '';
  return { pn, lid: instance.lid ? normalizeUserJid(instance.lid) : '' };
}

/**
 * The original as a WAProto message: the whole stored WAMessage (`raw`, BufferJSON) when the inbound
 * pipeline kept it, else `{<field>: content}` rebuilt from the record (Go-style names, read case-insensitively).
 */
function storedMessage(row: MessageRow): { message: ProtoMessage | null; fromRaw: boolean } {
  if (row.raw) {
    try {
      const stored = JSON.parse(row.raw) as { message?: ProtoMessage };
      if (stored.message && typeof stored.message === 'object') return { message: stored.message, fromRaw: true };
    } catch {
      // fall back to the record's content
    }
  }
  if (row.content && typeof row.content === 'object' && row.messageType && row.messageType !== 'Unknown') {
    const field = row.messageType[0].toLowerCase() + row.messageType.slice(1);
    return { message: { [field]: row.content }, fromRaw: false };
  }
  return { message: null, fromRaw: false };
}

/** The quoted copy carries no device or secret context. */
function stripContext(message: ProtoMessage): ProtoMessage {
  const { messageContextInfo: _context, ...rest } = message;
  return rest;
}

/** BufferJSON buffers (`{type:'Buffer', data}`) and byte arrays as base64, which `fromObject` accepts. */
function jsonSafe(value: unknown): unknown {
  if (value === null || value === undefined) return value;
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  if (Array.isArray(value)) return value.map(jsonSafe);
  if (typeof value === 'object') {
    const object = value as Record<string, unknown>;
    if (object.type === 'Buffer' && 'data' in object) {
      return typeof object.data === 'string' ? object.data : Buffer.from(object.data as number[]).toString('base64');
    }
    const result: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(object)) result[key] = jsonSafe(child);
    return result;
  }
  return value;
}
