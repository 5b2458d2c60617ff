// Routes messages, receipts and acks between devices: Baileys companions (over their socket)
// and simulated phones (in process). Addressing follows what rc14 parses (B9, B10, A9).
import { jidDecode } from './baileys';
import { deviceJid, deviceRefKey, LID_SERVER, userJid } from './accounts';
import type { Account, DeviceRef } from './accounts';
import type { MessageRecord, MessageRouting, SimContext } from './context';
import type { BinaryNode } from './node-io';
import { child, children, node, unixNow } from './node-io';
import { STATUS_BROADCAST_JID, StatusBroadcasts } from './status-broadcasts';

const MESSAGE_LOG_LIMIT = 200_000;
/** The newest records kept in the state file (they route receipts for messages sent before a restart). */
const SAVED_LOG_LIMIT = 20_000;

/** A MessageRecord as the state file keeps it: the sender by phone number. */
export interface MessageRecordState {
  id: string;
  sender: { phone: string; deviceId: number };
  chat: string;
  chatForm: 'pn' | 'lid';
  type: string;
  t: number;
  forwarded: string[];
}
const IGNORED_RECEIPT_TYPES = new Set(['sender', 'peer_msg', 'hist_sync', 'server-error', 'read-self', 'enc_rekey_retry']);

export function isGroupJid(jid: string | undefined): boolean {
  return !!jid && jid.endsWith('@g.us');
}

function formOf(jid: string): 'pn' | 'lid' {
  return jidDecode(jid)?.server === LID_SERVER ? 'lid' : 'pn';
}

/** User part of a JID without the device: "123:4@lid" → "123@lid". */
export function toUserJid(jid: string): string {
  const decoded = jidDecode(jid);
  return decoded ? `${decoded.user}@${decoded.server}` : jid;
}

function receiptIds(stanza: BinaryNode): string[] {
  const ids = [stanza.attrs.id];
  for (const item of children(child(stanza, 'list'), 'item')) {
    if (item.attrs.id) ids.push(item.attrs.id);
  }
  return ids.filter(Boolean);
}

export class MessageRouter implements MessageRouting {
  private readonly log = new Map<string, MessageRecord>();
  readonly statuses: StatusBroadcasts;

  constructor(private readonly ctx: SimContext) {
    this.statuses = new StatusBroadcasts(ctx);
  }

  record(sender: DeviceRef, id: string): MessageRecord | undefined {
    return this.log.get(`${sender.account.phone}:${id}`);
  }

  findRecord(senderAccount: Account, id: string): MessageRecord | undefined {
    return this.log.get(`${senderAccount.phone}:${id}`);
  }

  toState(): MessageRecordState[] {
    const records = [...this.log.values()].slice(-SAVED_LOG_LIMIT);
    return records.map((r) => ({ ...r, sender: { phone: r.sender.account.phone, deviceId: r.sender.deviceId }, forwarded: [...r.forwarded] }));
  }

  restore(states: MessageRecordState[]): void {
    for (const state of states) {
      const account = this.ctx.registry.get(state.sender.phone);
      if (account) this.remember({ ...state, sender: { account, deviceId: state.sender.deviceId }, forwarded: new Set(state.forwarded) });
    }
  }

  remember(record: MessageRecord): void {
    const key = `${record.sender.account.phone}:${record.id}`;
    if (this.log.has(key)) return;
    this.log.set(key, record);
    if (this.log.size > MESSAGE_LOG_LIMIT) {
      const oldest = this.log.keys().next().value;
      if (oldest !== undefined) this.log.delete(oldest);
    }
  }

  /** Whether the two accounts ever exchanged a 1:1 message (either way) that the server routed. */
  hasConversation(a: Account, b: Account): boolean {
    for (const record of this.log.values()) {
      if (isGroupJid(record.chat)) continue;
      const from = record.sender.account;
      if ((from === a || from === b) && this.ctx.registry.resolveUser(record.chat) === (from === a ? b : a)) return true;
    }
    return false;
  }

  /** A `<message>` submitted by a device. Returns the ack the sender should get. */
  onMessage(sender: DeviceRef, stanza: BinaryNode): BinaryNode | undefined {
    const { id, to } = stanza.attrs;
    if (!id || !to) {
      return undefined;
    }
    const t = unixNow();
    const ack = node('ack', { class: 'message', id, from: to, t: String(t) });
    if (to.endsWith('@newsletter')) {
      return this.ctx.newsletters.route(sender, stanza);
    }
    if (to === STATUS_BROADCAST_JID) {
      return this.statuses.route(sender, stanza, t);
    }
    if (isGroupJid(to)) {
      const error = this.ctx.groups.route(sender, stanza, t);
      if (error) ack.attrs.error = error;
      return ack;
    }
    const recipientAttr = stanza.attrs.recipient;
    const chat = toUserJid(recipientAttr ?? to);
    const chatForm = formOf(chat);
    this.remember({ id, sender, chat, chatForm, type: stanza.attrs.type ?? 'text', t, forwarded: new Set() });

    const participants = child(stanza, 'participants');
    if (participants) {
      for (const toNode of children(participants, 'to')) {
        const enc = child(toNode, 'enc');
        const target = toNode.attrs.jid ? this.ctx.registry.resolveDevice(toNode.attrs.jid) : undefined;
        if (!enc || !target || deviceRefKey(target) === deviceRefKey(sender)) continue;
        this.ctx.deliver(target, this.buildDelivery(sender, target, stanza, enc, chat, t), sender);
      }
    } else {
      // Peer messages and retry resends carry a single <enc> addressed to one device.
      const enc = child(stanza, 'enc');
      const target = this.ctx.registry.resolveDevice(to);
      if (enc && target && deviceRefKey(target) !== deviceRefKey(sender)) {
        this.ctx.deliver(target, this.buildDelivery(sender, target, stanza, enc, chat, t), sender);
      }
    }
    return ack;
  }

