import { RepositoryBase } from './repository-base';

type Raw = Record<string, unknown>;

/** WhatsApp's two limits on starting new chats. */
export type SendLimitKind = 'reachout_timelock' | 'new_chat_cap';

export interface SendLimit {
  kind: SendLimitKind;
  /** The lock's end, or the end of the cap's cycle. */
  until: Date;
  /** What WhatsApp said: the enforcement type, or `used/total` of the quota. */
  detail: string;
}

/**
 * The limits WhatsApp put on an instance's new chats (send_limits): the worker that learns of one (an
 * error ack 463/475, the server's notification) records it; dispatchers hold back the queued sends
 * that would open a new chat until it ends; the gateway shows it. A limit past its end is no limit.
 */
export class SendLimitRepository extends RepositoryBase {
  async record(instanceId: string, limit: SendLimit): Promise<void> {
    await this.db.query(
      `INSERT INTO send_limits (instance_id, kind, until, detail) VALUES ($1, $2, $3, $4)
       ON CONFLICT (instance_id, kind) DO UPDATE SET until = EXCLUDED.until, detail = EXCLUDED.detail, updated_at = now()`,
      [instanceId, limit.kind, limit.until, limit.detail],
    );
  }

  /**
   * The limit is over (WhatsApp lifted the lock, a new cycle began): the sends it held are due at
   * once (a dispatcher holds one again if another limit still applies to it).
   */
  async lift(instanceId: string, kind: SendLimitKind): Promise<void> {
    await this.db.query(
      `WITH gone AS (DELETE FROM send_limits WHERE instance_id = $1 AND kind = $2)
       UPDATE send_queue SET held_until = NULL WHERE instance_id = $1 AND held_until IS NOT NULL`,
      [instanceId, kind],
    );
  }

  /** The limits in force now, the longest first. */
  async active(instanceId: string): Promise<SendLimit[]> {
    const rows: Raw[] = await this.db.query(`SELECT kind, until, detail FROM send_limits WHERE instance_id = $1 AND until > now() ORDER BY until DESC`, [
      instanceId,
    ]);
    return rows.map((row) => ({ kind: row.kind as SendLimitKind, until: row.until as Date, detail: row.detail as string }));
  }

  /**
   * Whether a send to `chatJid` opens a new chat: no message came from it and none of ours to it was
   * accepted by the server (Sent or beyond), `messageId` (the send itself) aside. Groups, newsletters
   * and statuses are no new chats.
   */
  async opensNewChat(instanceId: string, chatJid: string, messageId: string): Promise<boolean> {
    if (!chatJid.endsWith('@s.whatsapp.net') && !chatJid.endsWith('@lid')) return false;
    const rows: Raw[] = await this.db.query(
      `SELECT EXISTS (
         SELECT 1 FROM messages WHERE instance_id = $1 AND (chat_id = $2 OR chat_lid = $2) AND message_id <> $3
           AND (NOT from_me OR status IN ('Sent', 'Delivered', 'Read', 'Played'))) AS talked`,
      [instanceId, chatJid, messageId],
    );
    return !rows[0].talked;
  }
}
