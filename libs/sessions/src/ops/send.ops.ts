import { ErrorCode, RpcError, type SendReply, type SendRequest } from '@gw/contracts';
import { type ChatRepository, databaseUnavailable, type MessageRow, type RecordRow, type SendLimitRepository } from '@gw/persistence';
import { type Logger, metrics, type SendOutcome } from '@gw/platform';
import { proto, type WAMessage, type WASocket } from '@whiskeysockets/baileys';
import type { SessionWorkerConfig } from '../config/session-worker.config';
import type { Party } from '../messaging/identity-resolver';
import type { InboundMessageObserver } from '../messaging/inbound-message.observer';
import type { Session } from '../session/session';
import { type AckOutcome, waitForAck } from '../outbound/ack-waiter';
import { AwaitedAcks } from '../outbound/awaited-acks';
import { GROUP_NOT_FOUND, isUnknownGroup } from '../outbound/refusal';
import { isConnectionLoss, resendOptions } from '../outbound/resend';
import { SendsInFlight } from '../outbound/unacked-sends';
import type { BuiltSend, SendContentBuilder } from '../outbound/send-content';
import { SendLedger } from '../outbound/send-ledger';
import { statusAudience } from '../outbound/status-audience';
import { chatTimers, withExpiration } from '../outbound/chat-timers';
import { limitOfRefusal, limitText, refusedByEndedCap } from '../outbound/send-limits';
import { MAX_DELAY_MS } from './delays';
import type { OpHandler, OpHandlers, OpRequestParsers } from './op-handler';

/** Who a failed send's `messages_update` names as its chat party (the JID as addressed: phone number, LID or group). */
function chatParty(chatJid: string): Party {
  if (chatJid.endsWith('@lid')) return { jid: chatJid, pn: '', lid: chatJid };
  if (chatJid.endsWith('@s.whatsapp.net')) return { jid: chatJid, pn: chatJid, lid: '' };
  return { jid: chatJid, pn: '', lid: '' };
}

/** The ops of the gateway's `send/` area. */
export type SendOps = 'send';

export interface SendOpsDependencies {
  ledger: SendLedger;
  builder: SendContentBuilder;
  chats: ChatRepository;
  /** WhatsApp's limits on new chats (a 463/475 refusal records the one WhatsApp reports). */
  limits?: SendLimitRepository;
  logger: Logger;
  /** How long a send waits for its ack, and for a new socket when its connection went away. */
  config: Pick<SessionWorkerConfig, 'sendAckTimeoutMs' | 'sendReconnectWaitMs'>;
  /** Writes a send's Failed with its `messages_update` event, in one transaction (without it: the status alone). */
  inbound?: Pick<InboundMessageObserver, 'failSend'>;
}

/** Sends of one request again on a new socket after the connection went away under it. */
const MAX_RESENDS = 3;

/**
 * How long an acked send waits for the database to write its `Sent` (a Postgres failover: the standby
 * promoted ~20 s after the primary is lost). The message went out: answering an error instead would
 * have its client send it again (bench/cluster: 31 sync sends answered 500 that reached the phone).
 */
const SENT_WRITE_WAIT_MS = 30_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A send this long is logged with where its time went (`a slow send`, info). */
const SLOW_SEND_MS = 1_000;

/**
 * The steps of a send, each named by the time to its end from the previous one: the socket (an instance
 * arriving from another worker waits for its open), the content built, the row reserved, the message
 * relayed (devices looked up, Signal sessions asserted, encrypted, written; a typing delay before it is
 * counted here too), the server's ack. A phase done again (a resend on a new socket) adds up. The rest
 * of the time (`restMs`) is the result's write and the answer.
 */
type SendPhase = 'socketMs' | 'buildMs' | 'reserveMs' | 'relayMs' | 'ackMs';

function phaseTimes(started: number, marks: ReadonlyArray<[SendPhase, number]>): Partial<Record<SendPhase | 'restMs', number>> {
  const times: Partial<Record<SendPhase | 'restMs', number>> = {};
  let previous = started;
  for (const [phase, at] of marks) {
    times[phase] = Math.round((times[phase] ?? 0) + at - previous);
    previous = at;
  }
  times.restMs = Math.round(performance.now() - previous);
  return times;
}

