// Answers every `<iq>` Baileys sends (B8 table and beyond). Unknown queries get a quick
// `501 feature-not-implemented` error instead of silence, so nothing waits 60 s for a reply.
import type { LinkedDevice } from './accounts';
import type { Connection } from './connection';
import type { SimContext } from './context';
import type { BinaryNode } from './node-io';
import { child, childBytes, children, encodeBigEndian, iqError, iqResult, node, readUIntBE } from './node-io';
import type { PreKeyBundle } from './signal-device';
import { handleUsync } from './usync';

/** Hooks into the simulator for iqs that change connection or pairing state. */
export interface IqHooks {
  activate(connection: Connection, device: LinkedDevice): void;
  logoutDevice(device: LinkedDevice, reason: string): void;
  onLinkCodeHello(connection: Connection, iq: BinaryNode): BinaryNode;
  onLinkCodeFinish(connection: Connection, iq: BinaryNode): BinaryNode | undefined;
  handleAppState(device: LinkedDevice, iq: BinaryNode): Promise<BinaryNode>;
  handleGroupIq(device: LinkedDevice, iq: BinaryNode): Promise<BinaryNode>;
  handleMediaConn(iq: BinaryNode): BinaryNode;
  handleMex(device: LinkedDevice, iq: BinaryNode): BinaryNode;
  handleNewsletterIq(device: LinkedDevice, iq: BinaryNode): BinaryNode;
  /** `w:biz` (business profile, categories) and `w:biz:catalog` (the product catalogue). */
  handleBusinessIq(device: LinkedDevice, iq: BinaryNode): BinaryNode;
  /** `w:profile:picture` of a user: one's own picture set or removed, anyone's read. */
  handlePicture(device: LinkedDevice, iq: BinaryNode): BinaryNode;
  /** The account's other devices learn of a blocklist change one of them made. */
  blocklistChanged?(account: LinkedDevice['account'], items: Array<{ jid: string; action: 'block' | 'unblock' }>, except?: LinkedDevice): void;
}

function bundleNode(jid: string, bundle: PreKeyBundle): BinaryNode {
  const content: BinaryNode[] = [
    node('registration', {}, encodeBigEndian(bundle.registrationId, 4)),
    node('type', {}, Buffer.from([5])),
    node('identity', {}, bundle.identityKey),
    node('skey', {}, [
      node('id', {}, encodeBigEndian(bundle.signedPreKey.keyId, 3)),
      node('value', {}, bundle.signedPreKey.publicKey),
      node('signature', {}, bundle.signedPreKey.signature),
    ]),
  ];
  if (bundle.preKey) {
    content.push(node('key', {}, [node('id', {}, encodeBigEndian(bundle.preKey.keyId, 3)), node('value', {}, bundle.preKey.publicKey)]));
  }
  return node('user', { jid }, content);
}

export class IqRouter {
  constructor(
    private readonly ctx: SimContext,
    private readonly hooks: IqHooks,
  ) {}

  async handle(connection: Connection, iq: BinaryNode, device: LinkedDevice | undefined): Promise<void> {
    const reply = await this.answer(connection, iq, device);
    if (reply) connection.sendNode(reply);
  }

  private async answer(connection: Connection, iq: BinaryNode, device: LinkedDevice | undefined): Promise<BinaryNode | undefined> {
    const { xmlns, type } = iq.attrs;
    const first = Array.isArray(iq.content) ? iq.content[0]?.tag : undefined;

    // Available before login too: keepalive and the pairing-code handshake.
    if (xmlns === 'w:p') {
      return connection.ignorePings ? undefined : iqResult(iq);
    }
    if (xmlns === 'md' && first === 'link_code_companion_reg') {
      const stage = child(iq, 'link_code_companion_reg')?.attrs.stage;
      if (stage === 'companion_hello') return this.hooks.onLinkCodeHello(connection, iq);
      if (stage === 'companion_finish') return this.hooks.onLinkCodeFinish(connection, iq);
      return iqError(iq, 400, 'bad-request');
    }
    if (!device) {
      return iqError(iq, 401, 'not-authorized');
    }

    switch (xmlns) {
      case 'encrypt':
        return this.encrypt(iq, device, first);
      case 'passive':
        if (first === 'active') {
          connection.sendNode(iqResult(iq));
          this.hooks.activate(connection, device);
          return undefined;
        }
        connection.active = false;
        return iqResult(iq);
      case 'usync':
        if (child(child(child(iq, 'usync'), 'query'), 'devices')) device.deviceListQueries++;
        return handleUsync(this.ctx, iq);
      case 'abt':
        return iqResult(iq, [node('props', { protocol: '1', hash: 'wa-sim-1', refresh: '86400' }, [])]);
      case 'blocklist':
        if (type === 'get') {
          device.blocklistQueries++;
          return iqResult(iq, [
            node(
              'list',
              {},
              [...device.account.blocklist].map((jid) => node('item', { jid })),
            ),
          ]);
        }
        for (const item of children(iq, 'item')) {
          if (item.attrs.action === 'block') device.account.blocklist.add(item.attrs.jid);
          else device.account.blocklist.delete(item.attrs.jid);
        }
        this.hooks.blocklistChanged?.(
          device.account,
          children(iq, 'item').map((item) => ({ jid: item.attrs.jid, action: item.attrs.action === 'block' ? ('block' as const) : ('unblock' as const) })),
          device,
        );
        return iqResult(iq);
      case 'privacy':
        return this.privacy(iq, device, first);
      case 'md':
        if (first === 'remove-companion-device') {
          const jid = child(iq, 'remove-companion-device')?.attrs.jid;
          const target = jid ? this.ctx.registry.findDevice(jid) : device;
          connection.sendNode(iqResult(iq));
          if (target && target.account === device.account) this.hooks.logoutDevice(target, 'user_initiated');
          return undefined;
        }
        return iqError(iq, 501, 'feature-not-implemented');
      case 'w:sync:app:state':
        return this.hooks.handleAppState(device, iq);
      case 'w:g2':
        return this.hooks.handleGroupIq(device, iq);
      case 'w:m':
        return this.hooks.handleMediaConn(iq);
      case 'w:mex':
        return this.hooks.handleMex(device, iq);
      case 'newsletter':
        return this.hooks.handleNewsletterIq(device, iq);
      case 'w:biz':
      case 'w:biz:catalog':
        return this.hooks.handleBusinessIq(device, iq);
      case 'w:stats':
        return iqResult(iq);
      case 'status': {
        if (type === 'set') return iqResult(iq);
        if (first !== 'privacy') return iqError(iq, 404, 'item-not-found');
        // The status (story) audience: the default list first, its users for blacklist/whitelist; an account that
        // never stored one is answered 404, as whatsmeow's GetStatusPrivacy expects (broadcast.go:102-104).
        if (!device.account.statusPrivacy) return iqError(iq, 404, 'item-not-found');
        const { type: audience, list } = device.account.statusPrivacy;
        return iqResult(iq, [
          node('privacy', {}, [
            node(
              'list',
              { type: audience, default: 'true' },
              list.map((jid) => node('user', { jid })),
            ),
          ]),
        ]);
      }
      case 'w:profile:picture': {
        // A group's picture: the group keeps it (see GroupStore.handlePictureIq).
        const target = iq.attrs.target ?? '';
        if (target.endsWith('@g.us')) return this.ctx.groups.handlePictureIq({ account: device.account, deviceId: device.deviceId }, iq, target);
        return this.hooks.handlePicture(device, iq);
      }
      default:
        this.ctx.logger.debug({ xmlns, type, first }, 'unhandled iq');
        return iqError(iq, 501, 'feature-not-implemented');
    }
  }

