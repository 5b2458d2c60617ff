// Presence and chat states: devices subscribe to a user's presence and get it whenever it changes;
// composing/paused/recording goes to a user's devices or to every member device of a group, and each
// account keeps the chat states addressed to it (what its phone shows).
import { jidDecode } from './baileys';
import { deviceRefKey, userJid } from './accounts';
import type { Account, DeviceRef } from './accounts';
import type { SimContext } from './context';
import type { BinaryNode } from './node-io';
import { node, unixNow } from './node-io';
import { memberDevices } from './group-model';
import type { GroupRegistry } from './group-registry';

type Presence = { type: 'available' | 'unavailable'; last: number };

/** A chat state an account saw: who (`from`), in which chat, composing/paused (`media: audio` when recording). */
export type SeenChatstate = { from: string; chat: string; state: string; media?: string; t: number };

export class PresenceHub {
  private readonly presence = new Map<string, Presence>();
  /** account phone → subscriber devices, with the JID form they subscribed with. */
  private readonly subscribers = new Map<string, Map<string, { ref: DeviceRef; asJid: string }>>();
  /** account phone → chat states addressed to it (directly or to one of its groups), oldest first. */
  private readonly chatstatesSeen = new Map<string, SeenChatstate[]>();

  constructor(
    private readonly ctx: SimContext,
    private readonly groups: Pick<GroupRegistry, 'get' | 'memberJid'>,
  ) {}

  /** The chat states addressed to an account (directly or to one of its groups), oldest first. */
  chatstatesOf(phone: string): SeenChatstate[] {
    return this.chatstatesSeen.get(phone) ?? [];
  }

  stop(): void {
    this.subscribers.clear();
  }

  onPresence(sender: DeviceRef, stanza: BinaryNode): void {
    if (stanza.tag === 'chatstate') {
      this.forwardChatstate(sender.account, stanza.attrs.to, Array.isArray(stanza.content) ? stanza.content[0] : undefined, sender);
      return;
    }
    const type = stanza.attrs.type;
    if (type === 'subscribe' && stanza.attrs.to) {
      const target = this.ctx.registry.resolveUser(stanza.attrs.to);
      if (!target) return;
      const subs = this.subscribers.get(target.phone) ?? new Map<string, { ref: DeviceRef; asJid: string }>();
      subs.set(deviceRefKey(sender), { ref: sender, asJid: stanza.attrs.to });
      this.subscribers.set(target.phone, subs);
      this.sendPresenceTo(sender, target, stanza.attrs.to);
      return;
    }
    if (type === 'available' || type === 'unavailable') {
      this.setPresence(sender.account, type);
    }
  }

  setPresence(account: Account, type: 'available' | 'unavailable'): void {
    this.presence.set(account.phone, { type, last: unixNow() });
    for (const { ref, asJid } of this.subscribers.get(account.phone)?.values() ?? []) {
      this.sendPresenceTo(ref, account, asJid);
    }
  }

  private sendPresenceTo(subscriber: DeviceRef, target: Account, asJid?: string): void {
    if (subscriber.deviceId === 0) return;
    const device = subscriber.account.devices.get(subscriber.deviceId);
    const connection = device?.connection;
    if (!connection?.isTransportReady || !connection.active) return;
    const state = this.presence.get(target.phone) ?? { type: 'unavailable' as const, last: unixNow() - 60 };
    const from = asJid ? `${jidDecode(asJid)?.user}@${jidDecode(asJid)?.server}` : userJid(target, this.ctx.options.incomingAddressing);
    connection.sendNode(node('presence', { from, type: state.type, last: state.type === 'unavailable' ? String(state.last) : undefined }));
  }

  /** composing/paused/recording from a device or phone to a user or group. */
  forwardChatstate(from: Account, to: string | undefined, state: BinaryNode | undefined, except?: DeviceRef): void {
    if (!to || !state) return;
    const content = [node(state.tag, { ...state.attrs })];
    if (to.endsWith('@g.us')) {
      const group = this.groups.get(to);
      if (!group) return;
      for (const { account } of group.members.values()) if (account !== from) this.seeChatstate(account, from, group.jid, state);
      for (const target of memberDevices(group, except)) {
        if (target.account === from || target.deviceId === 0) continue;
        const connection = target.account.devices.get(target.deviceId)?.connection;
        if (connection?.isTransportReady && connection.active) {
          connection.sendNode(node('chatstate', { from: group.jid, participant: this.groups.memberJid(group, from) }, content));
        }
      }
      return;
    }
    const target = this.ctx.registry.resolveUser(to);
    if (!target) return;
    this.seeChatstate(target, from, from.jid, state);
    for (const device of target.activeDevices()) {
      const connection = device.connection;
      if (connection?.isTransportReady && connection.active) {
        connection.sendNode(node('chatstate', { from: userJid(from, this.ctx.options.incomingAddressing) }, content));
      }
    }
  }

  /** What the account's phone shows: who is typing (composing), recording (composing media=audio) or stopped (paused). */
  private seeChatstate(account: Account, from: Account, chat: string, state: BinaryNode): void {
    const seen = this.chatstatesSeen.get(account.phone) ?? [];
    seen.push({ from: from.jid, chat, state: state.tag, ...(state.attrs.media ? { media: state.attrs.media } : {}), t: Date.now() });
    if (seen.length > 500) seen.shift();
    this.chatstatesSeen.set(account.phone, seen);
  }
}
