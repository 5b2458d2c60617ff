// The simulator: its server side (simulator-server.ts: listener, connections, persistence, delivery, the
// stanzas companions send) and the in-process API over it — accounts, devices, pairing, messages from
// phones, faults, health and media — the same operations as the control routes (control-api.ts).
// Its parts: phone-media.ts, simulator-api-types.ts.
import { DEFAULT_WA_WEB_VERSION, proto } from './baileys';
import type { AuthenticationCreds } from './baileys';
import { digitsOnly } from './accounts';
import type { Account } from './accounts';
import { SimError } from './errors';
import { compareWaVersions, isFaultRule, parseWaVersion } from './faults';
import type { ActiveFault, FaultRequest } from './faults';
import { node } from './node-io';
import type { ProvisionOptions } from './pairing-service';
import { decryptInboxMedia, uploadMediaMessage } from './phone-media';
import { describeAccount, describeDevice } from './simulator-api-types';
import type { AccountInfo, DeviceInfo, SendMediaInput, SendOptions } from './simulator-api-types';
import { SimulatorServer } from './simulator-server';

export class WaSimulator extends SimulatorServer {
  // ------------------------------------------------------------------ pairing

  /** The account's phone scans a companion's QR (raw string or PNG data URI). */
  async scanQr(phone: string, qr: string): Promise<DeviceInfo> {
    const account = this.accountForLinking(phone);
    const refresh = this.faults.take('reg-refresh', (f) => this.matchesDevice(f, { account, deviceId: 0 }));
    const device = await this.pairing.scanQr(account, qr, { refresh: Boolean(refresh) });
    this.stateChanged();
    return describeDevice(device);
  }

  /** The account's phone enters the 8-character code a companion displayed. */
  async enterPairingCode(phone: string, code: string): Promise<DeviceInfo> {
    const device = await this.pairing.enterPairingCode(this.accountForLinking(phone), code);
    this.stateChanged();
    return describeDevice(device);
  }

  /** The phone that links a companion exists by definition: create its account on first use. */
  private accountForLinking(phone: string): Account {
    if (typeof phone !== 'string' && typeof phone !== 'number') throw new SimError(400, 'phone is required');
    const existing = this.registry.resolveUser(String(phone));
    if (existing) return existing;
    this.createAccount({ phone: String(phone) });
    return this.requireAccount(digitsOnly(String(phone)));
  }

  /**
   * Links a companion without the QR dance: fills `creds` (from Baileys' initAuthCreds) as a
   * successful pairing would, so the next connect logs straight in.
   */
  provisionDevice(phone: string, creds?: AuthenticationCreds, options: ProvisionOptions = {}): { device: DeviceInfo; creds: AuthenticationCreds } {
    const result = this.pairing.provision(this.requireAccount(phone), creds, options);
    this.stateChanged();
    return { device: describeDevice(result.device), creds: result.creds };
  }

  // ------------------------------------------------------------------ public API

  createAccount(input: { phone: string; name?: string; business?: boolean }): AccountInfo {
    const phone = digitsOnly(String(input?.phone ?? ''));
    if (phone.length < 8 || phone.length > 15) throw new SimError(400, 'phone must have 8 to 15 digits');
    const account = this.registry.create(phone, input.name, !!input.business);
    if (input.business !== undefined) account.business = !!input.business;
    account.autoReceipts = { ...this.options.autoReceipts };
    this.stateChanged();
    return describeAccount(account);
  }

  getAccount(phone: string): AccountInfo {
    return describeAccount(this.requireAccount(phone));
  }

  listAccounts(): AccountInfo[] {
    return this.registry.all().map(describeAccount);
  }

  /** A message from the account's phone. `message` is any WAProto Message (JSON or instance). */
  async sendMessage(
    phone: string,
    to: string,
    content: { text?: string; message?: Record<string, unknown> | proto.IMessage },
    options: SendOptions = {},
  ): Promise<{ id: string }> {
    const account = this.requireAccount(phone);
    if (typeof to !== 'string' || !to) throw new SimError(400, 'to is required');
    let message: proto.IMessage;
    if (content.message !== undefined) {
      if (!content.message || typeof content.message !== 'object') throw new SimError(400, 'message must be an object');
      try {
        message = proto.Message.fromObject(content.message);
        proto.Message.encode(message).finish();
      } catch (err) {
        throw new SimError(400, `invalid message: ${(err as Error).message}`);
      }
    } else if (typeof content.text === 'string') {
      message = { conversation: content.text };
    } else {
      throw new SimError(400, 'text or message is required');
    }
    const target = to.includes('@') ? to : `${digitsOnly(to)}@s.whatsapp.net`;
    if (!target.endsWith('@g.us') && !this.registry.resolveUser(target)) {
      if (this.options.autoCreateAccounts && target.endsWith('@s.whatsapp.net')) this.registry.create(digitsOnly(to));
      else throw new SimError(404, `no account for ${to}`);
    }
    const id = await this.phoneOf(account).sendMessage(target, message, { id: options.id });
    return { id };
  }