  private encrypt(iq: BinaryNode, device: LinkedDevice, first: string | undefined): BinaryNode {
    switch (first) {
      case 'count': {
        // With initialPrekeyCount > 0 (load mode) a fresh device is told it has enough, so it skips the 812-key upload.
        const stored = device.keys.preKeys.size;
        const value = stored > 0 ? stored : this.ctx.options.initialPrekeyCount;
        return iqResult(iq, [node('count', { value: String(value) })]);
      }
      case 'digest':
        return iqResult(iq, [node('digest', {}, [])]);
      case 'rotate': {
        const skey = child(child(iq, 'rotate'), 'skey');
        this.applySignedPreKey(device, skey);
        return iqResult(iq);
      }
      case 'key':
        return this.fetchKeys(iq);
      default: {
        // Prekey upload: <registration><type><identity><list><key>…</list><skey>.
        const list = child(iq, 'list');
        if (list || child(iq, 'skey')) {
          for (const key of children(list, 'key')) {
            const id = readUIntBE(childBytes(key, 'id'));
            const value = childBytes(key, 'value');
            if (id !== undefined && value) device.keys.preKeys.set(id, value);
          }
          const identity = childBytes(iq, 'identity');
          if (identity && identity.length === 32) device.keys.identityKey = identity;
          const registration = readUIntBE(childBytes(iq, 'registration'));
          if (registration !== undefined) device.keys.registrationId = registration;
          this.applySignedPreKey(device, child(iq, 'skey'));
          return iqResult(iq);
        }
        return iqError(iq, 501, 'feature-not-implemented');
      }
    }
  }

  private applySignedPreKey(device: LinkedDevice, skey: BinaryNode | undefined): void {
    const keyId = readUIntBE(childBytes(skey, 'id'));
    const publicKey = childBytes(skey, 'value');
    const signature = childBytes(skey, 'signature');
    if (keyId !== undefined && publicKey && signature) {
      device.keys.signedPreKey = { keyId, publicKey, signature };
    }
  }

  private fetchKeys(iq: BinaryNode): BinaryNode {
    const users: BinaryNode[] = [];
    for (const user of children(child(iq, 'key'), 'user')) {
      const jid = user.attrs.jid;
      const ref = jid ? this.ctx.registry.resolveDevice(jid) : undefined;
      if (!ref) continue;
      if (ref.deviceId === 0) {
        users.push(bundleNode(jid, ref.account.phoneBundle()));
      } else {
        const target = ref.account.devices.get(ref.deviceId);
        if (target) users.push(bundleNode(jid, target.takeBundle()));
      }
    }
    return iqResult(iq, [node('list', {}, users)]);
  }

  private privacy(iq: BinaryNode, device: LinkedDevice, first: string | undefined): BinaryNode {
    const account = device.account;
    if (first === 'tokens') {
      // tctoken issuance: each contact gets the token by a privacy_token notification; the answer echoes
      // the token nodes without content (the token is the contact's to use, not ours: privacy-tokens.ts).
      device.privacyTokenIssues++;
      return iqResult(iq, [node('tokens', {}, this.ctx.privacyTokens.onIssueIq(account, child(iq, 'tokens')))]);
    }
    if (iq.attrs.type === 'set') {
      for (const category of children(child(iq, 'privacy'), 'category')) {
        if (category.attrs.name && category.attrs.value) account.privacy[category.attrs.name] = category.attrs.value;
      }
      return iqResult(iq);
    }
    return iqResult(iq, [
      node(
        'privacy',
        {},
        Object.entries(account.privacy).map(([name, value]) => node('category', { name, value })),
      ),
    ]);
  }
}
