// Groups (w:g2 queries, w:gp2 notifications, sender-key fan-out) and presence/chatstate.
// Groups default to LID addressing like current WhatsApp: participants are LIDs carrying
// phone_number, message authors are device LIDs with participant_pn. The control API's group routes
// are groups-routes.ts.
//
// The group store is the registry of groups (group-registry.ts: lifecycle, notifications, state) with
// the parts that answer the protocol beside it: the w:g2 queries (group-iq.ts), group pictures
// (group-pictures.ts), group messages (group-messages.ts) and presence and chat states (presence.ts).
import type { Account, DeviceRef } from './accounts';
import type { proto } from './baileys';
import type { GroupRouting, GroupSendingPhone, SimContext } from './context';
import type { BinaryNode } from './node-io';
import type { Group } from './group-model';
import { GroupIq } from './group-iq';
import { GroupMessages } from './group-messages';
import { GroupPictures } from './group-pictures';
import { GroupRegistry } from './group-registry';
import { PresenceHub } from './presence';
import type { SeenChatstate } from './presence';

export class GroupStore extends GroupRegistry implements GroupRouting {
  private readonly iq: GroupIq;
  private readonly pictures: GroupPictures;
  private readonly messages: GroupMessages;
  private readonly presence: PresenceHub;

  constructor(ctx: SimContext) {
    super(ctx);
    this.iq = new GroupIq(ctx, this);
    this.pictures = new GroupPictures(ctx, this);
    this.messages = new GroupMessages(ctx, this);
    this.presence = new PresenceHub(ctx, this);
  }

  stop(): void {
    this.presence.stop();
  }

  handleIq(sender: DeviceRef, iq: BinaryNode): Promise<BinaryNode> {
    return this.iq.handleIq(sender, iq);
  }

  /** Sets, removes (`set` without a picture) or reads a group's picture; members only, admins only when the group is locked. */
  handlePictureIq(sender: DeviceRef, iq: BinaryNode, groupJid: string): BinaryNode {
    return this.pictures.handlePictureIq(sender, iq, groupJid);
  }

  /** Sets (a JPEG) or removes the group's picture; every member's devices get the `picture` notification. */
  setPicture(group: Group, actor: Account, bytes: Buffer | undefined): void {
    this.pictures.setPicture(group, actor, bytes);
  }

  /** Fans a group message out: skmsg to everyone, plus the per-device pkmsg/msg carrying the sender key. */
  route(sender: DeviceRef, stanza: BinaryNode, t: number): string | undefined {
    return this.messages.route(sender, stanza, t);
  }

  /** Group message from a simulated phone (sender keys via Baileys' GroupCipher). */
  sendFromPhone(phone: GroupSendingPhone, groupJid: string, message: proto.IMessage, id: string): Promise<void> {
    return this.messages.sendFromPhone(phone, groupJid, message, id);
  }

  onPresence(sender: DeviceRef, stanza: BinaryNode): void {
    this.presence.onPresence(sender, stanza);
  }

  setPresence(account: Account, type: 'available' | 'unavailable'): void {
    this.presence.setPresence(account, type);
  }

  /** composing/paused/recording from a device or phone to a user or group. */
  forwardChatstate(from: Account, to: string | undefined, state: BinaryNode | undefined, except?: DeviceRef): void {
    this.presence.forwardChatstate(from, to, state, except);
  }

  /** The chat states addressed to an account (directly or to one of its groups), oldest first. */
  chatstatesOf(phone: string): SeenChatstate[] {
    return this.presence.chatstatesOf(phone);
  }
}
