// An account's own profile as WhatsApp keeps it: the push name (app-state `setting_pushName` in
// `critical_block`, Baileys' updateProfileName) and the profile picture (`w:profile:picture`: a set
// with a JPEG, a set without one removes it, a get answers its URL). A new or removed picture is told
// to the account's other devices and to the people it talks with (`<notification type="picture">`,
// which Baileys turns into contacts.update imgUrl changed/removed), as WhatsApp does.
import { randomInt } from 'crypto';
import type { Account, LinkedDevice } from './accounts';
import { decodeAppState } from './app-state';
import { nextServerId } from './connection';
import { SimError } from './errors';
import type { SimContext } from './context';
import type { BinaryNode } from './node-io';
import { child, childBytes, iqError, iqResult, node, unixNow } from './node-io';

export interface ProfilePicture {
  id: string;
  /** The JPEG as the device sent it. */
  bytes: Buffer;
  /** Seconds since the epoch. */
  t: number;
}

/** Where the picture is said to be served (WhatsApp's CDN naming); the bytes are served by the control API. */
export function pictureUrl(account: Account, picture: ProfilePicture, type: 'image' | 'preview'): string {
  return `https://pps.whatsapp.net/v/t61.24694-24/${account.phone}_${picture.id}_${type}.jpg`;
}

/** The pictures as the state file keeps them (JPEG in base64), by phone number. */
export type ProfileState = Array<{ phone: string; id: string; jpeg: string; t: number }>;

export class ProfileStore {
  private readonly pictures = new Map<string, ProfilePicture>();

  toState(): ProfileState {
    return [...this.pictures.entries()].map(([phone, picture]) => ({ phone, id: picture.id, jpeg: picture.bytes.toString('base64'), t: picture.t }));
  }

  restore(state: ProfileState | undefined): void {
    this.pictures.clear();
    for (const { phone, id, jpeg, t } of state ?? []) this.pictures.set(phone, { id, bytes: Buffer.from(jpeg, 'base64'), t });
  }

  constructor(private readonly ctx: Pick<SimContext, 'registry' | 'deliverToCompanion' | 'stateChanged'>) {}

  picture(account: Account): ProfilePicture | undefined {
    return this.pictures.get(account.phone);
  }

  /** `w:profile:picture` for a user: set (or remove) one's own picture, or read anyone's. */
  handlePictureIq(device: LinkedDevice, iq: BinaryNode): BinaryNode {
    const me = device.account;
    if (iq.attrs.type !== 'set') {
      const target = iq.attrs.target ? this.ctx.registry.resolveUser(iq.attrs.target) : me;
      const picture = target ? this.pictures.get(target.phone) : undefined;
      if (!target || !picture) return iqError(iq, 404, 'item-not-found');
      // The owner's privacy setting decides who may see it.
      if (target !== me && target.privacy.profile === 'none') return iqError(iq, 401, 'not-authorized');
      const type = child(iq, 'picture')?.attrs.type === 'image' ? 'image' : 'preview';
      const url = pictureUrl(target, picture, type);
      return iqResult(iq, [node('picture', { id: picture.id, type, url, direct_path: new URL(url).pathname })]);
    }
    if (iq.attrs.target && this.ctx.registry.resolveUser(iq.attrs.target) !== me) return iqError(iq, 403, 'forbidden');
    const bytes = childBytes(iq, 'picture');
    if (bytes && bytes.length) {
      // WhatsApp takes a JPEG (Baileys sends a 640×640 one).
      if (bytes[0] !== 0xff || bytes[1] !== 0xd8) return iqError(iq, 406, 'not-acceptable');
      this.pictures.set(me.phone, { id: String(unixNow() * 1000 + randomInt(1000)), bytes: Buffer.from(bytes), t: unixNow() });
    } else {
      this.pictures.delete(me.phone);
    }
    this.announcePicture(me, device);
    this.ctx.stateChanged();
    const picture = this.pictures.get(me.phone);
    return iqResult(iq, picture ? [node('picture', { id: picture.id })] : []);
  }

  /** The phone sets (a JPEG) or removes (null) the account's picture; its devices and contacts are told. */
  setPicture(account: Account, jpeg: Buffer | null): ProfilePicture | undefined {
    if (jpeg) {
      if (jpeg[0] !== 0xff || jpeg[1] !== 0xd8) throw new SimError(400, 'the picture must be a JPEG');
      this.pictures.set(account.phone, { id: String(unixNow() * 1000 + randomInt(1000)), bytes: Buffer.from(jpeg), t: unixNow() });
    } else if (!this.pictures.delete(account.phone)) return undefined;
    this.announcePicture(account);
    this.ctx.stateChanged();
    return this.pictures.get(account.phone);
  }

  /**
   * The push name a device set in app state (`setting_pushName`) becomes the account's name, the one
   * WhatsApp puts on its messages (`notify`). Called after an upload changed `critical_block`.
   */
  async applyPushName(account: Account): Promise<void> {
    const collection = (await decodeAppState(account)).critical_block;
    let name: string | undefined;
    for (const mutation of collection?.mutations ?? []) {
      const value = (mutation.action?.pushNameSetting ?? null) as { name?: string } | null;
      if (value?.name) name = value.name;
    }
    if (name && name !== account.name) {
      account.name = name;
      this.ctx.stateChanged();
    }
  }

  /** `<notification type="picture">` to the account's other devices and to the devices of everyone it talked with. */
  private announcePicture(account: Account, except?: LinkedDevice): void {
    const picture = this.pictures.get(account.phone);
    const change = picture ? node('set', { jid: account.jid, id: picture.id }) : node('delete', { jid: account.jid });
    const stanza = () => node('notification', { from: account.jid, type: 'picture', id: nextServerId(), t: String(unixNow()) }, [change]);
    const audience = new Set<Account>([account, ...this.peersOf(account)]);
    for (const member of audience) for (const device of member.activeDevices()) if (device !== except) this.ctx.deliverToCompanion(device, stanza());
  }

  /** The accounts this one exchanged messages with. */
  private peersOf(account: Account): Account[] {
    const ours = new Set([account.jid, account.lidJid]);
    const wrote = new Set(account.inbox.map((entry) => entry.from));
    return this.ctx.registry
      .all()
      .filter((other) => other !== account && (wrote.has(other.jid) || wrote.has(other.lidJid) || other.inbox.some((entry) => ours.has(entry.from))));
  }
}
