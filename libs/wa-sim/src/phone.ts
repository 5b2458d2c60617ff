// The simulated primary phone of an account: it decrypts what it receives into an inbox,
// sends receipts (automatically or on demand), sends Signal-encrypted messages, honours retry
// receipts and pushes the initial history sync and app-state key to newly linked companions.
import { proto } from './baileys';
import { deviceJid, deviceRefKey, userJid } from './accounts';
import type { Account, DeviceRef, InboxEntry, LinkedDevice, OutboxEntry, ReceiptType } from './accounts';
import type { SimContext } from './context';
import { SimError } from './errors';
import { isGroupJid } from './message-router';
import type { BinaryNode } from './node-io';
import { child, children, contentBytes, node, unixNow } from './node-io';
import { bundleFromRetryKeys } from './signal-device';
import type { PreKeyBundle } from './signal-device';
import { STATUS_BROADCAST_JID } from './status-broadcasts';
import { generateMessageId, mediaTypeFor, messageToJson, padMessage, stanzaTypeFor } from './message-codec';
import { initialSyncMessages } from './initial-sync';
import { PeerDataOperations, type PeerDataState, type PeerRequestRecord } from './phone-peer-data';

const MAX_RETRIES = 5;
const STATUS_ORDER: Record<OutboxEntry['status'], number> = { sent: 0, 'server-ack': 1, delivered: 2, read: 3, played: 4 };

interface SentMessage {
  message: proto.IMessage;
  /** Chat JID as addressed (user JID in LID/PN form, or group JID). */
  chat: string;
  type: string;
}

/** What a phone keeps across simulator restarts besides its account (messages as WAProto JSON). */
export interface PhoneState extends PeerDataState {
  sent: Array<{ id: string; message: Record<string, unknown>; chat: string; type: string }>;
}

export class PhoneAgent {
  private queue: Promise<void> = Promise.resolve();
  /** The archive and request log behind the companions' peer data operations. */
  private readonly peerData: PeerDataOperations;
  private readonly sent = new Map<string, SentMessage>();
  private readonly retryCounts = new Map<string, number>();
  private readonly receiptTimers = new Set<NodeJS.Timeout>();
  /** Inbox entries by message key (sending device and id): a message relayed again is shown once. */
  private readonly shown = new Map<string, InboxEntry>();
  decryptFailures = 0;
  /** The ids of the last messages it could not decrypt (newest last), for GET /sim/accounts/{phone}/decrypt-failures. */
  readonly decryptFailedIds: Array<{ id: string; from: string; error: string; at: number }> = [];

  constructor(
    private readonly ctx: SimContext,
    readonly account: Account,
  ) {
    this.peerData = new PeerDataOperations(ctx, account, (target, message) => this.sendPeer(target, message));
  }

  get ref(): DeviceRef {
    return { account: this.account, deviceId: 0 };
  }

  /** Stanzas routed to this phone are processed one at a time to keep Signal state consistent. */
  onStanza(stanza: BinaryNode, sender?: DeviceRef): void {
    void this.enqueue(async () => {
      switch (stanza.tag) {
        case 'message':
          if (sender) await this.handleMessage(stanza, sender);
          return;
        case 'receipt':
          if (sender) await this.handleReceipt(stanza, sender);
          return;
        default:
          return;
      }
    }).catch(() => undefined);
  }

  /** The server acked a message this phone sent. */
  onServerAck(id: string): void {
    const entry = this.account.outbox.get(id);
    if (entry && entry.status === 'sent') entry.status = 'server-ack';
  }

