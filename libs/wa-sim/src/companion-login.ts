// A companion's session on the server: the handshake's outcome (registration, login or refusal), the
// switch to active that flushes what queued up while it was away, and its logout; with the faults that
// act on a login (reject-login, client-outdated, latency, ignore-pings).
import { proto } from './baileys';
import type { Account, AccountRegistry, DeviceRef, LinkedDevice } from './accounts';
import { nextServerId } from './connection';
import type { Connection } from './connection';
import { compareWaVersions, parseWaVersion } from './faults';
import type { FaultController } from './faults';
import type { Logger } from './logger';
import { node, S_WHATSAPP_NET, unixNow } from './node-io';
import type { ClientFinish } from './noise-server';
import type { PairingService } from './pairing-service';
import type { PhoneAgent } from './phone';
import { enumName, versionString } from './proto-describe';

// Baileys uploads more when the notified count is below MIN_PREKEY_COUNT (5).
const PREKEY_LOW_THRESHOLD = 4;

/** What a companion's login needs from the simulator. */
export interface LoginDeps {
  readonly registry: AccountRegistry;
  readonly logger: Logger;
  readonly faults: FaultController;
  readonly pairing: PairingService;
  matchesDevice(filter: string, ref: DeviceRef): boolean;
  phoneOf(account: Account): PhoneAgent;
  stateChanged(): void;
}

export class CompanionLogin {
  constructor(private readonly sim: LoginDeps) {}

  /** A companion finished its handshake: register it (pairing), log it in, or refuse it. */
  async onClientFinish(connection: Connection, finish: ClientFinish): Promise<void> {
    const payload = finish.payload;
    if (this.isOutdated(payload)) {
      connection.sendNode(node('failure', { reason: '405', location: 'sim' }));
      connection.close();
      return;
    }
    if (payload.devicePairingData) {
      this.sim.pairing.startRegistration(connection, finish);
      return;
    }
    if (payload.username !== null && payload.username !== undefined) {
      this.login(connection, finish);
      return;
    }
    connection.sendNode(node('failure', { reason: '400', location: 'sim' }));
    connection.close();
  }

  private login(connection: Connection, finish: ClientFinish): void {
    const payload = finish.payload;
    const phone = String(payload.username);
    const deviceId = payload.device ?? 0;
    const account = this.sim.registry.get(phone);
    const device = account?.devices.get(deviceId);
    const ref: DeviceRef | undefined = account ? { account, deviceId } : undefined;
    const rejection = ref ? this.sim.faults.take('reject-login', (f) => this.sim.matchesDevice(f, ref)) : undefined;
    const fail = (reason: number): void => {
      connection.sendNode(node('failure', { reason: String(reason), location: 'sim' }));
      connection.close();
    };
    if (rejection) return fail(rejection.reason ?? 401);
    if (!account || !device || device.status !== 'active' || !device.noiseKey.equals(finish.clientStatic)) {
      return fail(401);
    }
    const previous = device.connection;
    if (previous && previous !== connection && previous.isOpen) {
      // A second login of the same device replaces the first, as on WhatsApp.
      previous.sendNode(node('stream:error', {}, [node('conflict', { type: 'replaced' })]));
      previous.close();
      device.replacedLogins++;
    }
    device.connection = connection;
    device.onPreKeyConsumed = (d) => this.onPreKeyConsumed(d);
    device.loginCount++;
    device.lastLogin = {
      at: Date.now(),
      pushName: payload.pushName ?? undefined,
      passive: payload.passive ?? undefined,
      pull: payload.pull ?? undefined,
      userAgentPlatform: enumName(proto.ClientPayload.UserAgent.Platform, payload.userAgent?.platform),
      appVersion: versionString(payload.userAgent?.appVersion),
      webSubPlatform: enumName(proto.ClientPayload.WebInfo.WebSubPlatform, payload.webInfo?.webSubPlatform),
      connectType: enumName(proto.ClientPayload.ConnectType, payload.connectType),
      connectReason: enumName(proto.ClientPayload.ConnectReason, payload.connectReason),
      lidDbMigrated: payload.lidDbMigrated ?? undefined,
    };
    connection.deviceJid = device.jid;
    connection.active = false;
    const latency = this.sim.faults.peek('latency', (f) => this.sim.matchesDevice(f, { account, deviceId }));
    connection.outboundDelayMs = latency?.delayMs ?? 0;
    connection.ignorePings = !!this.sim.faults.peek('ignore-pings', (f) => this.sim.matchesDevice(f, { account, deviceId }));
    const now = unixNow();
    connection.sendNode(
      node('success', {
        t: String(now),
        lid: device.lidJid,
        props: '1',
        creation: String(Math.floor(device.pairedAt / 1000)),
        location: 'sim',
        display_name: '',
      }),
    );
    this.sim.stateChanged();
  }

