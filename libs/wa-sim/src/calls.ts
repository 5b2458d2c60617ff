// Voice/video call signalling from simulated phones to linked devices: offer, then reject
// (from the device) or terminate/timeout (from the phone). No media, only what Baileys emits as
// `call` events.
import { randomBytes } from 'crypto';
import { proto } from './baileys';
import { deviceJid, userJid } from './accounts';
import type { Account, DeviceRef } from './accounts';
import type { SimContext } from './context';
import { nextServerId } from './connection';
import { SimError } from './errors';
import type { BinaryNode } from './node-io';
import { child, children, contentBytes, node, unixNow } from './node-io';
import type { RouteSpec } from './route-spec';

export interface CallRecord {
  id: string;
  from: string;
  to: string;
  video: boolean;
  status: 'offer' | 'reject' | 'accept' | 'terminate' | 'timeout';
  startedAt: number;
  endedAt?: number;
  rejectedBy?: string;
  /** `device`: a linked device placed it (a call offer stanza); `phone`: the caller's phone did. */
  placedBy?: 'phone' | 'device';
  /** The callee devices the offer's call key was encrypted for (`<destination><to jid>`). */
  keyFor?: string[];
  /** The callee's phone decrypted its copy of the call key: its length in bytes (32 from WhatsApp clients). */
  callKeyLength?: number;
  /** Why the callee's phone could not read the call key. */
  callKeyError?: string;
}

type CallEntry = { record: CallRecord; caller: Account; callee: Account; timer?: NodeJS.Timeout };

export class CallCenter {
  private readonly calls = new Map<string, CallEntry>();

  constructor(private readonly ctx: SimContext) {}

  list(phone: string): CallRecord[] {
    return [...this.calls.values()].filter((c) => c.caller.phone === phone || c.callee.phone === phone).map((c) => c.record);
  }

  /** The caller's phone rings every linked device of the callee. */
  offer(caller: Account, callee: Account, options: { video?: boolean; timeoutMs?: number } = {}): CallRecord {
    if (caller === callee) throw new SimError(400, 'cannot call yourself');
    const id = randomBytes(16).toString('hex').toUpperCase();
    const record: CallRecord = { id, from: caller.jid, to: callee.jid, video: !!options.video, status: 'offer', startedAt: Date.now(), placedBy: 'phone' };
    const entry: CallEntry = { record, caller, callee };
    this.calls.set(id, entry);
    const media: BinaryNode[] = [node('audio', { enc: 'opus', rate: '16000' }), node('audio', { enc: 'opus', rate: '8000' })];
    if (options.video) media.push(node('video', { enc: 'vp8', dec: 'vp8', orientation: '0', screen_width: '1080', screen_height: '2340' }));
    this.push(entry, node('offer', { 'call-id': id, 'call-creator': this.creator(caller), caller_pn: caller.jid }, media));
    entry.timer = setTimeout(() => this.end(id, 'timeout'), options.timeoutMs ?? 45_000);
    return record;
  }

  /** The phone hangs up (terminate) or gives up ringing (timeout). */
  end(id: string, reason: 'terminate' | 'timeout' = 'terminate'): CallRecord {
    const entry = this.calls.get(id);
    if (!entry) throw new SimError(404, `no call ${id}`);
    if (entry.timer) clearTimeout(entry.timer);
    if (entry.record.status === 'offer') {
      entry.record.status = reason;
      entry.record.endedAt = Date.now();
      const terminate = node('terminate', { 'call-id': id, 'call-creator': this.creator(entry.caller), reason: reason === 'timeout' ? 'timeout' : undefined });
      this.push(entry, terminate);
      if (entry.record.placedBy === 'device' && reason === 'timeout') this.pushToCaller(entry, terminate);
    }
    return entry.record;
  }

  /**
   * `<call>` from a linked device: an `offer` it places (WhatsApp Web's shape: audio/video codecs,
   * net, capability, encopt and the call key Signal-encrypted per callee device under
   * `<destination>`), its `terminate` of a call it placed, or its `reject`/`accept` of a call it got.
   * The callee's phone rings (GET /sim/accounts/{phone}/calls) and its linked devices get the offer.
   */
  onDeviceCall(sender: DeviceRef, stanza: BinaryNode): void {
    const action = Array.isArray(stanza.content) ? stanza.content[0] : undefined;
    if (!action) return;
    if (action.tag === 'offer') {
      this.onDeviceOffer(sender, stanza, action);
      return;
    }
    const id = action.attrs['call-id'];
    const entry = id ? this.calls.get(id) : undefined;
    if (!entry || entry.record.status !== 'offer') return;
    if (action.tag === 'terminate' && entry.caller === sender.account) {
      this.end(entry.record.id, 'terminate');
      return;
    }
    if ((action.tag === 'reject' || action.tag === 'accept') && entry.callee === sender.account) {
      if (entry.timer) clearTimeout(entry.timer);
      entry.record.status = action.tag;
      entry.record.endedAt = Date.now();
      entry.record.rejectedBy = sender.account.jid;
      if (entry.record.placedBy === 'device')
        this.pushToCaller(entry, node(action.tag, { 'call-id': entry.record.id, 'call-creator': this.creator(entry.caller) }));
    }
  }