  getDevice(jid: string): DeviceInfo {
    const device = this.registry.findDevice(jid);
    if (!device) throw new SimError(404, `no linked device ${jid}`);
    return describeDevice(device);
  }

  listDevices(phone: string): DeviceInfo[] {
    return [...this.requireAccount(phone).devices.values()].map((d) => describeDevice(d));
  }

  dropDevice(jid: string): void {
    const device = this.requireDevice(jid);
    device.connection?.destroy();
  }

  /** Logs a linked device out from the server side (like removing it on the phone). */
  logout(jid: string, via: 'stream-error' | 'failure' = 'stream-error'): void {
    this.login.logoutDevice(this.requireDevice(jid), 'server_initiated', via);
  }

  async injectFault(request: FaultRequest): Promise<{ id?: number; done: boolean }> {
    if (isFaultRule(request)) {
      const fault = this.faults.add(request);
      if (request.kind === 'latency' || request.kind === 'ignore-pings') this.login.applyStandingFaults(this.connections);
      return { id: fault.id, done: false };
    }
    switch (request.kind) {
      case 'clear':
        this.faults.clear();
        this.sendLimits.clear();
        this.login.applyStandingFaults(this.connections);
        return { done: true };
      case 'drop':
        this.dropDevice(request.device);
        return { done: true };
      case 'conflict': {
        const connection = this.requireDevice(request.device).connection;
        connection?.sendNode(node('stream:error', {}, [node('conflict', { type: 'replaced' })]));
        connection?.close();
        return { done: true };
      }
      case 'stream-error': {
        const connection = this.requireDevice(request.device).connection;
        const content = request.reason ? [node(request.reason, {})] : undefined;
        connection?.sendNode(node('stream:error', { code: request.code !== undefined ? String(request.code) : undefined }, content));
        connection?.close();
        return { done: true };
      }
      case 'logout':
        this.login.logoutDevice(this.requireDevice(request.device), 'server_initiated', request.via);
        return { done: true };
      case 'restart':
        await this.restart(request.downMs ?? 0);
        return { done: true };
      case 'reachout-timelock':
        return { done: true, ...this.sendLimits.lock(this.requireAccount(request.device), request) };
      case 'new-chat-cap':
        return { done: true, ...this.sendLimits.cap(this.requireAccount(request.device), request) };
    }
  }

  /**
   * The current WhatsApp Web version as web.whatsapp.com/sw.js carries it (`"client_revision":N`,
   * read by Baileys' fetchLatestWaWebVersion and whatsmeow's GetLatestVersion): the newest
   * client-outdated minVersion, else Baileys' default.
   */
  waWebVersion(): string {
    let current = [...DEFAULT_WA_WEB_VERSION];
    for (const fault of this.faults.list()) {
      const min = fault.rule.kind === 'client-outdated' ? parseWaVersion(fault.rule.minVersion) : undefined;
      if (min && compareWaVersions(min, current) > 0) current = min;
    }
    const data = JSON.stringify({ dynamic_data: { SiteData: { server_revision: current[2], client_revision: current[2] } } });
    return `self.__swData=JSON.parse(/*BTDS*/${JSON.stringify(data)});\n`;
  }

  listFaults(): ActiveFault[] {
    return this.faults.list();
  }

  removeFault(id: number): boolean {
    const removed = this.faults.remove(id);
    this.login.applyStandingFaults(this.connections);
    return removed;
  }

  health(): { ok: boolean; websocketUrl: string; rootPublicKey: string; mediaHost?: string; accounts: number; connections: number } {
    return {
      ok: !this.stopped,
      websocketUrl: this.websocketUrl,
      rootPublicKey: this.rootPublicKey,
      mediaHost: this.media ? this.media.hostname : undefined,
      accounts: this.registry.all().length,
      connections: this.connections.size,
    };
  }

  /** Phone sends a media message: encrypts and uploads the file to the media server, then sends. */
  async sendMedia(phone: string, input: SendMediaInput): Promise<{ id: string }> {
    if (!this.media) throw new SimError(501, 'media server disabled');
    const message = await uploadMediaMessage(this.media, input);
    return this.sendMessage(phone, input.to, { message });
  }

  /** Downloads and decrypts the media of a message the phone received. */
  inboxMedia(phone: string, id: string): Promise<{ bytes: Buffer; mimetype: string }> {
    return decryptInboxMedia(
      this.media,
      this.requireAccount(phone).inbox.find((e) => e.id === id),
      id,
    );
  }
}