  /** `<passive><active/>`: the client is ready; flush what queued up while it was away. */
  activate(connection: Connection, device: LinkedDevice): void {
    if (connection.active) return;
    connection.active = true;
    const offline = [...device.pending.values()];
    for (const stanza of offline) {
      connection.sendNode({ ...stanza, attrs: { ...stanza.attrs, offline: '1' } });
    }
    connection.sendNode(node('ib', { from: S_WHATSAPP_NET }, [node('offline', { count: String(offline.length) })]));
    if (!device.historySent) {
      device.historySent = true;
      this.sim.stateChanged();
      void this.sim
        .phoneOf(device.account)
        .pushInitialSync(device)
        .catch((err: unknown) => {
          this.sim.logger.warn({ err: (err as Error).message }, 'initial sync push failed');
        });
    }
  }

  logoutDevice(device: LinkedDevice, reason: string, via: 'stream-error' | 'failure' = 'stream-error'): void {
    device.status = 'logged-out';
    device.pending.clear();
    this.sim.stateChanged();
    const connection = device.connection;
    device.connection = undefined;
    this.sim.logger.debug({ device: device.jid, reason }, 'device logged out');
    if (connection?.isOpen) {
      if (reason !== 'user_initiated') {
        connection.sendNode(
          via === 'failure'
            ? node('failure', { reason: '401', location: 'sim' })
            : node('stream:error', { code: '401' }, [node('conflict', { type: 'device_removed' })]),
        );
      }
      connection.close();
    }
  }

  /** Like WhatsApp's PreKeyLow: when a device runs short of one-time prekeys, ask it to upload more. */
  private onPreKeyConsumed(device: LinkedDevice): void {
    if (device.keys.preKeys.size !== PREKEY_LOW_THRESHOLD) return;
    const connection = device.connection;
    if (!connection?.isTransportReady || !connection.active) return;
    connection.sendNode(
      node('notification', { from: S_WHATSAPP_NET, type: 'encrypt', id: nextServerId(), t: String(unixNow()) }, [
        node('count', { value: String(device.keys.preKeys.size) }),
      ]),
    );
  }

  /** A login or registration older than a standing client-outdated rule's minVersion (see ClientOutdatedRule). */
  private isOutdated(payload: proto.ClientPayload): boolean {
    const v = payload.userAgent?.appVersion;
    const version = [v?.primary ?? 0, v?.secondary ?? 0, v?.tertiary ?? 0];
    const phone = payload.username !== null && payload.username !== undefined ? String(payload.username) : undefined;
    const account = phone ? this.sim.registry.get(phone) : undefined;
    const ref: DeviceRef | undefined = account ? { account, deviceId: payload.device ?? 0 } : undefined;
    const rule = this.sim.faults.peek('client-outdated', (f) => !!ref && this.sim.matchesDevice(f, ref));
    const min = rule ? parseWaVersion(rule.minVersion) : undefined;
    return !!min && compareWaVersions(version, min) < 0;
  }

  /** Latency and ping faults act on live connections, so re-evaluate them on every change. */
  applyStandingFaults(connections: Iterable<Connection>): void {
    for (const connection of connections) {
      const device = connection.deviceJid ? this.sim.registry.findDevice(connection.deviceJid) : undefined;
      if (!device) continue;
      const ref = { account: device.account, deviceId: device.deviceId };
      connection.outboundDelayMs = this.sim.faults.peek('latency', (f) => this.sim.matchesDevice(f, ref))?.delayMs ?? 0;
      connection.ignorePings = !!this.sim.faults.peek('ignore-pings', (f) => this.sim.matchesDevice(f, ref));
    }
  }
}
