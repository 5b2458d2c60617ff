// Group pictures (w:profile:picture with a group target): members read them, set or remove them (admins
// only when the group is locked), and every member's devices get the `picture` notification.
import { randomInt } from 'crypto';
import type { Account, DeviceRef } from './accounts';
import type { SimContext } from './context';
import { nextServerId } from './connection';
import type { BinaryNode } from './node-io';
import { child, childBytes, iqError, iqResult, node, unixNow } from './node-io';
import { isGroupAdmin, memberDevices } from './group-model';
import type { Group } from './group-model';
import type { GroupRegistry } from './group-registry';

export class GroupPictures {
  constructor(
    private readonly ctx: SimContext,
    private readonly groups: GroupRegistry,
  ) {}

  /** Sets, removes (`set` without a picture) or reads a group's picture; members only, admins only when the group is locked. */
  handlePictureIq(sender: DeviceRef, iq: BinaryNode, groupJid: string): BinaryNode {
    const group = this.groups.get(groupJid);
    if (!group) return iqError(iq, 404, 'item-not-found');
    const me = sender.account;
    if (!group.members.has(me.phone)) return iqError(iq, 403, 'forbidden');
    if (iq.attrs.type !== 'set') {
      if (!group.picture) return iqError(iq, 404, 'item-not-found');
      const type = child(iq, 'picture')?.attrs.type === 'image' ? 'image' : 'preview';
      const url = `https://pps.whatsapp.net/v/t61.24694-24/${group.picture.id}_${type}.jpg`;
      return iqResult(iq, [node('picture', { id: group.picture.id, type, url, direct_path: new URL(url).pathname })]);
    }
    if (group.locked && !isGroupAdmin(group, me)) return iqError(iq, 403, 'not-admin');
    const bytes = childBytes(iq, 'picture');
    // WhatsApp takes a JPEG (Baileys sends 640×640).
    if (bytes?.length && (bytes[0] !== 0xff || bytes[1] !== 0xd8)) return iqError(iq, 406, 'not-acceptable');
    this.setPicture(group, me, bytes?.length ? Buffer.from(bytes) : undefined);
    return iqResult(iq, group.picture ? [node('picture', { id: group.picture.id })] : []);
  }

  /** Sets (a JPEG) or removes the group's picture; every member's devices get the `picture` notification. */
  setPicture(group: Group, actor: Account, bytes: Buffer | undefined): void {
    if (!bytes && !group.picture) return; // removing a picture the group does not have changes nothing
    const author = this.groups.memberJid(group, actor);
    group.picture = bytes ? { id: String(unixNow() * 1000 + randomInt(1000)), bytes, author, t: unixNow() } : undefined;
    const change = group.picture ? node('set', { jid: group.jid, id: group.picture.id, author }) : node('delete', { jid: group.jid, author });
    const stanza = node(
      'notification',
      {
        from: group.jid,
        type: 'picture',
        id: nextServerId(),
        t: String(unixNow()),
        participant: author,
        participant_pn: group.addressingMode === 'lid' ? actor.jid : undefined,
        notify: actor.name,
      },
      [change],
    );
    for (const target of memberDevices(group)) {
      const device = target.deviceId === 0 ? undefined : target.account.devices.get(target.deviceId);
      if (device) this.ctx.deliverToCompanion(device, stanza);
    }
  }
}

/** Width and height of a baseline or progressive JPEG (its SOF segment); `format` unknown when it is no JPEG. */
export function jpegSize(bytes: Buffer): { width: number; height: number; format: string } {
  if (bytes[0] !== 0xff || bytes[1] !== 0xd8) return { width: 0, height: 0, format: 'unknown' };
  let at = 2;
  while (at + 9 < bytes.length) {
    if (bytes[at] !== 0xff) return { width: 0, height: 0, format: 'jpeg' };
    const marker = bytes[at + 1];
    const length = bytes.readUInt16BE(at + 2);
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: bytes.readUInt16BE(at + 5), width: bytes.readUInt16BE(at + 7), format: 'jpeg' };
    }
    at += 2 + length;
  }
  return { width: 0, height: 0, format: 'jpeg' };
}
