// A phone's answers to its companions' peer data operations (history on demand, placeholder resends): the
// messages it keeps for them (its archive, set through the API) and the log of requests it received.
import { deflateSync } from 'zlib';
import { proto } from './baileys';
import { userJid } from './accounts';
import type { Account, DeviceRef } from './accounts';
import type { SimContext } from './context';
import { SimError } from './errors';
import { isGroupJid } from './message-router';
import { STATUS_BROADCAST_JID } from './status-broadcasts';

/** A peer data operation request a companion sent its phone, and the ids the phone answered with. */
export interface PeerRequestRecord {
  id: string;
  /** `HISTORY_SYNC_ON_DEMAND`, `PLACEHOLDER_MESSAGE_RESEND`, … */
  type: string;
  request: Record<string, unknown>;
  answered: string[];
}

/** The part of a phone's saved state that is its archive and request log (PhoneState). */
export interface PeerDataState {
  archive: Array<Record<string, unknown>>;
  peerLog: PeerRequestRecord[];
}

export class PeerDataOperations {
  private readonly archive: proto.IWebMessageInfo[] = [];
  private readonly peerLog: PeerRequestRecord[] = [];

  constructor(
    private readonly ctx: Pick<SimContext, 'registry' | 'options'>,
    private readonly account: Account,
    /** Sends a protocol message from the phone to one of its companions (PhoneAgent.sendPeer). */
    private readonly sendPeer: (target: DeviceRef, message: proto.IMessage) => Promise<void>,
  ) {}

  toState(): PeerDataState {
    return {
      archive: this.archive.map((info) => proto.WebMessageInfo.fromObject(info).toJSON() as Record<string, unknown>),
      peerLog: this.peerLog,
    };
  }

  restore(state: PeerDataState): void {
    for (const info of state.archive) this.archive.push(proto.WebMessageInfo.fromObject(info));
    this.peerLog.push(...state.peerLog);
  }

  get isBlank(): boolean {
    return this.archive.length === 0 && this.peerLog.length === 0;
  }

  /** Messages the phone keeps beyond what it pushed at pairing (WebMessageInfo JSON), for on-demand requests. */
  archiveMessages(messages: Array<Record<string, unknown>>): number {
    const decoded = messages.map((entry, index) => {
      let info: proto.IWebMessageInfo;
      try {
        info = proto.WebMessageInfo.fromObject(entry);
        proto.WebMessageInfo.encode(info).finish();
      } catch (err) {
        throw new SimError(400, `messages[${index}] is not a WebMessageInfo: ${(err as Error).message}`);
      }
      if (!info.key?.id || !info.key.remoteJid) throw new SimError(400, `messages[${index}] needs key.id and key.remoteJid`);
      if (!info.messageTimestamp) throw new SimError(400, `messages[${index}] needs messageTimestamp (seconds)`);
      return info;
    });
    for (const info of decoded) {
      const at = this.archive.findIndex((known) => known.key?.id === info.key!.id);
      if (at >= 0) this.archive.splice(at, 1);
      this.archive.push(info);
    }
    return decoded.length;
  }

  /** Peer data operation requests this phone received from its companions, oldest first. */
  requests(): PeerRequestRecord[] {
    return this.peerLog;
  }

  private sameChat(a: string | null | undefined, b: string | null | undefined): boolean {
    if (!a || !b) return false;
    if (a === b) return true;
    const left = this.ctx.registry.resolveUser(a);
    return !!left && left === this.ctx.registry.resolveUser(b);
  }

