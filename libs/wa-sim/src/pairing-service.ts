// Linking companions as the account's phone does it: QR refs for unregistered companions, QR
// scans, the pairing-code exchange (B5-B7), and direct provisioning for tests and load runs.
import { randomBytes } from 'crypto';
import { Curve, initAuthCreds, jidDecode, proto } from './baileys';
import type { AuthenticationCreds } from './baileys';
import { digitsOnly, LID_SERVER, LinkedDevice } from './accounts';
import type { Account, PairingMethod } from './accounts';
import { nextServerId } from './connection';
import type { Connection } from './connection';
import { SimError } from './errors';
import type { BinaryNode } from './node-io';
import { child, childBytes, contentBytes, contentString, iqError, iqResult, node, readUIntBE, S_WHATSAPP_NET, unixNow } from './node-io';
import type { ClientFinish } from './noise-server';
import {
  buildDeviceIdentity,
  normalizePairingCode,
  openKeyBundle,
  randomRef,
  readQr,
  unwrapCompanionEphemeral,
  verifyDeviceSignature,
  wrapPrimaryEphemeral,
} from './pairing';
import type { PendingRegistration } from './pairing';
import { describeRegistration } from './proto-describe';

export interface ProvisionOptions {
  os?: string;
  platformType?: string;
  pushName?: string;
  /** Mark history as already delivered (accountSyncCounter=1) so Baileys does not wait for it. Default true. */
  synced?: boolean;
}

export class PairingService {
  private readonly registrations = new Map<string, PendingRegistration>();
  private readonly refIndex = new Map<string, string>();
  private readonly linkCodeWaiters = new Map<string, (iq: BinaryNode) => void>();

  constructor(private readonly deps: { qrRefs: () => number }) {}

  /** A companion without `creds.me` sent a registration payload: hand it QR refs. */
  startRegistration(connection: Connection, finish: ClientFinish): void {
    const payload = finish.payload;
    const pairing = payload.devicePairingData as proto.ClientPayload.IDevicePairingRegistrationData;
    const identityKey = Buffer.from(pairing.eIdent ?? []);
    const registrationId = readUIntBE(Buffer.from(pairing.eRegid ?? []));
    const skeyId = readUIntBE(Buffer.from(pairing.eSkeyId ?? []));
    if (identityKey.length !== 32 || registrationId === undefined || skeyId === undefined || !pairing.eSkeyVal || !pairing.eSkeySig) {
      connection.sendNode(node('failure', { reason: '400', location: 'sim' }));
      connection.close();
      return;
    }
    const refs = Array.from({ length: this.deps.qrRefs() }, () => randomRef());
    const pending: PendingRegistration = {
      id: randomBytes(8).toString('hex'),
      connection,
      noiseKey: finish.clientStatic,
      keys: {
        registrationId,
        identityKey,
        signedPreKey: { keyId: skeyId, publicKey: Buffer.from(pairing.eSkeyVal), signature: Buffer.from(pairing.eSkeySig) },
        preKeys: new Map(),
      },
      declaration: describeRegistration(payload),
      refs,
      createdAt: Date.now(),
    };
    connection.registrationId = pending.id;
    this.registrations.set(pending.id, pending);
    for (const ref of refs) this.refIndex.set(ref, pending.id);
    const iq = node('iq', { from: S_WHATSAPP_NET, type: 'set', id: nextServerId(), xmlns: 'md' }, [
      node(
        'pair-device',
        {},
        refs.map((ref) => node('ref', {}, Buffer.from(ref, 'utf-8'))),
      ),
    ]);
    connection.query(iq, 30_000).catch(() => undefined);
  }

  /** Forget a companion that went away before being linked. */
  onClose(connection: Connection): void {
    if (!connection.registrationId) return;
    const pending = this.registrations.get(connection.registrationId);
    if (pending) {
      for (const ref of pending.refs) this.refIndex.delete(ref);
      this.registrations.delete(connection.registrationId);
    }
  }

  onLinkCodeHello(connection: Connection, iq: BinaryNode): BinaryNode {
    const pending = connection.registrationId ? this.registrations.get(connection.registrationId) : undefined;
    const reg = child(iq, 'link_code_companion_reg');
    const wrapped = childBytes(reg, 'link_code_pairing_wrapped_companion_ephemeral_pub');
    const noise = childBytes(reg, 'companion_server_auth_key_pub');
    const phone = digitsOnly(jidDecode(reg?.attrs.jid ?? '')?.user ?? '');
    if (!pending || !wrapped || wrapped.length < 80 || !noise || !phone) {
      return iqError(iq, 400, 'bad-request');
    }
    const ref = randomBytes(32);
    pending.linkCode = {
      phone,
      ref,
      wrappedCompanionEphemeral: wrapped,
      companionNoiseKey: noise,
      platformId: contentString(child(reg, 'companion_platform_id')),
      platformDisplay: contentString(child(reg, 'companion_platform_display')),
      requestedAt: Date.now(),
    };
    pending.declaration.companionPlatformId = pending.linkCode.platformId;
    pending.declaration.companionPlatformDisplay = pending.linkCode.platformDisplay;
    return iqResult(iq, [node('link_code_companion_reg', {}, [node('link_code_pairing_ref', {}, ref)])]);
  }

