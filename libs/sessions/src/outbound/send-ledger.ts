import { FencedOutError, OutboundLedgerRepository, outboundMessageRow, toMessageRecord, toMessageRow, type Lease, type MessageRow } from '@gw/persistence';
import type { SendRequest } from '@gw/contracts';
import type { DataSource } from 'typeorm';

type Raw = Record<string, unknown>;

/**
 * The message store's side of a send, every write under the lease and each one statement:
 * reserve (row exists, `Pending`; relayed at once unless a typing delay comes first) → [mark relayed,
 * just before the network] → result (Sent / Failed). A request whose message id was already relayed
 * is answered from the store, never sent again.
 */
export class SendLedger {
  constructor(private readonly dataSource: DataSource) {}

  /** The stored row when this id was relayed before (checked before costly work such as a media upload). */
  async relayedBefore(instanceId: string, messageId: string): Promise<MessageRow | null> {
    const rows: Raw[] = await this.dataSource.query(`SELECT * FROM messages WHERE instance_id = $1 AND message_id = $2 AND relayed_at IS NOT NULL`, [
      instanceId,
      messageId,
    ]);
    return rows.length ? toMessageRow(rows[0]) : null;
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
    const rows: Raw[] = await this.dataSource.query(`SELECT * FROM messages WHERE instance_id = $1 AND (message_id = $2 OR id = $2) LIMIT 1`, [instanceId, id]);
    if (!rows.length) return null;
    const row = toMessageRow(rows[0]);
    return { row, raw: row.raw };
  }

  /** Keys of the last received messages of a chat (readmessages marks the last 10 read). */
  async lastReceived(instanceId: string, chatJid: string, limit: number): Promise<Array<{ messageId: string; sender: string; isGroup: boolean }>> {
    const rows: Raw[] = await this.dataSource.query(
      `SELECT message_id, sender, is_group FROM messages WHERE instance_id = $1 AND (chat_id = $2 OR chat_lid = $2) AND NOT from_me ORDER BY message_timestamp DESC LIMIT $3`,
      [instanceId, chatJid, limit],
    );
    return rows.map((row) => ({ messageId: row.message_id as string, sender: row.sender as string, isGroup: row.is_group as boolean }));
  }

  static record(row: MessageRow, owner: string) {
    return toMessageRecord(row, owner);
  }
}
