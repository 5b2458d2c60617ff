// The simulator's answers to the IQs the iq router hands up (IqHooks): app state, pictures, groups, mex,
// newsletters, business, media_conn and pairing codes, each with the faults that act on it; and the
// notifications that tell an account's other devices what changed (server_sync, account_sync).
import { randomBytes } from 'crypto';
import { jidDecode } from './baileys';
import type { ChatModification } from './baileys';
import { digitsOnly } from './accounts';
import type { Account, AccountRegistry, DeviceRef, LinkedDevice } from './accounts';
import { handleAppStateIq, modificationCollection, phonePatch } from './app-state';
import type { Forger } from './app-state';
import type { BusinessStore } from './business';
import type { CompanionLogin } from './companion-login';
import { nextServerId } from './connection';
import type { Connection } from './connection';
import type { ResolvedOptions } from './context';
import type { FaultController } from './faults';
import type { GroupStore } from './groups';
import type { IqHooks } from './iq-router';
import type { Logger } from './logger';
import type { MediaServer } from './media-server';
import type { NewsletterMex } from './newsletter-mex';
import type { NewsletterStore } from './newsletters';
import type { BinaryNode } from './node-io';
import { child, children, iqError, iqResult, node, S_WHATSAPP_NET, unixNow } from './node-io';
import type { PairingService } from './pairing-service';
import type { ProfileStore } from './profile';

/** What the IQ answers need from the simulator. */
export interface IqHookDeps {
  readonly registry: AccountRegistry;
  readonly logger: Logger;
  readonly faults: FaultController;
  readonly pairing: PairingService;
  readonly media?: MediaServer;
  readonly profiles: ProfileStore;
  readonly groups: GroupStore;
  readonly business: BusinessStore;
  readonly newsletters: NewsletterStore;
  readonly newsletterMex: NewsletterMex;
  readonly options: ResolvedOptions;
  matchesDevice(filter: string, ref: DeviceRef): boolean;
  deliver(target: DeviceRef, stanza: BinaryNode, sender?: DeviceRef): void;
  deliverToCompanion(device: LinkedDevice, stanza: BinaryNode): void;
  stateChanged(): void;
}

export class SimulatorIqHooks implements IqHooks {
  constructor(
    private readonly sim: IqHookDeps,
    private readonly login: CompanionLogin,
  ) {}

  activate(connection: Connection, device: LinkedDevice): void {
    this.login.activate(connection, device);
  }

  logoutDevice(device: LinkedDevice, reason: string): void {
    this.login.logoutDevice(device, reason);
  }

  onLinkCodeHello(connection: Connection, iq: BinaryNode): BinaryNode {
    const account = this.sim.registry.get(digitsOnly(jidDecode(child(iq, 'link_code_companion_reg')?.attrs.jid ?? '')?.user ?? ''));
    const refusal = this.sim.faults.take('pair-code-refused', (f) => !!account && this.sim.matchesDevice(f, { account, deviceId: 0 }));
    if (refusal) return iqError(iq, refusal.code ?? 429, refusal.text ?? (refusal.code === 400 ? 'bad-request' : 'rate-overlimit'));
    return this.sim.pairing.onLinkCodeHello(connection, iq);
  }

  onLinkCodeFinish(connection: Connection, iq: BinaryNode): BinaryNode | undefined {
    return this.sim.pairing.onLinkCodeFinish(connection, iq);
  }

  async handleAppState(device: LinkedDevice, iq: BinaryNode): Promise<BinaryNode> {
    const matches = (f: string) => this.sim.matchesDevice(f, { account: device.account, deviceId: device.deviceId });
    const uploads = children(child(iq, 'sync'), 'collection')
      .filter((collection) => children(collection, 'patch').length > 0)
      .map((collection) => collection.attrs.name);
    const refusal = uploads.length ? this.sim.faults.take('app-state', matches) : undefined;
    if (refusal) return iqError(iq, refusal.code ?? 400, 'fault: app-state patch refused');
    // The phone's change lands while this upload is in flight: the upload's base is stale (a 409).
    const race = uploads.length
      ? this.sim.faults.take('app-state-conflict', matches, (rule) => uploads.includes(modificationCollection(rule.jid, rule.mod as ChatModification) ?? ''))
      : undefined;
    if (race) {
      this.announceAppState(device.account, [await phonePatch(device.account, race.jid, race.mod as ChatModification)]);
      this.sim.stateChanged();
    }
    const external = this.sim.media ? this.sim.faults.peek('app-state-external', matches) : undefined;
    const serving = external && this.sim.media ? { media: this.sim.media, snapshot: external.snapshot, externalAbove: external.externalAbove } : undefined;
    // A forged answer (the `app-state-bad-mac` fault): the next content served of the collection does not match its MAC.
    const forge: Forger = (name) => {
      const rule = this.sim.faults.take('app-state-bad-mac', matches, (candidate) => !candidate.collection || candidate.collection === name);
      return rule ? { value: rule.value } : undefined;
    };
    const { reply, changed } = await handleAppStateIq(device.account, iq, serving, forge);
    if (changed.length) this.announceAppState(device.account, changed, device);
    if (changed.some((collection) => collection.name === 'critical_block'))
      void this.sim.profiles.applyPushName(device.account).catch((error: unknown) => this.sim.logger.warn({ err: error }, 'push name not applied'));
    return reply;
  }