  onLinkCodeFinish(connection: Connection, iq: BinaryNode): BinaryNode | undefined {
    const waiter = connection.registrationId ? this.linkCodeWaiters.get(connection.registrationId) : undefined;
    if (!waiter) return iqError(iq, 404, 'item-not-found');
    waiter(iq);
    return undefined;
  }

  /**
   * The account's phone scans a companion's QR (raw string or PNG data URI). `refresh` (the
   * reg-refresh fault): the server refreshes the companion's registration instead, retiring the
   * scanned ADV secret (see RegRefreshRule).
   */
  async scanQr(account: Account, qr: string, options: { refresh?: boolean } = {}): Promise<LinkedDevice> {
    if (typeof qr !== 'string' || !qr.trim()) throw new SimError(400, 'qr is required');
    const parsed = readQr(qr);
    const pendingId = this.refIndex.get(parsed.ref);
    const pending = pendingId ? this.registrations.get(pendingId) : undefined;
    if (!pending) throw new SimError(404, 'no companion is showing this QR code (expired, already used, or disconnected)');
    if (!pending.noiseKey.equals(parsed.noiseKey) || !pending.keys.identityKey.equals(parsed.identityKey)) {
      throw new SimError(400, 'QR keys do not match the waiting companion');
    }
    const advSecret = parsed.advSecret.toString('base64');
    if (options.refresh) {
      (pending.retiredAdvSecrets ??= new Set()).add(advSecret);
      pending.connection.sendNode(
        node('notification', { from: S_WHATSAPP_NET, id: nextServerId(), type: 'companion_reg_refresh', t: String(unixNow()) }, [
          node('companion_reg_refresh', {}),
        ]),
      );
    }
    if (pending.retiredAdvSecrets?.has(advSecret)) {
      throw new SimError(409, "Couldn't link device: the companion's registration was refreshed; this QR carries a retired secret");
    }
    pending.declaration.qrPlatformId = parsed.platformId;
    return this.completePairing(account, pending, parsed.advSecret, 'qr');
  }

  /** The account's phone enters the 8-character code a companion displayed. */
  async enterPairingCode(account: Account, code: string): Promise<LinkedDevice> {
    const normalized = normalizePairingCode(typeof code === 'string' ? code : '');
    if (normalized.length !== 8) throw new SimError(400, 'pairing code must have 8 characters');
    const pending = [...this.registrations.values()]
      .filter((p) => p.linkCode?.phone === account.phone && p.connection.isTransportReady && !p.linking)
      .sort((a, b) => (b.linkCode?.requestedAt ?? 0) - (a.linkCode?.requestedAt ?? 0))[0];
    const linkCode = pending?.linkCode;
    if (!pending || !linkCode) throw new SimError(404, `no companion is waiting for a pairing code for ${account.phone}`);
    pending.linking = true;
    try {
      const companionEphemeral = await unwrapCompanionEphemeral(linkCode.wrappedCompanionEphemeral, normalized);
      const primaryEphemeral = Curve.generateKeyPair();
      const wrapped = await wrapPrimaryEphemeral(primaryEphemeral.public, normalized);
      const finished = new Promise<BinaryNode>((resolve, reject) => {
        const timer = setTimeout(() => {
          this.linkCodeWaiters.delete(pending.id);
          reject(new SimError(504, 'companion did not finish the pairing-code exchange'));
        }, 15_000);
        this.linkCodeWaiters.set(pending.id, (iq) => {
          clearTimeout(timer);
          this.linkCodeWaiters.delete(pending.id);
          resolve(iq);
        });
      });
      pending.connection.sendNode(
        node('notification', { from: S_WHATSAPP_NET, id: nextServerId(), type: 'link_code_companion_reg', t: String(unixNow()) }, [
          node('link_code_companion_reg', { stage: 'primary_hello' }, [
            node('link_code_pairing_ref', {}, linkCode.ref),
            node('primary_identity_pub', {}, Buffer.from(account.signal.identity.public)),
            node('link_code_pairing_wrapped_primary_ephemeral_pub', {}, wrapped),
          ]),
        ]),
      );
      const finishIq = await finished;
      const bundle = childBytes(child(finishIq, 'link_code_companion_reg'), 'link_code_pairing_wrapped_key_bundle');
      if (!bundle) {
        pending.connection.sendNode(iqError(finishIq, 400, 'bad-request'));
        throw new SimError(502, 'companion sent no key bundle');
      }
      let advSecret: Buffer;
      try {
        const opened = openKeyBundle(bundle, primaryEphemeral, companionEphemeral, account.signal.identity);
        if (!opened.companionIdentity.equals(pending.keys.identityKey)) throw new SimError(400, 'key bundle names a different companion identity');
        advSecret = opened.advSecret;
      } catch (err) {
        pending.connection.sendNode(iqError(finishIq, 400, 'bad-request'));
        throw err;
      }
      pending.connection.sendNode(iqResult(finishIq));
      pending.linking = false;
      return await this.completePairing(account, pending, advSecret, 'code');
    } finally {
      pending.linking = false;
    }
  }