  /** The callee's phone turns down a call a linked device placed: the caller's devices learn it. */
  reject(id: string): CallRecord {
    const entry = this.calls.get(id);
    if (!entry) throw new SimError(404, `no call ${id}`);
    if (entry.record.status !== 'offer') throw new SimError(409, `call ${id} is ${entry.record.status}`);
    if (entry.timer) clearTimeout(entry.timer);
    entry.record.status = 'reject';
    entry.record.endedAt = Date.now();
    entry.record.rejectedBy = entry.callee.jid;
    this.pushToCaller(entry, node('reject', { 'call-id': id, 'call-creator': this.creator(entry.caller), count: '0' }));
    return entry.record;
  }

  routes(): RouteSpec[] {
    return [{ method: 'POST', path: '/sim/calls/{id}/reject', handler: ({ params }) => this.reject(params.id) }];
  }

  private onDeviceOffer(sender: DeviceRef, stanza: BinaryNode, offer: BinaryNode): void {
    const callee = stanza.attrs.to ? this.ctx.registry.resolveUser(stanza.attrs.to) : undefined;
    const id = offer.attrs['call-id'];
    if (!callee || !id || callee === sender.account || this.calls.has(id)) return;
    const video = children(offer, 'video').length > 0;
    const keyFor = children(child(offer, 'destination'), 'to').map((to) => to.attrs.jid);
    const record: CallRecord = { id, from: sender.account.jid, to: callee.jid, video, status: 'offer', startedAt: Date.now(), placedBy: 'device', keyFor };
    const entry: CallEntry = { record, caller: sender.account, callee };
    this.calls.set(id, entry);
    const media: BinaryNode[] = [node('audio', { enc: 'opus', rate: '16000' }), node('audio', { enc: 'opus', rate: '8000' })];
    if (video) media.push(node('video', { enc: 'vp8', dec: 'vp8', orientation: '0', screen_width: '1920', screen_height: '1080' }));
    this.push(entry, node('offer', { 'call-id': id, 'call-creator': this.creator(sender.account), caller_pn: sender.account.jid }, media));
    if (this.ctx.options.phoneDecrypt) void this.readCallKey(entry, sender, offer);
    // Nobody picks up in the simulator: the offer times out after 45 s, as WhatsApp's do.
    entry.timer = setTimeout(() => this.end(id, 'timeout'), 45_000);
  }

  /** The callee's phone decrypts its `<to>` of the offer's destination (a Signal message whose `call.callKey` is the call's key). */
  private async readCallKey(entry: CallEntry, sender: DeviceRef, offer: BinaryNode): Promise<void> {
    for (const to of children(child(offer, 'destination'), 'to')) {
      const ref = this.ctx.registry.resolveDevice(to.attrs.jid);
      const enc = child(to, 'enc');
      const ciphertext = contentBytes(enc);
      const type = enc?.attrs.type;
      if (!ref || ref.account !== entry.callee || ref.deviceId !== 0 || !ciphertext || (type !== 'pkmsg' && type !== 'msg')) continue;
      try {
        const plaintext = await entry.callee.signal.decrypt(deviceJid(sender.account, sender.deviceId, 'lid'), type, ciphertext);
        entry.record.callKeyLength = proto.Message.decode(plaintext).call?.callKey?.length ?? 0;
      } catch (err) {
        entry.record.callKeyError = (err as Error).message;
      }
    }
  }

  private pushToCaller(entry: CallEntry, info: BinaryNode): void {
    const attrs = { from: userJid(entry.callee, this.ctx.options.incomingAddressing), id: nextServerId(), t: String(unixNow()), notify: entry.callee.name };
    for (const device of entry.caller.activeDevices()) this.ctx.deliverToCompanion(device, node('call', attrs, [info]));
  }

  stop(): void {
    for (const entry of this.calls.values()) if (entry.timer) clearTimeout(entry.timer);
  }

  private creator(account: Account): string {
    return userJid(account, this.ctx.options.incomingAddressing);
  }

  private push(entry: CallEntry, info: BinaryNode): void {
    const attrs = { from: userJid(entry.caller, this.ctx.options.incomingAddressing), id: nextServerId(), t: String(unixNow()), notify: entry.caller.name };
    for (const device of entry.callee.activeDevices()) {
      this.ctx.deliverToCompanion(device, node('call', attrs, [info]));
    }
  }
}