  /** Runs tasks strictly one after another; a failing task does not stop the queue. */
  private enqueue<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task);
    this.queue = run.then(
      () => this.ctx.stateChanged(),
      (err: unknown) => {
        this.ctx.stateChanged();
        this.ctx.logger.warn({ err: (err as Error).message, phone: this.account.phone }, 'phone task failed');
      },
    );
    return run;
  }

  toState(): PhoneState {
    return {
      ...this.peerData.toState(),
      sent: [...this.sent.entries()].map(([id, sent]) => ({ id, message: messageToJson(sent.message), chat: sent.chat, type: sent.type })),
    };
  }

  restore(state: PhoneState): void {
    this.peerData.restore(state);
    for (const sent of state.sent) this.sent.set(sent.id, { message: proto.Message.fromObject(sent.message), chat: sent.chat, type: sent.type });
  }

  /** Nothing worth saving (most phones in a load run never do anything). */
  get isBlank(): boolean {
    return this.peerData.isBlank && this.sent.size === 0;
  }

  /** Waits until every queued stanza has been processed (tests and shutdown). */
  idle(): Promise<void> {
    return this.queue;
  }

  stop(): void {
    for (const timer of this.receiptTimers) clearTimeout(timer);
    this.receiptTimers.clear();
  }

  // ---------------------------------------------------------------- inbound

  private async handleMessage(stanza: BinaryNode, sender: DeviceRef): Promise<void> {
    const from = stanza.attrs.from;
    // A status arrives like a group message: from status@broadcast, the author in `participant`.
    const isGroup = isGroupJid(from) || from === STATUS_BROADCAST_JID;
    const fromMe = sender.account === this.account;
    const isPeer = stanza.attrs.category === 'peer';
    const encs = children(stanza, 'enc');
    const senderLid = deviceJid(sender.account, sender.deviceId, 'lid');
    const parts: proto.IMessage[] = [];
    let decryptError: string | undefined;

    if (this.ctx.options.phoneDecrypt) {
      try {
        for (const enc of encs) {
          const ciphertext = contentBytes(enc);
          if (!ciphertext) continue;
          const encType = enc.attrs.type;
          let plaintext: Buffer;
          if (encType === 'skmsg') {
            plaintext = await this.account.signal.decryptGroup(from, senderLid, ciphertext);
          } else if (encType === 'pkmsg' || encType === 'msg') {
            plaintext = await this.account.signal.decrypt(senderLid, encType, ciphertext);
          } else {
            continue;
          }
          let decoded: proto.IMessage = proto.Message.decode(plaintext);
          if (decoded.senderKeyDistributionMessage?.axolotlSenderKeyDistributionMessage && decoded.senderKeyDistributionMessage.groupId) {
            await this.account.signal.processSenderKeyDistribution(
              senderLid,
              decoded.senderKeyDistributionMessage.groupId,
              decoded.senderKeyDistributionMessage.axolotlSenderKeyDistributionMessage,
            );
          }
          if (fromMe && decoded.deviceSentMessage?.message) {
            decoded = decoded.deviceSentMessage.message;
          }
          parts.push(decoded);
        }
      } catch (err) {
        decryptError = (err as Error).message;
      }
      if (decryptError) {
        this.decryptFailures++;
        this.decryptFailedIds.push({ id: stanza.attrs.id, from: stanza.attrs.from, error: decryptError, at: Date.now() });
        if (this.decryptFailedIds.length > 1_000) this.decryptFailedIds.shift();
        this.ctx.logger.debug({ phone: this.account.phone, id: stanza.attrs.id, err: decryptError }, 'phone failed to decrypt, asking for a retry');
        this.sendRetryReceipt(stanza);
        return;
      }
    }

    const message: proto.IMessage | null = parts.length === 0 ? null : parts.length === 1 ? parts[0] : Object.assign({}, ...parts);
    if (isPeer) {
      // Our own companion asks the phone for something (history on demand, a placeholder resend).
      const request = message?.protocolMessage?.peerDataOperationRequestMessage;
      if (fromMe && request) await this.peerData.answer(stanza.attrs.id, sender, request);
      return;
    }
    // A bare sender-key distribution carries no user-visible content.
    const visible = message ? Object.keys(message).filter((k) => k !== 'senderKeyDistributionMessage' && k !== 'messageContextInfo') : ['encrypted'];
    if (visible.length === 0) {
      this.maybeAutoReceipt(stanza, fromMe);
      return;
    }
    // A message is known by its key (chat, sender, id): the same message relayed again (a resend
    // after a lost connection, a retry) is shown once, as WhatsApp's clients do.
    const key = `${deviceJid(sender.account, sender.deviceId, 'pn')}|${stanza.attrs.id}`;
    const known = this.shown.get(key);
    if (known && !known.decryptError) {
      known.redeliveries = (known.redeliveries ?? 0) + 1;
      this.maybeAutoReceipt(stanza, fromMe);
      return;
    }
    const entry: InboxEntry = {
      id: stanza.attrs.id,
      from: sender.account.jid,
      fromLid: sender.account.lidJid,
      fromDevice: deviceJid(sender.account, sender.deviceId, 'pn'),
      to: isGroup ? from : fromMe ? (stanza.attrs.recipient ?? '') : this.account.jid,
      participant: isGroup ? sender.account.jid : undefined,
      type: stanza.attrs.type ?? 'text',
      fromMe,
      message: message ? messageToJson(message) : null,
      decryptError,
      timestamp: Number(stanza.attrs.t ?? unixNow()),
      receivedAt: Date.now(),
      seq: ++this.account.inboxSeq,
    };
    this.account.inbox.push(entry);
    this.shown.set(key, entry);
    if (this.account.inbox.length > 10_000) {
      const oldest = this.account.inbox.shift();
      if (oldest) this.shown.delete(`${oldest.fromDevice}|${oldest.id}`);
    }
    this.maybeAutoReceipt(stanza, fromMe);
  }

  private maybeAutoReceipt(stanza: BinaryNode, fromMe: boolean): void {
    if (fromMe) return;
    const { deliveredMs, readMs } = this.account.autoReceipts;
    const schedule = (ms: number, type?: ReceiptType): void => {
      const timer = setTimeout(() => {
        this.receiptTimers.delete(timer);
        this.sendReceiptFor(stanza, type === 'delivered' ? undefined : type);
      }, ms);
      this.receiptTimers.add(timer);
    };
    if (deliveredMs !== null) schedule(deliveredMs, 'delivered');
    if (readMs !== null) schedule(Math.max(readMs, deliveredMs ?? 0), 'read');
  }

  private sendReceiptFor(stanza: BinaryNode, type: string | undefined, ids: string[] = [stanza.attrs.id]): void {
    const from = stanza.attrs.from;
    const attrs: Record<string, string | undefined> = { id: ids[0], to: from, type };
    if (isGroupJid(from) || from === STATUS_BROADCAST_JID) attrs.participant = stanza.attrs.participant;
    if (type === 'read' || type === 'played') attrs.t = String(unixNow());
    const rest = ids.slice(1);
    const content = rest.length
      ? [
          node(
            'list',
            {},
            rest.map((id) => node('item', { id })),
          ),
        ]
      : undefined;
    this.ctx.router.onReceipt(this.ref, node('receipt', attrs, content));
  }

  private sendRetryReceipt(stanza: BinaryNode): void {
    const key = `${stanza.attrs.from}:${stanza.attrs.id}`;
    const count = (this.retryCounts.get(key) ?? 0) + 1;
    if (count > MAX_RETRIES) return;
    this.retryCounts.set(key, count);
    const attrs: Record<string, string | undefined> = { id: stanza.attrs.id, type: 'retry', to: stanza.attrs.from, participant: stanza.attrs.participant };
    const registration = Buffer.alloc(4);
    registration.writeUInt32BE(this.account.signal.registrationId);
    this.ctx.router.onReceipt(
      this.ref,
      node('receipt', attrs, [
        node('retry', { count: String(count), id: stanza.attrs.id, t: stanza.attrs.t ?? String(unixNow()), v: '1' }),
        node('registration', {}, registration),
      ]),
    );
  }

  private async handleReceipt(stanza: BinaryNode, sender: DeviceRef): Promise<void> {
    const ids = [stanza.attrs.id, ...children(child(stanza, 'list'), 'item').map((i) => i.attrs.id)].filter(Boolean);
    const type = stanza.attrs.type;
    if (type === 'retry') {
      await this.resend(stanza, sender);
      return;
    }
    const receiptType: ReceiptType = type === 'read' ? 'read' : type === 'played' ? 'played' : 'delivered';
    for (const id of ids) {
      const entry = this.account.outbox.get(id);
      if (!entry) continue;
      entry.receipts.push({ from: deviceJid(sender.account, sender.deviceId, 'pn'), type: receiptType, at: Date.now() });
      if (STATUS_ORDER[receiptType] > STATUS_ORDER[entry.status]) entry.status = receiptType;
    }
  }

  /** Honours a retry receipt: rebuild the session (from the receipt's keys if any) and resend. */
  private async resend(stanza: BinaryNode, requester: DeviceRef): Promise<void> {
    const id = stanza.attrs.id;
    const sent = this.sent.get(id);
    const entry = this.account.outbox.get(id);
    entry?.receipts.push({ from: deviceJid(requester.account, requester.deviceId, 'pn'), type: 'retry', at: Date.now() });
    if (!sent) return;
    const retryNode = child(stanza, 'retry');
    const count = Number(retryNode?.attrs.count ?? '1');
    const jid = deviceJid(requester.account, requester.deviceId, 'lid');
    const keys = child(stanza, 'keys');
    const bundle = keys ? bundleFromRetryKeys(stanza, keys) : undefined;
    await this.account.signal.deleteSession(jid);
    await this.account.signal.injectSession(jid, bundle ?? this.serverBundle(requester));
    const plaintext =
      requester.account === this.account ? padMessage({ deviceSentMessage: { destinationJid: sent.chat, message: sent.message } }) : padMessage(sent.message);
    const { type, ciphertext } = await this.account.signal.encrypt(jid, plaintext);
    const attrs: Record<string, string | undefined> = { id, type: sent.type };
    if (isGroupJid(sent.chat)) {
      attrs.to = sent.chat;
      attrs.participant = jid;
    } else {
      attrs.to = jid;
      if (requester.account === this.account) attrs.recipient = sent.chat;
    }
    const enc = node('enc', { v: '2', type, count: String(count), mediatype: mediaTypeFor(sent.message) }, ciphertext);
    const ack = this.ctx.router.onMessage(this.ref, node('message', attrs, [enc]));
    if (ack && !ack.attrs.error) this.onServerAck(id);
  }

  // ---------------------------------------------------------------- outbound

  private serverBundle(target: DeviceRef): PreKeyBundle {
    if (target.deviceId === 0) {
      return target.account.phoneBundle();
    }
    const device = target.account.devices.get(target.deviceId);
    if (!device) throw new SimError(404, `unknown device ${deviceRefKey(target)}`);
    return device.takeBundle();
  }

  /** Encrypts for one device, fetching its bundle from the server store when there is no session yet. */
  async encryptFor(target: DeviceRef, plaintext: Buffer): Promise<{ type: 'pkmsg' | 'msg'; ciphertext: Buffer; jid: string }> {
    const jid = deviceJid(target.account, target.deviceId, 'lid');
    if (!(await this.account.signal.hasSession(jid))) {
      await this.account.signal.injectSession(jid, this.serverBundle(target));
    }
    const { type, ciphertext } = await this.account.signal.encrypt(jid, plaintext);
    return { type, ciphertext, jid };
  }

  /** Sends a 1:1 message to every device of the recipient, plus copies to our own companions. */
  sendMessage(to: string, message: proto.IMessage, options: { id?: string; edit?: string } = {}): Promise<string> {
    const id = options.id ?? generateMessageId();
    return this.enqueue(() => this.doSend(to, message, id, options.edit));
  }

  private async doSend(to: string, message: proto.IMessage, id: string, edit?: string): Promise<string> {
    if (isGroupJid(to)) {
      await this.ctx.groups.sendFromPhone(this, to, message, id);
      this.sent.set(id, { message, chat: to, type: stanzaTypeFor(message) });
      return id;
    }
    const recipient = this.ctx.registry.resolveUser(to);
    if (!recipient) throw new SimError(404, `no account for ${to}`);
    const chat = userJid(recipient, this.ctx.options.incomingAddressing);
    const type = stanzaTypeFor(message);
    const extra: Record<string, string> = {};
    const mediaType = mediaTypeFor(message);
    if (mediaType) extra.mediatype = mediaType;
    const targets: DeviceRef[] = [];
    if (recipient !== this.account) targets.push({ account: recipient, deviceId: 0 });
    for (const device of recipient.activeDevices()) targets.push({ account: recipient, deviceId: device.deviceId });
    if (recipient !== this.account) {
      for (const device of this.account.activeDevices()) targets.push({ account: this.account, deviceId: device.deviceId });
    }
    const plain = padMessage(message);
    const dsm = padMessage({ deviceSentMessage: { destinationJid: chat, message } });
    const participants: BinaryNode[] = [];
    for (const target of targets) {
      const { type: encType, ciphertext, jid } = await this.encryptFor(target, target.account === this.account ? dsm : plain);
      participants.push(node('to', { jid }, [node('enc', { v: '2', type: encType, ...extra }, ciphertext)]));
    }
    this.sent.set(id, { message, chat, type });
    const now = unixNow();
    this.account.outbox.set(id, { id, to: recipient.jid, type, message: messageToJson(message), timestamp: now, status: 'sent', receipts: [] });
    const ack = this.ctx.router.onMessage(this.ref, node('message', { id, to: chat, type, edit }, [node('participants', {}, participants)]));
    if (ack && !ack.attrs.error) {
      this.onServerAck(id);
      // As WhatsApp's clients do after a 1:1 message (at most once a week per contact): issue our token to them.
      if (recipient !== this.account && !this.ctx.privacyTokens.has(this.account, recipient)) this.ctx.privacyTokens.issue(this.account, recipient);
    }
    return id;
  }

  /** On-demand receipts for messages this phone received (from the control API). */
  sendReceipts(chat: string, ids: string[], type: ReceiptType): number {
    const wanted = new Set(ids);
    const matches = this.account.inbox.filter((e) => wanted.has(e.id) && !e.fromMe);
    const chatAccount = isGroupJid(chat) ? undefined : this.ctx.registry.resolveUser(chat);
    // Group by the exact sending device, as WhatsApp receipts are per sender device.
    const bySender = new Map<string, InboxEntry[]>();
    for (const entry of matches) {
      if (isGroupJid(chat) ? entry.to !== chat : chatAccount && entry.from !== chatAccount.jid) continue;
      const list = bySender.get(entry.fromDevice) ?? [];
      list.push(entry);
      bySender.set(entry.fromDevice, list);
    }
    let sent = 0;
    for (const [fromDevice, entries] of bySender) {
      const sender = this.ctx.registry.resolveDevice(fromDevice);
      if (!sender) continue;
      const group = isGroupJid(entries[0].to) ? entries[0].to : undefined;
      const form = this.ctx.options.incomingAddressing;
      const fromAttr = group ?? deviceJid(sender.account, sender.deviceId, form);
      const fake = node('message', { id: entries[0].id, from: fromAttr, participant: group ? deviceJid(sender.account, sender.deviceId, form) : undefined });
      this.sendReceiptFor(
        fake,
        type === 'delivered' ? undefined : type,
        entries.map((e) => e.id),
      );
      sent += entries.length;
    }
    return sent;
  }

  // ---------------------------------------------------------------- peer data operations

  /** Messages the phone keeps beyond what it pushed at pairing (WebMessageInfo JSON), for on-demand requests. */
  archiveMessages(messages: Array<Record<string, unknown>>): number {
    return this.peerData.archiveMessages(messages);
  }

  /** Peer data operation requests this phone received from its companions, oldest first. */
  peerRequests(): PeerRequestRecord[] {
    return this.peerData.requests();
  }

  /** First login after pairing: app-state key share, then the history sync notification(s). */
  async pushInitialSync(device: LinkedDevice): Promise<void> {
    await this.enqueue(async () => {
      const target: DeviceRef = { account: this.account, deviceId: device.deviceId };
      for (const message of initialSyncMessages(this.account)) await this.sendPeer(target, message);
    });
  }

  /** A peer (own-device) protocol message from this phone to one companion. */
  private async sendPeer(target: DeviceRef, message: proto.IMessage): Promise<void> {
    const { type, ciphertext } = await this.encryptFor(target, padMessage(message));
    const to = deviceJid(target.account, target.deviceId, 'pn');
    this.ctx.router.onMessage(
      this.ref,
      node('message', { id: generateMessageId(), to, type: 'text', category: 'peer' }, [node('enc', { v: '2', type }, ciphertext)]),
    );
  }
}