  private async completePairing(account: Account, pending: PendingRegistration, advSecret: Buffer, method: PairingMethod): Promise<LinkedDevice> {
    if (pending.linking) throw new SimError(409, 'this companion is already being linked');
    if (!pending.connection.isTransportReady) throw new SimError(410, 'the companion disconnected');
    pending.linking = true;
    try {
      const { deviceId, keyIndex } = account.allocateDevice();
      const identity = buildDeviceIdentity({
        phoneIdentity: account.signal.identity,
        companionIdentity: pending.keys.identityKey,
        advSecret,
        rawId: account.advRawId,
        keyIndex,
      });
      const pairSuccess: BinaryNode[] = [
        node('device-identity', {}, identity),
        node('platform', { name: account.business ? 'smba' : 'android' }),
        node('device', { jid: `${account.phone}:${deviceId}@s.whatsapp.net`, lid: `${account.lidUser}:${deviceId}@${LID_SERVER}` }),
      ];
      if (account.business) pairSuccess.push(node('biz', { name: account.name }));
      const reply = await pending.connection
        .query(node('iq', { from: S_WHATSAPP_NET, type: 'set', id: nextServerId(), t: String(unixNow()) }, [node('pair-success', {}, pairSuccess)]), 15_000)
        .catch((err: Error) => {
          throw new SimError(504, `companion did not confirm pairing: ${err.message}`);
        });
      const signed = contentBytes(child(child(reply, 'pair-device-sign'), 'device-identity'));
      if (reply.attrs.type !== 'result' || !signed || !verifyDeviceSignature(signed, pending.keys.identityKey, account.signal.identity.public)) {
        throw new SimError(502, 'companion rejected the pairing or sent an invalid device signature');
      }
      const device = new LinkedDevice(account, deviceId, keyIndex, pending.noiseKey, pending.keys, pending.declaration, method);
      account.devices.set(deviceId, device);
      for (const ref of pending.refs) this.refIndex.delete(ref);
      this.registrations.delete(pending.id);
      pending.connection.registrationId = undefined;
      // The companion must reconnect and log in with its new identity (DisconnectReason.restartRequired).
      pending.connection.sendNode(node('stream:error', { code: '515' }));
      pending.connection.close();
      return device;
    } finally {
      pending.linking = false;
    }
  }

  /**
   * Links a companion without the QR dance: fills `creds` (from Baileys' initAuthCreds) exactly as
   * a successful pairing would (me, account with both ADV signatures, signalIdentities, platform),
   * so the next connect logs straight in. `synced` (default) marks history as already delivered
   * (accountSyncCounter=1), so Baileys does not wait for a history sync.
   */
  provision(
    account: Account,
    creds: AuthenticationCreds = initAuthCreds(),
    options: ProvisionOptions = {},
  ): { device: LinkedDevice; creds: AuthenticationCreds } {
    const { deviceId, keyIndex } = account.allocateDevice();
    const identityPublic = Buffer.from(creds.signedIdentityKey.public);
    const phoneIdentity = account.signal.identity;
    const details = Buffer.from(proto.ADVDeviceIdentity.encode({ rawId: account.advRawId, timestamp: unixNow(), keyIndex }).finish());
    const accountSignature = Curve.sign(phoneIdentity.private, Buffer.concat([Buffer.from([6, 0]), details, identityPublic]));
    const deviceSignature = Curve.sign(creds.signedIdentityKey.private, Buffer.concat([Buffer.from([6, 1]), details, identityPublic, phoneIdentity.public]));
    const jid = `${account.phone}:${deviceId}@s.whatsapp.net`;
    const lid = `${account.lidUser}:${deviceId}@${LID_SERVER}`;
    creds.account = proto.ADVSignedDeviceIdentity.fromObject({ details, accountSignatureKey: phoneIdentity.public, accountSignature, deviceSignature });
    creds.me = { id: jid, lid, name: account.business ? account.name : undefined };
    creds.signalIdentities = [{ identifier: { name: lid, deviceId: 0 }, identifierKey: Buffer.concat([Buffer.from([5]), phoneIdentity.public]) }];
    creds.platform = account.business ? 'smba' : 'android';
    creds.registered = true;
    const synced = options.synced !== false;
    if (synced) creds.accountSyncCounter = Math.max(1, creds.accountSyncCounter ?? 0);
    const device = new LinkedDevice(
      account,
      deviceId,
      keyIndex,
      Buffer.from(creds.noiseKey.public),
      {
        registrationId: creds.registrationId,
        identityKey: identityPublic,
        signedPreKey: {
          keyId: creds.signedPreKey.keyId,
          publicKey: Buffer.from(creds.signedPreKey.keyPair.public),
          signature: Buffer.from(creds.signedPreKey.signature),
        },
        preKeys: new Map(),
      },
      { os: options.os ?? 'Ubuntu', platformType: options.platformType ?? 'CHROME', pushName: options.pushName },
      'provisioned',
    );
    device.historySent = synced;
    account.devices.set(deviceId, device);
    return { device, creds };
  }
}
