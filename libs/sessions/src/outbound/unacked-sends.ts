import type { MessageRepository, UnackedMessage } from '@gw/persistence';
import type { Logger } from '@gw/platform';
import { BufferJSON, type WAMessage, type WASocket } from '@whiskeysockets/baileys';
import type { SessionWorkerConfig } from '../config/session-worker.config';
import { resend } from './resend';

/** Where an instance's unacked messages are resent and failed: its open socket and the handler that records status. */
export interface UnackedTarget {
  socket: WASocket;
  /** Marks these messages of one chat Failed with `reason` and announces it (messages_update). */
  fail(chatJid: string, messageIds: string[], reason: string): Promise<void>;
}

type Settings = Pick<SessionWorkerConfig, 'unackedResendAfterMs' | 'unackedGiveUpMs' | 'unackedSweepMs'>;

/**
 * Messages a send of this worker is working on right now (waiting for a new socket, relaying again,
 * waiting for the ack): the sweep leaves them to it. Keyed by instance and message id.
 */
export const SendsInFlight = {
  ids: new Map<string, number>(),
  key: (instanceId: string, messageId: string) => `${instanceId}\u0000${messageId}`,
  /** Marks the message in flight until the returned function is called. */
  enter(instanceId: string, messageId: string): () => void {
    const key = SendsInFlight.key(instanceId, messageId);
    SendsInFlight.ids.set(key, (SendsInFlight.ids.get(key) ?? 0) + 1);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      const count = (SendsInFlight.ids.get(key) ?? 1) - 1;
      if (count > 0) SendsInFlight.ids.set(key, count);
      else SendsInFlight.ids.delete(key);
    };
  },
  has: (instanceId: string, messageId: string) => SendsInFlight.ids.has(SendsInFlight.key(instanceId, messageId)),
  /** Keys of the messages a send of this process has reserved (or taken over) and relays now. */
  relaying: new Set<string>(),
  /**
   * One send's mark as the one relaying its message in this process: `take()` marks it unless another
   * send here holds the mark (false), `release()` gives it up (from the send's reserve, or its takeover of
   * a cut-off one, to its end).
   */
  relayMark(instanceId: string, messageId: string): { take(): boolean; release(): void } {
    const key = SendsInFlight.key(instanceId, messageId);
    let held = false;
    return {
      take: () => {
        if (held) return true;
        if (SendsInFlight.relaying.has(key)) return false;
        SendsInFlight.relaying.add(key);
        return (held = true);
      },
      release: () => {
        if (held) SendsInFlight.relaying.delete(key);
        held = false;
      },
    };
  },
  isRelaying: (instanceId: string, messageId: string) => SendsInFlight.relaying.has(SendsInFlight.key(instanceId, messageId)),
};

/** Rows looked at per sweep (the oldest first); the rest wait for the next one. */
const SWEEP_LIMIT = 500;

/**
 * Never stuck Pending (issue 34, docs/guarantees.md): a message of ours that the server has not acked
 * `unackedResendAfterMs` after it went out is relayed again, with the same id, on the instance's open
 * socket (the server and the receiving clients know a message by its id: a copy that did arrive is
 * not shown twice); `unackedGiveUpMs` after it first went out it is Failed with the reason and its
 * messages_update event. One statement per sweep for every instance this worker holds.
 *
 * Left to others: a message the async queue still holds and that has no stored copy (the queue sends
 * it again from its request), and statuses (a resend needs the recipients the send had).
 */
export class UnackedSends {
  private timer?: NodeJS.Timeout;
  private sweeping?: Promise<void>;
  /** Resends so far and when the last went, per instance and message. */
  private readonly resent = new Map<string, { count: number; at: number }>();

  constructor(
    private readonly messages: MessageRepository,
    /** Instances held with an open session, and their targets. */
    private readonly targets: () => Map<string, UnackedTarget>,
    private readonly settings: Settings,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.sweep(), this.settings.unackedSweepMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.sweeping;
  }

  /** One pass (overlapping calls share it). */
  sweep(): Promise<void> {
    this.sweeping ??= this.pass()
      .catch((error: unknown) => this.logger.warn({ err: error }, 'unacked sends sweep failed'))
      .finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  private async pass(): Promise<void> {
    const targets = this.targets();
    const rows = await this.messages.findUnacked([...targets.keys()], this.settings.unackedResendAfterMs, SWEEP_LIMIT);
    const failures = new Map<string, { instanceId: string; target: UnackedTarget; chatJid: string; ids: string[]; reason: string }>();
    const now = Date.now();
    const seen = new Set<string>();
    for (const row of rows) {
      const target = targets.get(row.instanceId);
      // A send of ours is still at it (it resends on the next socket, or writes the ack's result).
      if (!target || SendsInFlight.has(row.instanceId, row.messageId)) continue;
      const key = `${row.instanceId}\u0000${row.messageId}`;
      seen.add(key);
      const reason = this.failureOf(row, this.resent.get(key)?.count ?? 0);
      if (reason) {
        const group = `${row.instanceId}\u0000${row.chatId}\u0000${reason}`;
        const entry = failures.get(group) ?? { instanceId: row.instanceId, target, chatJid: row.chatId, ids: [], reason };
        entry.ids.push(row.messageId);
        failures.set(group, entry);
        continue;
      }
      if (!row.raw) continue; // queued: the async queue sends it again
      const last = this.resent.get(key);
      if (last && now - last.at < this.settings.unackedResendAfterMs) continue;
      this.resent.set(key, { count: (last?.count ?? 0) + 1, at: now });
      this.logger.info({ instanceId: row.instanceId, messageId: row.messageId, ageMs: Math.round(row.ageMs) }, 'no server ack: sending again with the same id');
      try {
        await resend(target.socket, JSON.parse(row.raw, BufferJSON.reviver) as WAMessage);
      } catch (error) {
        // The connection went away again: the next sweep tries on the next socket.
        this.logger.warn({ err: error, instanceId: row.instanceId, messageId: row.messageId }, 'resending an unacked message failed');
      }
    }
    for (const { instanceId, target, chatJid, ids, reason } of failures.values()) {
      await target.fail(chatJid, ids, reason);
      for (const id of ids) this.resent.delete(`${instanceId}\u0000${id}`);
    }
    // Forget what is no longer unacked (acked, failed, or another worker's now).
    for (const key of this.resent.keys()) if (!seen.has(key)) this.resent.delete(key);
  }

  /** Why this message fails now, or null while it may still go through. */
  private failureOf(row: UnackedMessage, resends: number): string | null {
    if (row.ageMs >= this.settings.unackedGiveUpMs) {
      const seconds = Math.round(this.settings.unackedGiveUpMs / 1000);
      return `WhatsApp did not acknowledge the message within ${seconds} s (sent ${resends + 1} time${resends ? 's' : ''} with the same id)`;
    }
    // No stored copy and nobody to send it again (the send was cut off before the message went out).
    if (!row.raw && !row.queued) return 'the send was interrupted before WhatsApp acknowledged the message; it was not sent again';
    return null;
  }
}
