// Group messages: the fan-out of a device's group message (skmsg to every member device, plus the
// per-device pkmsg/msg carrying the sender key) and a simulated phone's own group sends.
import type { proto } from './baileys';
import { deviceJid, deviceRefKey } from './accounts';
import type { DeviceRef } from './accounts';
import type { GroupSendingPhone, SimContext } from './context';
import { SimError } from './errors';
import type { BinaryNode } from './node-io';
import { child, children, node, unixNow } from './node-io';
import { messageToJson, padMessage, stanzaTypeFor } from './message-codec';
import { isGroupAdmin, memberDevices } from './group-model';
import type { GroupRegistry } from './group-registry';

export class GroupMessages {
  constructor(
    private readonly ctx: SimContext,
    private readonly groups: GroupRegistry,
  ) {}

  /** Fans a group message out: skmsg to everyone, plus the per-device pkmsg/msg carrying the sender key. */
  route(sender: DeviceRef, stanza: BinaryNode, t: number): string | undefined {
    const group = this.groups.get(stanza.attrs.to);
    if (!group) return '404';
    if (!group.members.has(sender.account.phone)) return '403';
    if (group.announce && !isGroupAdmin(group, sender.account)) return '403';
    const id = stanza.attrs.id;
    this.ctx.router.remember({ id, sender, chat: group.jid, chatForm: group.addressingMode, type: stanza.attrs.type ?? 'text', t, forwarded: new Set() });
    const perDevice = new Map<string, BinaryNode>();
    for (const toNode of children(child(stanza, 'participants'), 'to')) {
      const enc = child(toNode, 'enc');
      const target = toNode.attrs.jid ? this.ctx.registry.resolveDevice(toNode.attrs.jid) : undefined;
      if (enc && target) perDevice.set(deviceRefKey(target), enc);
    }
    const directEncs = children(stanza, 'enc');
    const skmsg = directEncs.find((e) => e.attrs.type === 'skmsg');
    // A retry resend names one participant device and carries a single pkmsg/msg.
    const retryTarget = stanza.attrs.participant ? this.ctx.registry.resolveDevice(stanza.attrs.participant) : undefined;
    if (retryTarget) {
      const enc = directEncs[0];
      if (enc) perDevice.set(deviceRefKey(retryTarget), enc);
    }
    const attrs: Record<string, string | undefined> = {
      from: group.jid,
      id,
      t: String(t),
      type: stanza.attrs.type ?? 'text',
      edit: stanza.attrs.edit,
      notify: sender.account.name,
      addressing_mode: group.addressingMode,
      participant: deviceJid(sender.account, sender.deviceId, group.addressingMode),
    };
    if (group.addressingMode === 'lid') attrs.participant_pn = sender.account.jid;
    else attrs.participant_lid = sender.account.lidJid;
    const targets = retryTarget ? [retryTarget] : memberDevices(group, sender);
    for (const target of targets) {
      const content: BinaryNode[] = [];
      const personal = perDevice.get(deviceRefKey(target));
      if (personal) content.push(node('enc', { ...personal.attrs }, personal.content));
      if (skmsg && !retryTarget) content.push(node('enc', { ...skmsg.attrs }, skmsg.content));
      if (!content.length) continue;
      this.ctx.deliver(target, node('message', attrs, content), sender);
    }
    return undefined;
  }

  /** Group message from a simulated phone (sender keys via Baileys' GroupCipher). */
  async sendFromPhone(phone: GroupSendingPhone, groupJid: string, message: proto.IMessage, id: string): Promise<void> {
    const group = this.groups.get(groupJid);
    if (!group) throw new SimError(404, `no group ${groupJid}`);
    const account = phone.account;
    if (!group.members.has(account.phone)) throw new SimError(403, `${account.phone} is not in ${group.jid}`);
    const me = deviceJid(account, 0, group.addressingMode);
    const { ciphertext, senderKeyDistributionMessage } = await account.signal.encryptGroup(group.jid, me, padMessage(message));
    const holdersKey = `${account.phone}:0`;
    const holders = group.senderKeyHolders.get(holdersKey) ?? new Set<string>();
    group.senderKeyHolders.set(holdersKey, holders);
    const skdm = padMessage({ senderKeyDistributionMessage: { groupId: group.jid, axolotlSenderKeyDistributionMessage: senderKeyDistributionMessage } });
    const participants: BinaryNode[] = [];
    for (const target of memberDevices(group, phone.ref)) {
      const key = deviceRefKey(target);
      if (holders.has(key)) continue;
      const { type, ciphertext: enc, jid } = await phone.encryptFor(target, skdm);
      participants.push(node('to', { jid }, [node('enc', { v: '2', type }, enc)]));
      holders.add(key);
    }
    const type = stanzaTypeFor(message);
    account.outbox.set(id, { id, to: group.jid, type, message: messageToJson(message), timestamp: unixNow(), status: 'sent', receipts: [] });
    const content: BinaryNode[] = [];
    if (participants.length) content.push(node('participants', {}, participants));
    content.push(node('enc', { v: '2', type: 'skmsg' }, ciphertext));
    const ack = this.ctx.router.onMessage(phone.ref, node('message', { id, to: group.jid, type, addressing_mode: group.addressingMode }, content));
    if (ack?.attrs.error) throw new SimError(403, `group refused the message (${ack.attrs.error})`);
    phone.onServerAck(id);
  }
}
