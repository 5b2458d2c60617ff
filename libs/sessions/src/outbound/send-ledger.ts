import {
  FencedOutError,
  OutboundLedgerRepository,
  outboundMessageRow,
  toMessageRecord,
  type Lease,
  type MessageRepository,
  type MessageRow,
} from '@gw/persistence';
import type { MessageRecord, SendRequest } from '@gw/contracts';
import type { DataSource } from 'typeorm';

/**
 * The message store's side of a send, every write under the lease and each one statement:
 * reserve (row exists, `Pending`; relayed at once unless a typing delay comes first) → [mark relayed,
 * just before the network] → result (Sent / Failed). A request whose message id was already relayed
 * is answered from the store, never sent again.
 */
export class SendLedger {
  constructor(
    private readonly messages: MessageRepository,
    /** The fenced statements take the DataSource (or a transaction's manager). */
    private readonly dataSource: DataSource,
  ) {}

  /** The stored row when this id was relayed before (checked before costly work such as a media upload). */
  relayedBefore(instanceId: string, messageId: string): Promise<MessageRow | null> {
    return this.messages.findRelayed(instanceId, messageId);
  }

  /**
   * Reserves the id (and with `relay`, marks it relayed in the same statement). Returns the stored
   * row when this id was relayed before: the caller answers with it and sends nothing.
   */
  async reserve(lease: Lease, request: SendRequest, owner: string, relay: boolean): Promise<{ alreadyRelayed: MessageRow | null }> {
    const { held, row } = await OutboundLedgerRepository.reserve(this.dataSource, lease, outboundMessageRow(request, owner, 'Pending'), relay);
    if (!held) throw new FencedOutError(lease.instanceId);
    if (row) return { alreadyRelayed: null };
    const stored = await this.relayedBefore(request.instanceId, request.messageId);
    if (!stored) throw new Error(`message ${request.messageId} was neither reserved nor relayed before`);
    return { alreadyRelayed: stored };
  }

  async markRelayed(lease: Lease, request: SendRequest): Promise<void> {
    if (!(await OutboundLedgerRepository.markRelayed(this.dataSource, lease, request.messageId))) throw new FencedOutError(lease.instanceId);
  }

  /** The server acked (Sent) or refused (Failed with `error`); a message already further along stays. */
  async result(lease: Lease, request: SendRequest, outcome: { status: 'Sent' } | { status: 'Failed'; error: string }): Promise<MessageRow> {
    const { held, row } = await OutboundLedgerRepository.settle(this.dataSource, lease, request.messageId, outcome);
    if (!held) throw new FencedOutError(lease.instanceId);
    if (!row) throw new Error(`message ${request.messageId} is not stored`);
    return row;
  }

  /** The stored WAMessage of a message of this instance (our id or the provider's), for quotes and targets. */
  async rawMessage(instanceId: string, id: string): Promise<{ row: MessageRow; raw: string | null } | null> {
    const row = await this.messages.findOne(instanceId, id);
    return row ? { row, raw: row.raw } : null;
  }

  /** Keys of the last received messages of a chat (readmessages marks the last 10 read). */
  lastReceived(instanceId: string, chatJid: string, limit: number): Promise<Array<{ messageId: string; sender: string; isGroup: boolean }>> {
    return this.messages.lastReceivedKeys(instanceId, chatJid, limit);
  }

  static record(row: MessageRow, owner: string): MessageRecord {
    return toMessageRecord(row, owner);
  }
}
