import { Injectable } from '@nestjs/common';
import { parseChatTarget } from '@gw/domain';
import { MessageRepository, type MessageRow } from '@gw/persistence';
import { ApiError } from '../common/api-error';
import { SessionClient } from '../session/session.client';
import type { CallMakeDto, CallRejectDto } from './dto/call.dto';
import type { CallMadeResponse, CallRejectedResponse } from './dto/call.response';
import type { RequestInstance } from '../common/request-instance';

/** How long an offer may still ring: WhatsApp gives up on an unanswered call after about a minute. */
export const RINGING_WINDOW_MS = 90_000;
/** How many of the newest stored calls a rejection looks through. */
const RECENT_CALLS = 50;

const isRinging = (row: MessageRow, now: number) =>
  (row.content as { status?: unknown } | null)?.status === 'offer' && now - Number(row.messageTimestamp) <= RINGING_WINDOW_MS;

/**
 * `/call/make` places a call that only rings (uazapi's: no media flows, and the contact hears nothing
 * if it answers); `call_duration` hangs it up after that many seconds. `/call/reject` turns down an
 * incoming call: the one named by `id`, else the newest still ringing from `number`, else the newest
 * still ringing of all. Incoming calls are the stored `call` messages the `call` events came with.
 */
@Injectable()
export class CallService {
  constructor(
    private readonly sessions: SessionClient,
    private readonly messages: MessageRepository,
  ) {}

  async make(instance: RequestInstance, dto: CallMakeDto): Promise<CallMadeResponse> {
    const target = parseChatTarget(dto.number);
    if (!target || target.kind !== 'user') throw ApiError.badRequest('invalid number JID');
    const { callId } = await this.sessions.request(instance.id, 'call.offer', {
      instanceId: instance.id,
      jid: target.jid,
      video: dto.video === true,
      durationSeconds: dto.call_duration ?? 0,
    });
    return { response: 'Call successful', callId, number: target.jid, ...(dto.call_duration ? { call_duration: dto.call_duration } : {}) };
  }

  async reject(instance: RequestInstance, dto: CallRejectDto): Promise<CallRejectedResponse> {
    const number = dto.number?.trim() ? parseChatTarget(dto.number) : null;
    if (dto.number?.trim() && (!number || (number.kind !== 'user' && number.kind !== 'lid'))) throw ApiError.badRequest('invalid number');
    const now = Date.now();
    const { rows } = await this.messages.find(instance.id, { messageType: 'call', fromMe: false, limit: RECENT_CALLS, offset: 0 });
    const fromNumber = (row: MessageRow) => !number || [row.chatId, row.chatLid, row.senderPn, row.senderLid, row.sender].includes(number.jid);
    const call = dto.id?.trim()
      ? rows.find((row) => row.messageId === dto.id!.trim() && fromNumber(row))
      : rows.find((row) => fromNumber(row) && isRinging(row, now));
    if (!call) throw ApiError.notFound(dto.id ? `call not found: ${dto.id}` : number ? `no ringing call from ${number.jid}` : 'no ringing call to reject');
    const status = String((call.content as { status?: unknown } | null)?.status ?? '');
    if (!isRinging(call, now)) throw ApiError.conflict(`the call is no longer ringing (${status === 'offer' ? 'timed out' : status})`);
    await this.sessions.request(instance.id, 'call.reject', { instanceId: instance.id, callId: call.messageId, from: call.sender || call.chatId });
    return { response: 'Call rejected', id: call.messageId, number: call.senderPn || call.chatId };
  }
}
