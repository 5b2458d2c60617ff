// WhatsApp's limits on starting new chats, as the server plays them: the reach-out timelock and the
// new-chat message cap. Sources (what real clients report and parse):
//
// - Reach-out timelock. A 1:1 message from a locked account to someone it never talked to is refused
//   with `<ack class="message" error="463">`; existing chats keep working ("WhatsApp blocks starting new
//   chats but preserves existing ones": Baileys 7.0.0-rc14 Utils/decode-wa-message.js
//   SERVER_ERROR_CODES.MessageAccountRestriction, and the reports in WhiskeySockets/Baileys#2441 and
//   tulir/whatsmeow#1197: "sending a message to a new contact while a Timelock is active results in
//   server returned error 463"). The server pushes the lock and its lifting as
//   `<notification type="mex"><update op_name="NotificationUserReachoutTimelockUpdate">` carrying
//   `{"data":{"xwa2_notify_account_reachout_timelock":{"is_active","time_enforcement_ends","enforcement_type"}}}`
//   (whatsmeow notification.go handleMexNotification, events.NotifyAccountReachoutTimelock; Baileys
//   PR #2445 / rc14 messages-recv.js handleReachoutTimelockNotification, from WA Web's
//   WAWebMexReachoutTimelockNotificationHandler), `time_enforcement_ends` in unix seconds; the w:mex
//   query `xwa2_fetch_account_reachout_timelock` answers the same state (business.ts).
// - New-chat message cap: a quota of messages that open new chats per cycle (`total_quota`,
//   `used_quota`, `cycle_end_timestamp`, `capping_status` NONE → … → CAPPED: the xwa2_message_capping_info
//   query, tulir/whatsmeow#1104, devlikeapro/waha#2186), pushed as
//   `<update op_name="MessageCappingInfoNotification">` with `xwa2_notify_new_chat_messages_capping_info_update`
//   (Baileys PR #2445 / rc14 handleMessageCappingNotification, from WAWebNewChatMessageCappingNotificationHandler).
//   A send over the cap is refused with error 475, the code operators report with the capping
//   notifications (issue #34); no public client names it, so the fault takes the code as a parameter.
import type { Account, DeviceRef } from './accounts';
import type { AccountLimits, BusinessStore } from './business';
import { nextServerId } from './connection';
import type { SimContext } from './context';
import { SimError } from './errors';
import { isGroupJid, toUserJid } from './message-router';
import type { BinaryNode } from './node-io';
import { node, S_WHATSAPP_NET, unixNow } from './node-io';

export interface ReachoutTimelockFault {
  kind: 'reachout-timelock';
  /** The locked account (phone, user or device JID). */
  device: string;
  /** How long the lock lasts from now. */
  untilMs: number;
  enforcementType?: string;
  /** The ack error of a refused send (463). */
  error?: string;
}

export interface NewChatCapFault {
  kind: 'new-chat-cap';
  device: string;
  /** Messages that open a new chat per cycle. */
  limit: number;
  cycleMs: number;
  /** The ack error of a send over the cap (475). */
  error?: string;
}

interface Lock {
  until: number;
  enforcementType: string;
  error: string;
  timer: NodeJS.Timeout;
}

interface Cap {
  limit: number;
  cycleMs: number;
  used: number;
  cycleEnd: number;
  error: string;
  timer: NodeJS.Timeout;
}

export class SendLimits {
  private readonly locks = new Map<string, Lock>();
  private readonly caps = new Map<string, Cap>();

  constructor(
    private readonly ctx: SimContext,
    private readonly business: BusinessStore,
  ) {}

  lock(account: Account, fault: ReachoutTimelockFault): { until: number } {
    this.unlock(account, false);
    const until = Date.now() + fault.untilMs;
    const enforcementType = fault.enforcementType ?? 'DEFAULT';
    const timer = setTimeout(() => this.unlock(account, true), fault.untilMs);
    timer.unref();
    this.locks.set(account.phone, { until, enforcementType, error: fault.error ?? '463', timer });
    const timelock = { is_active: true, time_enforcement_ends: String(Math.ceil(until / 1000)), enforcement_type: enforcementType };
    this.setLimits(account, { timelock });
    this.notify(account, 'NotificationUserReachoutTimelockUpdate', { xwa2_notify_account_reachout_timelock: timelock });
    return { until };
  }

  cap(account: Account, fault: NewChatCapFault): { cycleEnd: number } {
    this.uncap(account);
    const cap: Cap = { limit: fault.limit, cycleMs: fault.cycleMs, used: 0, cycleEnd: 0, error: fault.error ?? '475', timer: undefined as never };
    this.caps.set(account.phone, cap);
    this.newCycle(account, cap);
    return { cycleEnd: cap.cycleEnd };
  }

  clear(): void {
    for (const phone of [...this.locks.keys()]) {
      const account = this.ctx.registry.get(phone);
      if (account) this.unlock(account, true);
    }
    for (const phone of [...this.caps.keys()]) {
      const account = this.ctx.registry.get(phone);
      if (account) this.uncap(account);
    }
  }

