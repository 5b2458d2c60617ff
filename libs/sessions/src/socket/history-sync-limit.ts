import type { HistoryRequest } from '@gw/contracts';
import { proto } from '../baileys';

/**
 * How many days of history a new pairing asks the phone for.
 *
 * Baileys rc14 builds the registration payload in `generateRegistrationNode`
 * (lib/Utils/validate-connection.js) with a fixed `DeviceProps.historySyncConfig`:
 * `recentSyncDaysLimit: undefined` and no `fullSyncDaysLimit`; the only knob is `syncFullHistory`
 * (→ `requireFullSync`). There is no config option for the days.
 *
 * The narrowest hook: wrap `proto.ClientPayload.encode`, which socket.js calls once per handshake,
 * right after building the payload. Only a *registration* payload whose identity key (`eIdent`) was
 * registered here is touched, and only these DeviceProps fields are set:
 * `requireFullSync`, `historySyncConfig.recentSyncDaysLimit` (normal history) or
 * `historySyncConfig.fullSyncDaysLimit` (full history). Logins (reconnects) carry no DeviceProps and
 * pass through unchanged, so a paired instance never requests history again.
 */
const requests = new Map<string, HistoryRequest>();
let installed = false;

type Encode = typeof proto.ClientPayload.encode;

function install(): void {
  if (installed) return;
  installed = true;
  const original: Encode = proto.ClientPayload.encode.bind(proto.ClientPayload);
  const patched: Encode = (message, writer) => original(withHistoryLimit(message), writer);
  proto.ClientPayload.encode = patched;
}

function withHistoryLimit(message: proto.IClientPayload): proto.IClientPayload {
  const pairing = message.devicePairingData;
  if (!pairing?.eIdent || !pairing.deviceProps) return message;
  const request = requests.get(Buffer.from(pairing.eIdent).toString('base64'));
  if (!request) return message;
  const deviceProps = proto.DeviceProps.decode(pairing.deviceProps);
  deviceProps.requireFullSync = request.fullSync;
  const config = deviceProps.historySyncConfig ?? new proto.DeviceProps.HistorySyncConfig();
  if (request.fullSync) config.fullSyncDaysLimit = request.days;
  else config.recentSyncDaysLimit = request.days;
  deviceProps.historySyncConfig = config;
  // The payload object is built fresh for this one handshake, so it is changed in place.
  pairing.deviceProps = proto.DeviceProps.encode(deviceProps).finish();
  return message;
}

/** Asks for `request` in the registration of the device with this identity key, until `forget`. */
export function requestHistoryFor(identityPublicKey: Uint8Array, request: HistoryRequest): void {
  install();
  requests.set(Buffer.from(identityPublicKey).toString('base64'), request);
}

export function forgetHistoryFor(identityPublicKey: Uint8Array): void {
  requests.delete(Buffer.from(identityPublicKey).toString('base64'));
}

/** Socket options that go with a history request (null: a reconnect, which requests nothing). */
export function historySocketOptions(request: HistoryRequest | null): {
  syncFullHistory: boolean;
  shouldSyncHistoryMessage: (notification: proto.Message.IHistorySyncNotification) => boolean;
} {
  const full = request?.fullSync === true;
  return {
    syncFullHistory: full,
    // Baileys' default skips FULL chunks; a full-history request must process them.
    shouldSyncHistoryMessage: (notification) => full || notification.syncType !== proto.HistorySync.HistorySyncType.FULL,
  };
}