  /** `w:profile:picture` of a user (a group's is the group store's). */
  handlePicture(device: LinkedDevice, iq: BinaryNode): BinaryNode {
    return this.sim.profiles.handlePictureIq(device, iq);
  }

  /** `server_sync` tells the other devices to pull the collections that changed. */
  announceAppState(account: Account, changed: Array<{ name: string; version: number }>, except?: LinkedDevice): void {
    for (const other of account.activeDevices()) {
      if (other === except) continue;
      this.sim.deliverToCompanion(
        other,
        node(
          'notification',
          { from: S_WHATSAPP_NET, id: nextServerId(), type: 'server_sync', t: String(unixNow()) },
          changed.map(({ name, version }) => node('collection', { name, version: String(version) })),
        ),
      );
    }
  }

  /**
   * `<notification type=account_sync><blocklist>` to the account's devices but the one that made the
   * change; like any delivery it can be lost with the `drop-deliveries` fault.
   */
  blocklistChanged(account: Account, items: Array<{ jid: string; action: 'block' | 'unblock' }>, except?: LinkedDevice): void {
    for (const other of account.activeDevices()) {
      if (other === except || other.deviceId === 0) continue;
      this.sim.deliver(
        { account, deviceId: other.deviceId },
        node('notification', { from: S_WHATSAPP_NET, id: nextServerId(), type: 'account_sync', t: String(unixNow()) }, [
          node(
            'blocklist',
            {},
            items.map((item) => node('item', { jid: item.jid, action: item.action })),
          ),
        ]),
      );
    }
  }

  handleGroupIq(device: LinkedDevice, iq: BinaryNode): Promise<BinaryNode> {
    return this.sim.groups.handleIq({ account: device.account, deviceId: device.deviceId }, iq);
  }

  handleMex(device: LinkedDevice, iq: BinaryNode): BinaryNode {
    const sender = { account: device.account, deviceId: device.deviceId };
    if (this.sim.business.isLimitsQuery(iq)) {
      const failure = this.sim.faults.take('limits-query-error', (f) => this.sim.matchesDevice(f, sender));
      if (failure) return iqError(iq, failure.code ?? 500, failure.code === 500 || !failure.code ? 'internal-server-error' : 'error');
    }
    const limits = this.sim.business.handleMex(sender, iq);
    if (limits) return limits;
    return this.sim.newsletterMex.handle({ account: device.account, deviceId: device.deviceId }, iq);
  }

  handleNewsletterIq(device: LinkedDevice, iq: BinaryNode): BinaryNode {
    return this.sim.newsletters.handleIq({ account: device.account, deviceId: device.deviceId }, iq);
  }

  handleBusinessIq(device: LinkedDevice, iq: BinaryNode): BinaryNode {
    const sender = { account: device.account, deviceId: device.deviceId };
    return iq.attrs.xmlns === 'w:biz:catalog' ? this.sim.business.handleCatalogIq(sender, iq) : this.sim.business.handleBizIq(sender, iq);
  }

  handleMediaConn(iq: BinaryNode): BinaryNode {
    if (!this.sim.options.mediaHost) return iqError(iq, 501, 'feature-not-implemented');
    return iqResult(iq, [
      node('media_conn', { auth: randomBytes(16).toString('base64url'), ttl: '3600', auth_ttl: '21600', max_buckets: '12' }, [
        node('host', { hostname: this.sim.options.mediaHost, maxContentLengthBytes: String(100 * 1024 * 1024) }),
      ]),
    ]);
  }
}