  /** Answers a companion's request: a history chunk on demand, or the messages it asks to be resent. */
  async answer(requestId: string, requester: DeviceRef, request: proto.Message.IPeerDataOperationRequestMessage): Promise<void> {
    const Type = proto.Message.PeerDataOperationRequestType;
    const record: PeerRequestRecord = {
      id: requestId,
      type: Type[request.peerDataOperationRequestType ?? 0] ?? String(request.peerDataOperationRequestType),
      request: proto.Message.PeerDataOperationRequestMessage.toObject(request as proto.Message.PeerDataOperationRequestMessage, { longs: Number }) as Record<
        string,
        unknown
      >,
      answered: [],
    };
    this.peerLog.push(record);
    if (this.peerLog.length > 1_000) this.peerLog.shift();
    const target: DeviceRef = { account: this.account, deviceId: requester.deviceId };
    if (request.peerDataOperationRequestType === Type.HISTORY_SYNC_ON_DEMAND && request.historySyncOnDemandRequest) {
      const ask = request.historySyncOnDemandRequest;
      const before = Number(ask.oldestMsgTimestampMs ?? Number.MAX_SAFE_INTEGER);
      const count = Math.max(1, Math.min(Number(ask.onDemandMsgCount ?? 50), 500));
      // The newest `count` messages of the chat older than the anchor, oldest first (as a history chunk lists them).
      const older = this.archive
        .filter((info) => this.sameChat(info.key?.remoteJid, ask.chatJid) && info.key?.id !== ask.oldestMsgId && Number(info.messageTimestamp) * 1000 < before)
        .sort((a, b) => Number(a.messageTimestamp) - Number(b.messageTimestamp))
        .slice(-count);
      const chatAccount = ask.chatJid ? this.ctx.registry.resolveUser(ask.chatJid) : undefined;
      const sync = proto.HistorySync.fromObject({
        syncType: proto.HistorySync.HistorySyncType.ON_DEMAND,
        conversations: [
          {
            id: ask.chatJid,
            ...(chatAccount && ask.chatJid?.endsWith('@lid') ? { pnJid: chatAccount.jid } : {}),
            messages: older.map((info) => ({ message: proto.WebMessageInfo.toObject(info as proto.WebMessageInfo) })),
          },
        ],
        progress: 100,
        chunkOrder: 0,
      });
      await this.sendPeer(target, {
        protocolMessage: {
          type: proto.Message.ProtocolMessage.Type.HISTORY_SYNC_NOTIFICATION,
          historySyncNotification: {
            syncType: sync.syncType,
            chunkOrder: 0,
            progress: 100,
            peerDataRequestSessionId: requestId,
            initialHistBootstrapInlinePayload: deflateSync(proto.HistorySync.encode(sync).finish()),
          },
        },
      });
      record.answered = older.map((info) => info.key!.id!);
      return;
    }
    if (request.peerDataOperationRequestType === Type.PLACEHOLDER_MESSAGE_RESEND) {
      const results: proto.Message.PeerDataOperationRequestResponseMessage.IPeerDataOperationResult[] = [];
      for (const { messageKey } of request.placeholderMessageResendRequest ?? []) {
        const info = messageKey?.id ? this.knownMessage(messageKey.id) : undefined;
        if (!info) continue;
        results.push({ placeholderMessageResendResponse: { webMessageInfoBytes: proto.WebMessageInfo.encode(info).finish() } });
        record.answered.push(messageKey!.id!);
      }
      // A phone that knows none of them stays silent (Baileys gives up after 8 s).
      if (!results.length) return;
      await this.sendPeer(target, {
        protocolMessage: {
          type: proto.Message.ProtocolMessage.Type.PEER_DATA_OPERATION_REQUEST_RESPONSE_MESSAGE,
          peerDataOperationRequestResponseMessage: {
            peerDataOperationRequestType: Type.PLACEHOLDER_MESSAGE_RESEND,
            stanzaId: requestId,
            peerDataOperationResult: results,
          },
        },
      });
    }
  }

  /** A message the phone has, by id: archived, or received by the phone itself. */
  private knownMessage(id: string): proto.IWebMessageInfo | undefined {
    const archived = this.archive.find((info) => info.key?.id === id);
    if (archived) return archived;
    const entry = this.account.inbox.find((known) => known.id === id && known.message);
    if (!entry) return undefined;
    const sender = this.ctx.registry.resolveUser(entry.from);
    const remoteJid =
      isGroupJid(entry.to) || entry.to === STATUS_BROADCAST_JID
        ? entry.to
        : entry.fromMe
          ? entry.to
          : sender
            ? userJid(sender, this.ctx.options.incomingAddressing)
            : entry.from;
    return {
      key: { remoteJid, fromMe: entry.fromMe, id: entry.id, participant: isGroupJid(entry.to) && sender ? userJid(sender, 'lid') : undefined },
      message: proto.Message.fromObject(entry.message!),
      messageTimestamp: entry.timestamp,
      pushName: entry.fromMe ? undefined : sender?.name,
    };
  }
}