  /**
   * The error a 1:1 message from `sender` is refused with, or undefined when it goes through. Only a
   * message that would open a new chat is refused: one without the token its peer issued to the sender
   * (or, when the peer never issued one, to someone it never exchanged a message with); one that goes
   * through uses the cap's quota.
   */
  refusal(sender: DeviceRef, stanza: BinaryNode): string | undefined {
    const lock = this.locks.get(sender.account.phone);
    const cap = this.caps.get(sender.account.phone);
    if (!lock && !cap) return undefined;
    const to = stanza.attrs.to;
    if (!to || stanza.attrs.category === 'peer' || isGroupJid(to) || to.endsWith('@newsletter') || to.endsWith('@broadcast')) return undefined;
    const peer = this.ctx.registry.resolveUser(toUserJid(stanza.attrs.recipient ?? to));
    if (!peer || peer === sender.account) return undefined;
    // An established chat proves itself by the token its peer issued (463 is "1:1 message missing privacy
    // token": privacy-tokens.ts); one whose peer never issued a token, by the messages exchanged.
    const carried = this.ctx.privacyTokens.judge(sender.account, stanza);
    if (carried === 'valid') return undefined;
    if (!this.ctx.privacyTokens.has(peer, sender.account) && this.ctx.router.hasConversation(sender.account, peer)) return undefined;
    // A resend of a message the server already accepted (same id) is no new reach-out.
    if (this.ctx.router.record(sender, stanza.attrs.id)) return undefined;
    if (lock) return lock.error;
    if (cap && cap.used >= cap.limit) return cap.error;
    if (cap) {
      cap.used++;
      this.setLimits(sender.account, { capping: this.cappingOf(cap) });
      if (cap.used >= cap.limit) this.notifyCapping(sender.account, cap);
    }
    return undefined;
  }

  private unlock(account: Account, announce: boolean): void {
    const lock = this.locks.get(account.phone);
    if (!lock) return;
    clearTimeout(lock.timer);
    this.locks.delete(account.phone);
    const timelock = { is_active: false, time_enforcement_ends: '0', enforcement_type: 'DEFAULT' };
    this.setLimits(account, { timelock });
    if (announce) this.notify(account, 'NotificationUserReachoutTimelockUpdate', { xwa2_notify_account_reachout_timelock: { is_active: false } });
  }

  private uncap(account: Account): void {
    const cap = this.caps.get(account.phone);
    if (!cap) return;
    clearTimeout(cap.timer);
    this.caps.delete(account.phone);
    this.setLimits(account, {
      capping: { total_quota: 1000, used_quota: 0, capping_status: 'NONE', ote_status: 'NOT_ELIGIBLE', mv_status: 'NOT_ACTIVE', cycle_end_timestamp: '0' },
    });
  }

  /** A new cycle: the quota is whole again, and the account is told (its status back to NONE). */
  private newCycle(account: Account, cap: Cap): void {
    cap.used = 0;
    cap.cycleEnd = Date.now() + cap.cycleMs;
    cap.timer = setTimeout(() => {
      if (this.caps.get(account.phone) === cap) this.newCycle(account, cap);
    }, cap.cycleMs);
    cap.timer.unref();
    this.setLimits(account, { capping: this.cappingOf(cap) });
    this.notifyCapping(account, cap);
  }

  private cappingOf(cap: Cap): AccountLimits['capping'] {
    return {
      total_quota: cap.limit,
      used_quota: cap.used,
      capping_status: cap.used >= cap.limit ? 'CAPPED' : 'NONE',
      ote_status: 'NOT_ELIGIBLE',
      mv_status: 'NOT_ACTIVE',
      cycle_end_timestamp: String(Math.ceil(cap.cycleEnd / 1000)),
    };
  }

  private notifyCapping(account: Account, cap: Cap): void {
    this.notify(account, 'MessageCappingInfoNotification', {
      xwa2_notify_new_chat_messages_capping_info_update: {
        ...this.cappingOf(cap),
        cycle_start_timestamp: String(Math.floor((cap.cycleEnd - cap.cycleMs) / 1000)),
        server_sent_timestamp: String(unixNow()),
      },
    });
  }

  private setLimits(account: Account, change: Partial<AccountLimits>): void {
    const current = this.business.limitsOf(account);
    this.business.setLimits(account, { capping: change.capping ?? current.capping, timelock: change.timelock ?? current.timelock });
  }

  /** A mex notification to every linked device of the account (kept for one offline, as WhatsApp does). */
  private notify(account: Account, opName: string, data: Record<string, unknown>): void {
    const stanza = node('notification', { from: S_WHATSAPP_NET, type: 'mex', id: nextServerId(), t: String(unixNow()) }, [
      node('update', { op_name: opName }, Buffer.from(JSON.stringify({ data }), 'utf-8')),
    ]);
    for (const device of account.devices.values()) {
      if (device.deviceId !== 0) this.ctx.deliverToCompanion(device, stanza);
    }
  }
}

/** The body of `POST /sim/faults` for the two kinds (device required; the length and the quota too). */
export function parseSendLimitFault(
  kind: 'reachout-timelock' | 'new-chat-cap',
  device: string,
  optNumber: (key: string) => number | undefined,
  optString: (key: string) => string | undefined,
): ReachoutTimelockFault | NewChatCapFault {
  const need = (key: string, min: number): number => {
    const value = optNumber(key);
    if (value === undefined || value < min) throw new SimError(400, `fault ${kind} needs "${key}" (a number ≥ ${min})`);
    return value;
  };
  if (kind === 'reachout-timelock')
    return { kind, device, untilMs: need('untilMs', 1), enforcementType: optString('enforcementType'), error: optString('error') };
  return { kind, device, limit: need('limit', 0), cycleMs: need('cycleMs', 100), error: optString('error') };
}
