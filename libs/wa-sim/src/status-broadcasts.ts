// Status updates (stories): a device sends `<message to="status@broadcast">` with a sender-key
// `skmsg` and, in `<participants>`, one `<to>` per recipient device carrying the sender key (Baileys
// puts every device of `statusJidList` there, messages-send.js:527). The server fans the message out
// to exactly those devices, as `from="status@broadcast"` with the author in `participant`.
import { deviceJid, deviceRefKey } from './accounts';
import type { Account, DeviceRef } from './accounts';
import type { SimContext } from './context';
import type { RouteSpec } from './route-spec';
import { SimError } from './errors';
import type { BinaryNode } from './node-io';
import { child, children, node } from './node-io';

export const STATUS_BROADCAST_JID = 'status@broadcast';

/** One status an account posted, as the server saw it. */
export interface PostedStatus {
  id: string;
  /** The posting device. */
  from: string;
  type: string;
  t: number;
  /** Devices the status was addressed to (device JIDs as the sender named them). */
  recipientDevices: string[];
  /** Phone numbers of the accounts reached. */
  recipients: string[];
}

const STATUS_LOG_LIMIT = 1_000;

export class StatusBroadcasts {
  private readonly posted = new Map<string, PostedStatus[]>();

  constructor(private readonly ctx: SimContext) {}

  /** A status from a device: delivered to every recipient device named in `<participants>`. */
  route(sender: DeviceRef, stanza: BinaryNode, t: number): BinaryNode {
    const id = stanza.attrs.id;
    const ack = node('ack', { class: 'message', id, from: STATUS_BROADCAST_JID, t: String(t) });
    const skmsg = children(stanza, 'enc').find((enc) => enc.attrs.type === 'skmsg');
    if (!skmsg) {
      ack.attrs.error = '400';
      return ack;
    }
    // Receipts of a status come back from the recipients like group receipts (participant = reader).
    this.ctx.router.remember({ id, sender, chat: STATUS_BROADCAST_JID, chatForm: 'lid', type: stanza.attrs.type ?? 'text', t, forwarded: new Set() });
    const attrs: Record<string, string | undefined> = {
      from: STATUS_BROADCAST_JID,
      id,
      t: String(t),
      type: stanza.attrs.type ?? 'text',
      notify: sender.account.name,
      participant: deviceJid(sender.account, sender.deviceId, 'lid'),
      participant_pn: sender.account.jid,
    };
    const recipientDevices: string[] = [];
    const reached = new Set<string>();
    for (const toNode of children(child(stanza, 'participants'), 'to')) {
      const enc = child(toNode, 'enc');
      const target = toNode.attrs.jid ? this.ctx.registry.resolveDevice(toNode.attrs.jid) : undefined;
      if (!enc || !target || deviceRefKey(target) === deviceRefKey(sender)) continue;
      recipientDevices.push(toNode.attrs.jid);
      if (target.account !== sender.account) reached.add(target.account.phone);
      this.ctx.deliver(target, node('message', attrs, [node('enc', { ...enc.attrs }, enc.content), node('enc', { ...skmsg.attrs }, skmsg.content)]), sender);
    }
    const log = this.posted.get(sender.account.phone) ?? [];
    log.push({ id, from: deviceJid(sender.account, sender.deviceId, 'pn'), type: attrs.type!, t, recipientDevices, recipients: [...reached] });
    if (log.length > STATUS_LOG_LIMIT) log.shift();
    this.posted.set(sender.account.phone, log);
    return ack;
  }

  /** Statuses an account's devices posted, oldest first. */
  postedBy(account: Account): PostedStatus[] {
    return this.posted.get(account.phone) ?? [];
  }

  routes(): RouteSpec[] {
    return [
      {
        method: 'GET',
        path: '/sim/accounts/{phone}/statuses',
        handler: ({ params }) => {
          const account = this.ctx.registry.resolveUser(params.phone);
          if (!account) throw new SimError(404, `no account ${params.phone}`);
          return this.postedBy(account);
        },
      },
    ];
  }
}