export const sendRequests = {
  send: (raw, instanceId) => {
    if (!raw.messageId || !raw.recordId || !raw.chatJid || !raw.content) throw new RpcError(ErrorCode.BadRequest, 'malformed send request');
    // The content itself was built and validated by the gateway (or the async queue it filled).
    return { ...(raw as Partial<SendRequest>), instanceId } as SendRequest;
  },
} satisfies OpRequestParsers<SendOps>;

/**
 * The `send` op of the worker: a message is reserved in the store under the
 * lease, marked relayed just before it goes out, relayed through Baileys, and answered once the server
 * acked it (Sent) or refused it (Failed). A message id that was relayed once is never relayed again.
 */
/** A send's mark as the one relaying its message in this process (SendsInFlight.relayMark). */
type RelayMark = ReturnType<typeof SendsInFlight.relayMark>;

export function sendOps({ ledger, builder, chats, limits, logger, config, inbound }: SendOpsDependencies): OpHandlers<SendOps> {
  /**
   * An accepted send ends Failed: the status with its reason and its `messages_update` event, written
   * together (issue 34: every Failed send is announced, whichever path failed it, and once).
   */
  const fail = async (session: Session, request: SendRequest, owner: string, error: string): Promise<RecordRow> => {
    if (!inbound) return ledger.result(session.lease, request, { status: 'Failed', error });
    const who = { instanceName: session.instance.name, owner: session.instance.owner || owner };
    const row = await inbound.failSend(session.lease, { messageId: request.messageId, chat: chatParty(request.chatJid), error, who });
    if (!row) throw new Error(`message ${request.messageId} is not stored`);
    return row;
  };
  /**
   * A row relayed by a send that is gone without storing its copy or result: Pending, no copy, and no
   * send here relaying it. Only the lease holder reserves, and a message leaves only after its
   * key commit under the lease (ADR 0069), so that send was this worker's and ended, or a dead holder's.
   */
  const cutOff = (request: SendRequest, row: MessageRow): boolean =>
    row.status === 'Pending' && !row.raw && !SendsInFlight.isRelaying(request.instanceId, request.messageId);
  // Every send, sync or from the async queue, counted by content type and outcome, and timed.
  const send: OpHandler<'send'> = async (session, request) => {
    const started = performance.now();
    const type = request.status ? 'status' : request.content.kind;
    let outcome: SendOutcome = 'error';
    // The unacked sweep leaves this message alone while this send is at it.
    const leave = SendsInFlight.enter(request.instanceId, request.messageId);
    const marks: Array<[SendPhase, number]> = [];
    const relaying = SendsInFlight.relayMark(request.instanceId, request.messageId);
    try {
      const record = await sendOnce(session, request, (phase) => marks.push([phase, performance.now()]), relaying);
      // Pending: no server ack in time; a repeat of an id sent before answers its later state (Delivered, Read…).
      outcome = record.status === 'Failed' ? 'failed' : record.status === 'Pending' || record.status === '' ? 'pending' : 'sent';
      return record;
    } finally {
      relaying.release();
      leave();
      const took = performance.now() - started;
      metrics().recordSend(type, outcome, took / 1000, request.instanceId);
      // Where a slow send's time went (bench/cluster reads these at info: the first sends of an instance
      // that arrived in a hand-over).
      if (took >= SLOW_SEND_MS)
        logger.info(
          { instanceId: request.instanceId, messageId: request.messageId, outcome, ms: Math.round(took), ...phaseTimes(started, marks) },
          'a slow send',
        );
    }
  };
  const sendOnce = async (session: Session, request: SendRequest, mark: (phase: SendPhase) => void, relaying: RelayMark): Promise<SendReply> => {
    // An instance arriving from another worker (a drain's hand-over): the send waits for its socket.
    const socket = await session.openSocketOnArrival().catch(async (error: unknown) => {
      // No socket, but this id went out before (the gateway trying again after a lost answer, a takeover):
      // it may have arrived, so the ledger answers — never "not connected", which reads "not sent"
      // (bench/cluster pg: 3 sends answered 409 that were delivered).
      const before = isConnectionLoss(error) ? await ledger.relayedBefore(request.instanceId, request.messageId).catch(() => null) : null;
      if (before) return before;
      throw error;
    });
    if (!('ws' in socket)) return SendLedger.record(socket, session.instance.owner);
    mark('socketMs');
    const owner = (socket.user?.id ?? '').split(':')[0].split('@')[0];
    // A status goes to the recipients WhatsApp knows; checked before anything is stored.
    const audience = request.status ? await statusAudience(socket, request.status.recipients) : null;
    if (request.content.kind === 'media' || (request.content.kind === 'proto' && request.content.attachments?.length)) {
      // An upload is not repeated for an id that went out before (unless that send was cut off: below).
      const before = await ledger.relayedBefore(request.instanceId, request.messageId);
      if (before && !cutOff(request, before)) return SendLedger.record(before, owner);
    }

    const built = await builder.build(socket, request);
    mark('buildMs');
    // Stored only once the message could be built (a missing quote stores nothing), and marked relayed
    // in the same statement unless a typing delay comes first.
    let typing = Boolean(request.delayMs && request.delayMs > 0 && !request.status);
    // A sync send that reached us (or its socket) after its caller's deadline is not begun: the caller
    // answers from the ledger, and an absent row means "not sent" — it must stay true.
    if (request.notAfter !== undefined && Date.now() > request.notAfter) {
      const before = await ledger.relayedBefore(request.instanceId, request.messageId);
      if (before) return SendLedger.record(before, owner);
      throw new RpcError(ErrorCode.Timeout, 'not sent: the send could not begin before its caller stopped waiting');
    }
    let { alreadyRelayed } = await ledger.reserve(session.lease, request, owner, !typing);
    if (!alreadyRelayed && !typing) relaying.take();
    // The send that relayed this id was cut off before its copy or result was stored (its worker died:
    // this is the request again, after the takeover or from the queue). Nothing tells whether it left,
    // and nothing else can send it again: it goes again with its id (WhatsApp and the phones know a
    // message by its id), at once (no second typing delay), instead of ending "interrupted, not sent
    // again" at the heir's sweep. One request here takes it over; another at the same time answers the row.
    if (alreadyRelayed && cutOff(request, alreadyRelayed) && relaying.take()) {
      let reclaimed = false;
      try {
        reclaimed = await ledger.reclaimCutOff(session.lease, request);
      } finally {
        if (!reclaimed) relaying.release();
      }
      if (reclaimed) {
        logger.info(
          { instanceId: request.instanceId, messageId: request.messageId },
          'a send cut off before its copy was stored: sending it again with its id',
        );
        alreadyRelayed = null;
        typing = false;
      }
    }
    if (alreadyRelayed) return SendLedger.record(alreadyRelayed, owner);
    mark('reserveMs');
    if (typing) {
      // Any audio (ptt, myaudio or a plain audio file) shows "recording…"; everything else "typing…".
      const presence = request.content.kind === 'media' && (request.content.ptt || request.content.mediaType === 'audio') ? 'recording' : 'composing';
      await socket.sendPresenceUpdate(presence, request.chatJid).catch(() => undefined);
      await sleep(Math.min(request.delayMs ?? 0, MAX_DELAY_MS));
      await socket.sendPresenceUpdate('paused', request.chatJid).catch(() => undefined);
    }

    // Into a 1:1 chat with disappearing messages on, the message carries the chat's timer.
    const expiration = request.status
      ? 0
      : await chatTimers.of(
          request.instanceId,
          request.chatJid,
          async () => (await chats.findByJid(request.instanceId, request.chatJid))?.ephemeralExpiration ?? 0,
        );
    const statusOptions: { statusJidList?: string[]; backgroundColor?: string; font?: number } =
      request.status && audience
        ? {
            statusJidList: audience.recipients,
            // Baileys reads a colour only as hex text ("AARRGGBB"); a number is dropped.
            ...(request.status.backgroundArgb !== undefined ? { backgroundColor: (request.status.backgroundArgb >>> 0).toString(16).padStart(8, '0') } : {}),
            ...(request.status.font ? { font: request.status.font } : {}),
          }
        : {};
    if (typing) {
      // Another request with this id (a retry, a failover resend) may have come during the delay: only
      // the one that marks the id relayed sends it; the other answers with the stored row.
      const marked = await ledger.markRelayed(session.lease, request);
      if (marked.alreadyRelayed) return SendLedger.record(marked.alreadyRelayed, owner);
      relaying.take();
    }

    // The message as it went out, once it did: a resend after a lost connection relays these same
    // bytes with the same id (WhatsApp and the receiving clients know a message by its id).
    let relayed: proto.IMessage | null = null;
    let current = socket;
    let outcome: AckOutcome = 'timeout';
    for (let attempt = 0; ; attempt++) {
      const ack = waitForAck(current, request.messageId, config.sendAckTimeoutMs);
      try {
        if (relayed) await current.relayMessage(request.chatJid, relayed, resendOptions(relayed, request.messageId, statusOptions.statusJidList));
        else relayed = await relayFirst(current, request, built, expiration, statusOptions);
        mark('relayMs');
      } catch (error) {
        ack.cancel();
        // The connection went away under the send: the same message goes on the next socket.
        const next = isConnectionLoss(error) && attempt < MAX_RESENDS ? await session.whenOpen(config.sendReconnectWaitMs, current) : null;
        if (next) {
          current = next;
          continue;
        }
        if (isConnectionLoss(error) && relayed) {
          // It went out on an earlier socket that closed before the server's ack: it may have arrived, so a
          // lost connection never fails it (no "Failed but delivered"). Pending with its copy (kept below):
          // the unacked sweep relays it again with its id once a socket is open, or fails it with the reason.
          // Queued sends too: un-marking it relayed here left it Pending with no relay mark when the queue
          // had meanwhile completed its entry (its request timed out, the retry answered from the store),
          // which no sweep looks at — bench/chaos `stream-error-500`, an async send Pending for good.
          break;
        }
        if (isConnectionLoss(error) && request.queued) {
          // Never went out: the queue sends it again later with the same request (its attempts do not count a lost connection).
          await ledger.unrelay(session.lease, request);
          throw new RpcError(ErrorCode.NotConnected, `the connection to WhatsApp was lost before the message was sent: ${(error as Error).message}`);
        }
        // Baileys fetches a group's metadata to send to it: a group WhatsApp does not show us is the
        // client's mistake (a 404, and PERMANENT for the async queue), not WhatsApp refusing the message.
        const unknownGroup = isUnknownGroup(request.chatJid, error);
        const row = await fail(
          session,
          request,
          owner,
          unknownGroup
            ? GROUP_NOT_FOUND
            : isConnectionLoss(error)
              ? // Never written to WhatsApp: a sync caller may send it again without a duplicate (docs/guarantees.md).
                `the connection to WhatsApp was lost before the message was sent and ${attempt >= MAX_RESENDS ? `lost again on ${attempt} new connections` : `was not back within ${Math.round(config.sendReconnectWaitMs / 1000)} s`}: not sent (${(error as Error).message})`
              : `failed to send: ${(error as Error).message}`,
        );
        if (unknownGroup) throw new RpcError(ErrorCode.NotFound, GROUP_NOT_FOUND);
        return SendLedger.record(row, owner);
      }
      outcome = await ack.result;
      mark('ackMs');
      if (attempt >= MAX_RESENDS) break;
      if (outcome === 'closed') {
        // Written to a socket that closed before the server acked it: maybe never received. Again on the
        // next socket; if none opens in time, the unacked sweep resends it later.
        const next = await session.whenOpen(config.sendReconnectWaitMs, current);
        if (!next) break;
        current = next;
        continue;
      }
      // Refused by a new-chat cap that is over by now (the cycle has room): never routed, so it goes again
      // at once with its id instead of waiting for the end of a cycle that does not limit it.
      if (typeof outcome !== 'string' && outcome.error && limits && (await refusedByEndedCap(current, outcome.code))) {
        logger.info({ instanceId: request.instanceId, messageId: request.messageId }, 'refused by a new-chat cap that is over: sending again');
        continue;
      }
      break;
    }
    let row: RecordRow;
    if (typeof outcome === 'string') {
      // No ack yet: the unacked sweep resends it later from its stored copy (the socket that closed
      // may have dropped the copy Baileys announces, so the send keeps its own).
      if (relayed)
        await ledger.keepCopy(session.lease, request, {
          key: { remoteJid: request.chatJid, fromMe: true, id: request.messageId },
          message: relayed,
          messageTimestamp: Math.floor(Date.now() / 1000),
        });
      row = (await ledger.rawMessage(request.instanceId, request.messageId))!.row;
    } else {
      try {
        // Refused by the reach-out timelock or the new-chat cap: the error names it and its end; a queued
        // send goes back to the queue (never relayed), which holds it until then.
        const limit = outcome.error && limits ? await limitOfRefusal(current, request.instanceId, outcome.code, limits) : null;
        if (limit) {
          if (request.queued) await ledger.unrelay(session.lease, request);
          else await fail(session, request, owner, limitText(limit));
          throw new RpcError(ErrorCode.Limited, limitText(limit));
        }
        // An error ack: Baileys' messages.update (ERROR) may write the same Failed first; only one announces it.
        row = outcome.error ? await fail(session, request, owner, outcome.error) : await writeSent(session, request);
      } finally {
        AwaitedAcks.delete(current, request.messageId);
      }
    }
    if ((request.readMessages || request.readChat) && !request.status)
      await markRead(socket, request).catch((error: unknown) => logger.warn({ err: error }, 'marking read after send failed'));
    return audience
      ? { ...SendLedger.record(row, owner), statusRecipients: audience.recipients, statusDiscarded: audience.discarded }
      : SendLedger.record(row, owner);
  };

  /**
   * WhatsApp acked the message: its `Sent` is written, waiting out a database that does not answer (as
   * the inbound store does, ADR 0034) while the session lives, up to SENT_WRITE_WAIT_MS. Anything else
   * (fencing, a statement that fails for a reason of its own) fails at once, as before.
   */
  async function writeSent(session: Session, request: SendRequest): Promise<RecordRow> {
    const deadline = Date.now() + SENT_WRITE_WAIT_MS;
    for (let attempt = 1; ; attempt++) {
      try {
        return await ledger.result(session.lease, request, { status: 'Sent' });
      } catch (error) {
        if (!databaseUnavailable(error)) throw error;
        // WhatsApp has the message: never an answer that reads "try again" (a duplicate).
        if (session.currentPhase === 'ended' || Date.now() >= deadline)
          throw new RpcError(ErrorCode.Internal, 'WhatsApp acknowledged the message but its status could not be stored: it was sent, do not send it again');
        if (attempt === 1)
          logger.warn(
            { err: error, instanceId: request.instanceId, messageId: request.messageId },
            'acked by WhatsApp; waiting for the database to write Sent',
          );
        await sleep(Math.min(2_000, 200 * attempt));
      }
    }
  }

  /**
   * The first relay of a built message: the proto as built (announced as our own `append` upsert, as
   * sendMessage does), or the content through sendMessage. Returns the message that went out.
   */
  async function relayFirst(
    socket: WASocket,
    request: SendRequest,
    built: BuiltSend,
    expiration: number,
    statusOptions: { statusJidList?: string[]; backgroundColor?: string; font?: number },
  ): Promise<proto.IMessage> {
    if (built.kind === 'proto') {
      if (expiration) withExpiration(built.message, expiration);
      await socket.relayMessage(request.chatJid, built.message, { messageId: request.messageId, additionalNodes: built.nodes });
      // sendMessage announces our own message as an `append` upsert; relayMessage does not. Do the
      // same, so the stored row gets its raw copy (poll votes need the secret) and its event.
      const own = {
        key: { remoteJid: request.chatJid, fromMe: true, id: request.messageId },
        message: built.message,
        messageTimestamp: Math.floor(Date.now() / 1000),
        status: proto.WebMessageInfo.Status.PENDING,
      } as WAMessage;
      await socket.upsertMessage(own, 'append').catch((error: unknown) => logger.warn({ err: error }, 'announcing a relayed message failed'));
      return built.message;
    }
    const sent = await socket.sendMessage(request.chatJid, built.content, {
      messageId: request.messageId,
      quoted: built.quoted,
      ...statusOptions,
      ...(expiration ? { ephemeralExpiration: expiration } : {}),
    });
    return sent?.message ?? {};
  }

  async function markRead(socket: WASocket, request: SendRequest): Promise<void> {
    const received = await ledger.lastReceived(request.instanceId, request.chatJid, 10);
    if (received.length) {
      await socket.readMessages(
        received.map((entry) => ({ remoteJid: request.chatJid, id: entry.messageId, fromMe: false, participant: entry.isGroup ? entry.sender : undefined })),
      );
    }
    if (request.readChat) await chats.markRead(request.instanceId, request.chatJid);
  }

  return { send };
}
