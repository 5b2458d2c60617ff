// Voice/video call signalling from simulated phones to linked devices: offer, then reject
// (from the device) or terminate/timeout (from the phone). No media, only what Baileys emits as
// `call` events.
import { randomBytes } from 'crypto';
import { userJid } from './accounts';
import type { Account, DeviceRef } from './accounts';
import type { SimContext } from './context';
import { nextServerId } from './connection';
import { SimError } from './errors';
import type { BinaryNode } from './node-io';
import { node, unixNow } from './node-io';

export interface CallRecord {
  id: string;
  from: string;
  to: string;
  video: boolean;
  status: 'offer' | 'reject' | 'accept' | 'terminate' | 'timeout';
  startedAt: number;
  endedAt?: number;
  rejectedBy?: string;
}

export class CallCenter {
  private readonly calls = new Map<string, { record: CallRecord; caller: Account; callee: Account; timer?: NodeJS.Timeout }>();

  constructor(private readonly ctx: SimContext) {}

  list(phone: string): CallRecord[] {
    return [...this.calls.values()].filter((c) => c.caller.phone === phone || c.callee.phone === phone).map((c) => c.record);
  }

  /** The caller's phone rings every linked device of the callee. */
  offer(caller: Account, callee: Account, options: { video?: boolean; timeoutMs?: number } = {}): CallRecord {
    if (caller === callee) throw new SimError(400, 'cannot call yourself');
    const id = randomBytes(16).toString('hex').toUpperCase();
    const record: CallRecord = { id, from: caller.jid, to: callee.jid, video: !!options.video, status: 'offer', startedAt: Date.now() };
    const entry: { record: CallRecord; caller: Account; callee: Account; timer?: NodeJS.Timeout } = { record, caller, callee };
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
      this.push(entry, node('terminate', { 'call-id': id, 'call-creator': this.creator(entry.caller), reason: reason === 'timeout' ? 'timeout' : undefined }));
    }
    return entry.record;
  }

  /** `<call><reject|accept call-id/></call>` from a linked device. */
  onDeviceCall(sender: DeviceRef, stanza: BinaryNode): void {
    const action = Array.isArray(stanza.content) ? stanza.content[0] : undefined;
    const id = action?.attrs['call-id'];
    const entry = id ? this.calls.get(id) : undefined;
    if (!entry || entry.record.status !== 'offer' || !action) return;
    if (action.tag === 'reject' || action.tag === 'accept') {
      if (entry.timer) clearTimeout(entry.timer);
      entry.record.status = action.tag;
      entry.record.endedAt = Date.now();
      entry.record.rejectedBy = sender.account.jid;
    }
  }

  stop(): void {
    for (const entry of this.calls.values()) if (entry.timer) clearTimeout(entry.timer);
  }

  private creator(account: Account): string {
    return userJid(account, this.ctx.options.incomingAddressing);
  }

  private push(entry: { caller: Account; callee: Account }, info: BinaryNode): void {
    const attrs = { from: userJid(entry.caller, this.ctx.options.incomingAddressing), id: nextServerId(), t: String(unixNow()), notify: entry.caller.name };
    for (const device of entry.callee.activeDevices()) {
      this.ctx.deliverToCompanion(device, node('call', attrs, [info]));
    }
  }
}
