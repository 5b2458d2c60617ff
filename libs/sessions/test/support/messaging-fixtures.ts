import { createCipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import { MessageRepository, toMessageRow, type MessageRow } from '@gw/persistence';
import { proto, type WASocket } from '../../src/baileys';
import type { SessionWorker } from '../../src/session-worker';
import { waitFor, type Harness } from './harness';

export interface SimAccount {
  phone: string;
  jid: string;
  lid: string;
  name: string;
}

export interface OutboxEvent {
  id: string;
  chatId: string;
  payload: Record<string, any>;
}

/** Simulator phones, the message store and the outbox, as the messaging specs use them. */
export class MessagingFixture {
  constructor(private readonly harness: Harness) {}

  account(phone: string, name: string): Promise<SimAccount> {
    return this.harness.control<SimAccount>('POST', '/sim/accounts', { phone, name });
  }

  /** The phone sends a text or any WAProto message (JSON, bytes as base64); returns its id. */
  async send(from: string, to: string, content: { text: string } | { message: Record<string, unknown> }, id?: string): Promise<string> {
    return (await this.harness.control<{ id: string }>('POST', `/sim/accounts/${from}/send`, { to, ...content, ...(id ? { id } : {}) })).id;
  }

  async sendMedia(from: string, body: Record<string, unknown>): Promise<string> {
    return (await this.harness.control<{ id: string }>('POST', `/sim/accounts/${from}/send-media`, body)).id;
  }

  receipts(from: string, chat: string, ids: string[], type: 'delivered' | 'read' | 'played'): Promise<unknown> {
    return this.harness.control('POST', `/sim/accounts/${from}/receipts`, { chat, ids, type });
  }

  autoReceipts(phone: string, deliveredMs: number | null, readMs: number | null = null): Promise<unknown> {
    return this.harness.control('POST', `/sim/accounts/${phone}/auto-receipts`, { deliveredMs, readMs });
  }

  socket(worker: SessionWorker, instanceId: string): WASocket {
    const session = worker.manager.get(instanceId);
    if (!session) throw new Error(`${instanceId} is not held by ${worker.workerId}`);
    return session.openSocket();
  }

  message(instanceId: string, messageId: string): Promise<MessageRow | null> {
    return this.harness.db.dataSource.transaction((manager) =>
      new MessageRepository(this.harness.db.dataSource).within(manager).findByMessageId(instanceId, messageId),
    );
  }

  /**
   * Right after pairing, Baileys holds its events until the initial history sync is in (up to 20 s
   * on a loaded machine). A message from a phone that gets stored proves the events flow.
   */
  async settled(instanceId: string, from: string, to: string): Promise<void> {
    const id = await this.send(from, to, { text: 'settle' });
    await this.waitMessage(instanceId, id, () => true, 40_000);
  }

  waitMessage(instanceId: string, messageId: string, accept: (row: MessageRow) => boolean = () => true, timeoutMs = 10_000): Promise<MessageRow> {
    return waitFor(
      () => this.message(instanceId, messageId),
      (row) => row !== null && accept(row),
      timeoutMs,
      `message ${messageId}`,
    ) as Promise<MessageRow>;
  }

  async rows(instanceId: string, where = 'true', params: unknown[] = []): Promise<MessageRow[]> {
    const raw: Array<Record<string, unknown>> = await this.harness.db.dataSource.query(
      `SELECT * FROM messages WHERE instance_id = $1 AND (${where}) ORDER BY message_timestamp, created_at`,
      [instanceId, ...params],
    );
    return raw.map(toMessageRow);
  }

  async events(instanceId: string, eventType: string): Promise<OutboxEvent[]> {
    const rows: Array<{ id: string; chat_id: string; payload: Record<string, any> }> = await this.harness.db.dataSource.query(
      `SELECT id, chat_id, payload FROM outbox_events WHERE instance_id = $1 AND event_type = $2 ORDER BY id`,
      [instanceId, eventType],
    );
    return rows.map((row) => ({ id: String(row.id), chatId: row.chat_id, payload: row.payload }));
  }

  /** The `messages` event announcing one provider message id. */
  async messageEvent(instanceId: string, messageId: string, timeoutMs = 5_000): Promise<OutboxEvent> {
    const events = await waitFor(
      () => this.events(instanceId, 'messages'),
      (list) => list.some((event) => event.payload.message?.messageid === messageId),
      timeoutMs,
      `messages event for ${messageId}`,
    );
    return events.find((event) => event.payload.message?.messageid === messageId)!;
  }

  /** `messages_update` events naming a message id. */
  async updateEvents(instanceId: string, messageId: string): Promise<OutboxEvent[]> {
    return (await this.events(instanceId, 'messages_update')).filter((event) => (event.payload.event?.MessageIDs as string[] | undefined)?.includes(messageId));
  }

  async query<T = Record<string, unknown>>(sql: string, params: unknown[]): Promise<T[]> {
    return this.harness.db.dataSource.query(sql, params);
  }
}

/**
 * A poll vote as a voter's phone encrypts it (the inverse of Baileys' decryptPollVote): a key derived
 * from the poll's secret and the poll id / creator / voter JIDs, AES-256-GCM over a PollVoteMessage of
 * the SHA-256 hashes of the chosen option names.
 */
export function encryptPollVote(options: { secret: Uint8Array; pollId: string; creatorJid: string; voterJid: string; selected: string[] }): {
  encPayload: string;
  encIv: string;
} {
  const sign = Buffer.concat([
    Buffer.from(options.pollId),
    Buffer.from(options.creatorJid),
    Buffer.from(options.voterJid),
    Buffer.from('Poll Vote'),
    Buffer.from([1]),
  ]);
  const key0 = createHmac('sha256', Buffer.alloc(32)).update(options.secret).digest();
  const key = createHmac('sha256', key0).update(sign).digest();
  const plaintext = proto.Message.PollVoteMessage.encode({
    selectedOptions: options.selected.map((name) => createHash('sha256').update(name).digest()),
  }).finish();
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(`${options.pollId}\u0000${options.voterJid}`));
  const encrypted = Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
  return { encPayload: encrypted.toString('base64'), encIv: iv.toString('base64') };
}
