import {
  FencedOutError,
  GroupCommit,
  type OutboundLedgerRepository,
  outboundMessageRow,
  toMessageRecord,
  type Lease,
  type MessageRepository,
  type MessageRow,
  type NewMessage,
  type RecordRow,
  type Reserved,
  SLOW_STATEMENT,
} from '@gw/persistence';
import type { MessageRecord, SendRequest } from '@gw/contracts';
import type { WAMessage } from '@whiskeysockets/baileys';
import { serialiseMessage } from '../messaging/raw-message';

type Outcome = { status: 'Sent' } | { status: 'Failed'; error: string };
type Held = { held: boolean; row: RecordRow | null };
type ReserveItem = { lease: Lease; message: NewMessage; relay: boolean };
type SettleItem = { lease: Lease; messageId: string; outcome: Outcome };

/**
 * Sends per group statement at most. One statement in flight per kind: the next group forms behind it
 * (bench/send, ADR 0012); unless it has waited long (for a row lock: an instance being deleted), when
 * other sends' statements go beside it (SLOW_STATEMENT).
 */
const GROUP_OPTIONS = { maxBatch: 200, maxInFlight: 1, slow: SLOW_STATEMENT };

/**
 * The message store's side of a send, every write under the lease:
 * reserve (row exists, `Pending`; relayed at once unless a typing delay comes first) → [mark relayed,
 * just before the network] → result (Sent / Failed). A request whose message id was already relayed
 * is answered from the store, never sent again.
 *
 * Reserve and result are group-committed (ADR 0012): the reserves of all sends of all instances on
 * this worker that arrive while one reserve statement is in flight go together in the next one, each
 * row fenced by its own instance's lease; the same for results. Each send still waits for the commit
 * of its own reserve before its message reaches the socket.
 */
export class SendLedger {
  private readonly reserves: GroupCommit<ReserveItem, Reserved>;
  private readonly results: GroupCommit<SettleItem, Held>;

  constructor(
    private readonly messages: MessageRepository,
    /** The worker's ledger, on the pool: each fenced statement on its own (ADR 0036). */
    private readonly ledger: OutboundLedgerRepository,
  ) {
    const key = (instanceId: string, messageId: string) => `${instanceId}\u0000${messageId}`;
    this.reserves = new GroupCommit<ReserveItem, Reserved>(
      (items) => ledger.reserveMany(items),
      (item) => ledger.reserve(item.lease, item.message, item.relay),
      { ...GROUP_OPTIONS, key: (item) => key(item.message.instanceId, item.message.messageId) },
    );
    this.results = new GroupCommit<SettleItem, Held>(
      (items) => ledger.settleMany(items),
      (item) => ledger.settle(item.lease, item.messageId, item.outcome),
      { ...GROUP_OPTIONS, key: (item) => key(item.lease.instanceId, item.messageId) },
    );
  }

  /** Statements written and sends they carried, per kind (bench/send reports the group sizes). */
  get groupStats(): { reserve: GroupCommit<ReserveItem, Reserved>['stats']; result: GroupCommit<SettleItem, Held>['stats'] } {
    return { reserve: this.reserves.stats, result: this.results.stats };
  }

  /** The stored row when this id was relayed before (checked before costly work such as a media upload). */
  relayedBefore(instanceId: string, messageId: string): Promise<MessageRow | null> {
    return this.messages.findRelayed(instanceId, messageId);
  }

  /**
   * Reserves the id (and with `relay`, marks it relayed in the same statement). Returns the stored
   * row when this id was relayed before: the caller answers with it and sends nothing.
   */
  async reserve(lease: Lease, request: SendRequest, owner: string, relay: boolean): Promise<{ alreadyRelayed: MessageRow | null }> {
    const { held, reserved } = await this.reserves.write({ lease, message: outboundMessageRow(request, owner, 'Pending'), relay });
    if (!held) throw new FencedOutError(lease.instanceId);
    if (reserved) return { alreadyRelayed: null };
    const stored = await this.relayedBefore(request.instanceId, request.messageId);
    if (!stored) throw new Error(`message ${request.messageId} was neither reserved nor relayed before`);
    return { alreadyRelayed: stored };
  }

  /**
   * Marks a reserved id relayed just before it reaches the network. Returns the stored row when another
   * request with the same id marked it first (during this one's typing delay): the caller answers with it
   * and sends nothing, as for an id relayed before its reserve.
   */
  async markRelayed(lease: Lease, request: SendRequest): Promise<{ alreadyRelayed: MessageRow | null }> {
    const marked = await this.ledger.markRelayed(lease, request.messageId);
    if (marked === 'fenced') throw new FencedOutError(lease.instanceId);
    if (marked === 'relayed') return { alreadyRelayed: null };
    const stored = await this.relayedBefore(request.instanceId, request.messageId);
    if (!stored) throw new Error(`message ${request.messageId} was marked relayed but is not stored`);
    return { alreadyRelayed: stored };
  }

  /**
   * A send of this id that was cut off (relayed, no copy, no result: its worker died) is this request's
   * to send again with the same id; true when the row was taken over (see OutboundLedgerRepository.reclaimCutOff).
   */
  async reclaimCutOff(lease: Lease, request: SendRequest): Promise<boolean> {
    const reclaimed = await this.ledger.reclaimCutOff(lease, request.messageId);
    if (reclaimed === 'fenced') throw new FencedOutError(lease.instanceId);
    return reclaimed === 'reclaimed';
  }

  /** Keeps the message as it went out (when no copy is stored yet), for a resend by the unacked sweep. */
  async keepCopy(lease: Lease, request: SendRequest, message: WAMessage): Promise<void> {
    if (!(await this.ledger.keepCopy(lease, request.messageId, serialiseMessage(message)))) throw new FencedOutError(lease.instanceId);
  }

  /** The relay did not happen after all (the connection went away first): the next attempt with this id may relay it. */
  async unrelay(lease: Lease, request: SendRequest): Promise<void> {
    if (!(await this.ledger.unrelay(lease, request.messageId))) throw new FencedOutError(lease.instanceId);
  }

  /** The server acked (Sent) or refused (Failed with `error`); a message already further along stays. */
  async result(lease: Lease, request: SendRequest, outcome: Outcome): Promise<RecordRow> {
    const { held, row } = await this.results.write({ lease, messageId: request.messageId, outcome });
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

  static record(row: RecordRow, owner: string): MessageRecord {
    return toMessageRecord(row, owner);
  }
}
