import { Injectable } from '@nestjs/common';
import { ErrorCode, RpcError, type SendReply, type SendRequest } from '@gw/contracts';
import { parseChatTarget } from '@gw/domain';
import { databaseUnavailable, InstanceRepository, MessageRepository, toMessageRecord } from '@gw/persistence';
import { activeTraceparent } from '@gw/platform';
import { ApiError } from '../common/api-error';
import type { SendOutcome } from '../common/dto/message.response';
import { normaliseMessageId } from '../common/message-id';
import { AsyncQueueService } from '../message/async/async-queue.service';
import { SessionClient } from '../session/session.client';
import type { BuiltContent } from './content-builders';
import type { SendCommonDto } from './dto/send-common.dto';
import { newMessageIds } from './message-ids';
import { sendRecord } from './send-payload';
import type { RequestInstance } from '../common/request-instance';

/**
 * What a refused send answers, per endpoint (the spec's Errors: "failed to send location", "failed to
 * send payment request"; the others as the upstream API names them), followed by WhatsApp's reason.
 * Text and media keep WhatsApp's own reason alone, as the upstream API does.
 */
const FAILURE_BY_FUNCTION: Record<string, string> = {
  SendLocationButton: 'failed to send location',
  SendLocationMessage: 'failed to send location',
  SendRequestPayment: 'failed to send payment request',
  SendPixButton: 'failed to send PIX button',
  SendMenuMessage: 'failed to send menu',
  SendCarouselMessage: 'failed to send carousel',
  SendContactMessage: 'failed to send contact card',
};

/**
 * A sync send is begun by the worker within this long of its accept (plus its typing delay), or never
 * (SendRequest.notAfter); the gateway waits SYNC_SEND_WAIT_MS, so a send begun at the last moment has
 * that much longer to be stored, relayed and acked before the caller is answered from the ledger.
 */
const SYNC_SEND_BEGIN_WITHIN_MS = 20_000;
const SYNC_SEND_WAIT_MS = 30_000;
/** Reads of the ledger after a sync send's timeout while the database does not answer (1 + 2 + 3 + 4 s apart). */
const LEDGER_READ_ATTEMPTS = 5;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The last step of every send endpoint: the request with the common fields and the ids fixed at
 * accept, then either the async queue (durable before the 200) or the worker holding the instance,
 * and the Message record plus `response` as the answer.
 */
@Injectable()
export class SendRequester {
  constructor(
    private readonly sessions: SessionClient,
    private readonly asyncQueue: AsyncQueueService,
    private readonly instances: InstanceRepository,
    private readonly messages: MessageRepository,
  ) {}

  async send(
    instance: RequestInstance,
    common: SendCommonDto,
    chatJid: string,
    built: BuiltContent,
    /** Request fields of one kind of send (a status' recipients). */
    extra: Pick<SendRequest, 'status'> = {},
  ): Promise<SendReply & { response: SendOutcome }> {
    // Refused before anything is queued (the queue would hold it until somebody wakes the instance). The
    // instance may be a cached copy of the last seconds: a wake since then is read before refusing.
    if (instance.status === 'hibernated' && (await this.instances.findById(instance.id))?.status === 'hibernated') throw ApiError.hibernated();
    const responseExtra = built.responseExtra ?? {};
    const request: SendRequest = {
      instanceId: instance.id,
      ...newMessageIds(),
      chatJid,
      content: built.content,
      quotedId: common.replyid?.trim() ? normaliseMessageId(common.replyid) : undefined,
      mentions: mentionJids(common.mentions),
      mentionAll: common.mentions?.trim() === 'all',
      forwarded: common.forward === true,
      delayMs: common.delay ?? 0,
      readChat: common.readchat === true,
      readMessages: common.readmessages === true,
      record: sendRecord(built, common.track_source ?? '', common.track_id ?? ''),
      ...extra,
    };
    if (common.async) {
      // Durable before the 200 (messages row `Queued` + queue row); the dispatcher sends it, paced.
      // Tracing on: the dispatcher's send later continues this request's trace (its traceparent, stored with the request).
      const traceparent = activeTraceparent();
      const queued = await this.asyncQueue
        .enqueue(instance, traceparent ? { ...request, traceparent } : request)
        .catch((error: unknown) => this.afterFailedEnqueue(error, instance, request.messageId));
      return { ...queued, response: { status: 'success', message: 'Message queued successfully', ...responseExtra } };
    }
    const delayMs = request.delayMs ?? 0;
    const notAfter = Date.now() + SYNC_SEND_BEGIN_WITHIN_MS + delayMs;
    // The message id is fixed above, so a try that reaches the heir after a takeover cannot send twice.
    const record = await this.sessions
      .requestAcrossTakeover(instance.id, 'send', { ...request, notAfter }, SYNC_SEND_WAIT_MS + delayMs)
      .catch((error: unknown) => this.afterTimeout(error, instance, request.messageId, notAfter));
    if (record.status === 'Failed') throw ApiError.refused(record, FAILURE_BY_FUNCTION[built.sendFunction]);
    return { ...record, response: { status: 'success', message: 'Message sent successfully', ...responseExtra } };
  }

