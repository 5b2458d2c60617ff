import { FencedOutError, LeaseRepository, MessageRepository, outboundMessageRow, toMessageRecord, toMessageRow, type Lease, type MessageRow } from '@gw/persistence';
import type { SendRequest } from '@gw/contracts';
import type { DataSource, EntityManager } from 'typeorm';

type Raw = Record<string, unknown>;

/**
 * The message store's side of a send, every step under the lease:
 * reserve (row exists, `Pending`) → mark relayed (just before the network) → result (Sent / Failed).
 * A request whose message id was already relayed is answered from the store, never sent again.
 */
export class SendLedger {
  constructor(private readonly dataSource: DataSource) {}

  private fenced<T>(lease: Lease, work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(async (manager) => {
      if (!(await LeaseRepository.holdsWithin(manager, lease))) throw new FencedOutError(lease.instanceId);
      return work(manager);
    });
  }

  /** Returns the stored row when this id was relayed before (the caller answers with it), else reserves it. */
  async reserve(lease: Lease, request: SendRequest, owner: string): Promise<{ alreadyRelayed: MessageRow | null }> {
    return this.fenced(lease, async (manager) => {
      const existing: Raw[] = await manager.query(`SELECT relayed_at FROM messages WHERE instance_id = $1 AND message_id = $2 FOR UPDATE`, [request.instanceId, request.messageId]);
      if (existing.length && existing[0].relayed_at) {
        const rows: Raw[] = await manager.query(`SELECT * FROM messages WHERE instance_id = $1 AND message_id = $2`, [request.instanceId, request.messageId]);
        return { alreadyRelayed: toMessageRow(rows[0]) };
      }
      await MessageRepository.upsertWithin(manager, outboundMessageRow(request, owner, 'Pending'));
      // A row queued earlier (async) keeps its own id and fields; the API fields are its own too.
      await manager.query(
        `UPDATE messages SET status = 'Pending', was_sent_by_api = true, send_function = $3, send_payload = $4::jsonb,
           track_source = $5, track_id = $6, send_folder_id = $7, updated_at = now()
         WHERE instance_id = $1 AND message_id = $2 AND relayed_at IS NULL`,
        [request.instanceId, request.messageId, request.record.sendFunction, JSON.stringify(request.record.sendPayload), request.record.trackSource, request.record.trackId, request.record.sendFolderId],
      );
      return { alreadyRelayed: null };
    });
  }

  async markRelayed(lease: Lease, request: SendRequest): Promise<void> {
    await this.fenced(lease, (manager) => manager.query(`UPDATE messages SET relayed_at = now() WHERE instance_id = $1 AND message_id = $2`, [request.instanceId, request.messageId]));
  }

  /** The server acked (Sent) or refused (Failed with `error`); a message already further along stays. */
  async result(lease: Lease, request: SendRequest, outcome: { status: 'Sent' } | { status: 'Failed'; error: string }): Promise<MessageRow> {
    return this.fenced(lease, async (manager) => {
      if (outcome.status === 'Sent') await MessageRepository.advanceStatusWithin(manager, request.instanceId, [request.messageId], 'Sent');
      else {
        await manager.query(`UPDATE messages SET status = 'Failed', error = $3, updated_at = now() WHERE instance_id = $1 AND message_id = $2`, [
          request.instanceId,
          request.messageId,
          outcome.error,
        ]);
      }
      const rows: Raw[] = await manager.query(`SELECT * FROM messages WHERE instance_id = $1 AND message_id = $2`, [request.instanceId, request.messageId]);
      return toMessageRow(rows[0]);
    });
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