  /** The stanza a target device receives for one `<enc>` of a 1:1 message. */
  buildDelivery(sender: DeviceRef, target: DeviceRef, stanza: BinaryNode, enc: BinaryNode, chat: string, t: number): BinaryNode {
    const attrs: Record<string, string | undefined> = {
      id: stanza.attrs.id,
      t: String(t),
      type: stanza.attrs.type ?? 'text',
      edit: stanza.attrs.edit,
      category: stanza.attrs.category,
      notify: sender.account.name,
    };
    if (target.account === sender.account) {
      const form = formOf(chat);
      attrs.from = deviceJid(sender.account, sender.deviceId, form);
      if (stanza.attrs.category !== 'peer') {
        // A copy of our own outgoing message: the chat is in `recipient`, its other form in peer_recipient_*.
        attrs.recipient = chat;
        const chatAccount = this.ctx.registry.resolveUser(chat);
        if (chatAccount) {
          if (form === 'lid') attrs.peer_recipient_pn = chatAccount.jid;
          else attrs.peer_recipient_lid = chatAccount.lidJid;
        }
      }
    } else {
      const form = this.ctx.options.incomingAddressing;
      attrs.from = deviceJid(sender.account, sender.deviceId, form);
      // Some contacts' messages come with no sender_pn (the omit-pn fault, Baileys PR #2744).
      const omitPn = this.ctx.faults.peek('omit-pn', (f) => this.ctx.matchesDevice(f, sender));
      if (form === 'lid' && !omitPn) attrs.sender_pn = sender.account.jid;
      else attrs.sender_lid = sender.account.lidJid;
    }
    return node('message', attrs, [node('enc', { ...enc.attrs }, enc.content)]);
  }

  /** A `<receipt>` submitted by the device that received the message(s). */
  onReceipt(receiver: DeviceRef, stanza: BinaryNode): void {
    const type = stanza.attrs.type;
    const to = stanza.attrs.to;
    const ids = receiptIds(stanza);
    if (receiver.deviceId !== 0) {
      const device = receiver.account.devices.get(receiver.deviceId);
      if (device) {
        for (const id of ids) {
          for (const key of device.pending.keys()) {
            if (key.startsWith(`message:${id}:`)) device.pending.delete(key);
          }
        }
      }
    }
    if (to?.endsWith('@newsletter')) {
      if (type === 'view') this.ctx.newsletters.onViewReceipt(receiver, stanza);
      return;
    }
    if (!to || (type && IGNORED_RECEIPT_TYPES.has(type))) {
      return;
    }
    // Status receipts name the author in `participant`, like group receipts.
    const isGroup = isGroupJid(to) || to === STATUS_BROADCAST_JID;
    const senderJid = isGroup ? stanza.attrs.participant : to;
    const senderAccount = senderJid ? this.ctx.registry.resolveUser(senderJid) : undefined;
    if (!senderAccount) {
      return;
    }
    const t = String(unixNow());
    if (type === 'retry') {
      const record = this.findRecord(senderAccount, stanza.attrs.id);
      if (!record) return;
      const receiverForm = record.chatForm;
      const attrs: Record<string, string | undefined> = {
        id: stanza.attrs.id,
        type: 'retry',
        t,
        from: isGroup ? to : record.chat,
        participant: deviceJid(receiver.account, receiver.deviceId, receiverForm),
      };
      this.ctx.deliver(record.sender, node('receipt', attrs, Array.isArray(stanza.content) ? stanza.content : undefined), receiver);
      return;
    }
    const normalizedType = type === 'inactive' || !type ? undefined : type;
    // Group receipts by the device that sent each message.
    const bySender = new Map<string, { record: MessageRecord; ids: string[] }>();
    for (const id of ids) {
      const record = this.findRecord(senderAccount, id);
      if (!record) continue;
      const dedupeKey = `${normalizedType ?? 'delivery'}:${isGroup ? receiver.account.phone : ''}`;
      if (record.forwarded.has(dedupeKey)) continue;
      record.forwarded.add(dedupeKey);
      const key = deviceRefKey(record.sender);
      const entry = bySender.get(key) ?? { record, ids: [] };
      entry.ids.push(id);
      bySender.set(key, entry);
    }
    for (const { record, ids: senderIds } of bySender.values()) {
      const attrs: Record<string, string | undefined> = { id: senderIds[0], t, type: normalizedType };
      if (isGroup) {
        attrs.from = record.chat;
        attrs.participant = userJid(receiver.account, record.chatForm);
      } else {
        attrs.from = userJid(receiver.account, record.chatForm);
      }
      const rest = senderIds.slice(1);
      const content = rest.length
        ? [
            node(
              'list',
              {},
              rest.map((id) => node('item', { id })),
            ),
          ]
        : undefined;
      this.ctx.deliver(record.sender, node('receipt', attrs, content), receiver);
    }
  }

  /** A client ack for something we pushed (receipt, notification, call, message nack). */
  onAck(receiver: DeviceRef, stanza: BinaryNode): void {
    if (receiver.deviceId === 0) return;
    const device = receiver.account.devices.get(receiver.deviceId);
    if (!device) return;
    const cls = stanza.attrs.class;
    const id = stanza.attrs.id;
    for (const key of device.pending.keys()) {
      if (key.startsWith(`${cls}:${id}:`)) device.pending.delete(key);
    }
  }
}