  /**
   * The worker did not answer a sync send in time (a saturated worker, a lost bus server): the ledger
   * says what became of it, once the worker can no longer begin it. Begun: its row (Pending until
   * WhatsApp's ack, relayed again with its id if need be). Not begun: 504 saying it was not sent, and
   * it never will be — the client may send it again without a duplicate.
   */
  private async afterTimeout(error: unknown, instance: RequestInstance, messageId: string, notAfter: number): Promise<SendReply> {
    if (!(error instanceof RpcError) || error.code !== ErrorCode.Timeout) throw error;
    await sleep(Math.max(0, notAfter + 2_000 - Date.now()));
    const row = await this.readLedger(instance.id, messageId);
    if (row === undefined)
      // Neither the worker nor the ledger can say: a "try again" would risk a duplicate, so the answer says how to find out.
      throw new ApiError(
        'timeout',
        'Session worker did not answer in time and the database is out of reach: whether the message was sent is not known; look it up by its messageid before sending it again',
        { messageid: messageId },
      );
    if (row) return toMessageRecord(row, instance.owner);
    throw new ApiError('timeout', 'Session worker did not answer in time: the message was not sent and will not be; it can be sent again');
  }

  /**
   * The database went away while an async send was being queued (a failover): the connection may have
   * dropped after the commit reached the server, and the dispatcher will then send it. The ledger says
   * which, once the database answers again: queued, it is answered as queued; not queued, the error
   * stands (503, try again: nothing was written); still no database, the answer says how to find out
   * instead of a "try again" that could send it twice (bench/cluster pg: 16 sends answered 503 were delivered).
   */
  private async afterFailedEnqueue(error: unknown, instance: RequestInstance, messageId: string): Promise<SendReply> {
    if (!databaseUnavailable(error)) throw error;
    const row = await this.readLedger(instance.id, messageId);
    if (row) return toMessageRecord(row, instance.owner);
    if (row === null) throw error;
    throw new ApiError(
      'timeout',
      'The database went out of reach while the send was being queued: whether it was queued is not known; look it up by its messageid before sending it again',
      { messageid: messageId },
    );
  }

  /** The send's row (null: none), waiting out a database that does not answer for a few seconds (undefined: still none to ask). */
  private async readLedger(instanceId: string, messageId: string) {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.messages.findOne(instanceId, messageId);
      } catch (error) {
        if (!databaseUnavailable(error)) throw error;
        if (attempt >= LEDGER_READ_ATTEMPTS) return undefined;
        await sleep(1_000 * attempt);
      }
    }
  }
}

/** `mentions`: comma-separated phone numbers (`all` mentions everyone, handled apart). */
function mentionJids(mentions: string | undefined): string[] {
  if (!mentions || mentions.trim() === 'all') return [];
  return mentions
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      const parsed = parseChatTarget(entry);
      if (!parsed || parsed.kind === 'group' || parsed.kind === 'newsletter') throw ApiError.badRequest(`mentions: "${entry}" is not a phone number`);
      return parsed.jid;
    });
}
