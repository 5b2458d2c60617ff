import { randomBytes } from 'node:crypto';
import { proto } from '../baileys';
import { forgetHistoryFor, historySocketOptions, requestHistoryFor } from './history-sync-limit';

/** What Baileys' generateRegistrationNode builds, reduced to the fields the hook looks at. */
function registrationPayload(identity: Buffer): proto.ClientPayload {
  const deviceProps = proto.DeviceProps.encode({ os: 'Mac OS', requireFullSync: false, historySyncConfig: { storageQuotaMb: 10240 } }).finish();
  return proto.ClientPayload.fromObject({ passive: false, devicePairingData: { eIdent: identity, deviceProps } });
}

function sentDeviceProps(payload: proto.ClientPayload): proto.DeviceProps {
  const decoded = proto.ClientPayload.decode(proto.ClientPayload.encode(payload).finish());
  return proto.DeviceProps.decode(decoded.devicePairingData!.deviceProps!);
}

describe('history sync limit', () => {
  it('should ask for N days of normal history in the registration of that device only', () => {
    const identity = randomBytes(32);
    requestHistoryFor(identity, { days: 30, fullSync: false });
    const props = sentDeviceProps(registrationPayload(identity));
    expect(props.historySyncConfig?.recentSyncDaysLimit).toBe(30);
    expect(props.historySyncConfig?.fullSyncDaysLimit).toBeFalsy();
    expect(props.historySyncConfig?.storageQuotaMb).toBe(10240);
    expect(props.requireFullSync).toBe(false);

    const other = sentDeviceProps(registrationPayload(randomBytes(32)));
    expect(other.historySyncConfig?.recentSyncDaysLimit).toBeFalsy();
    forgetHistoryFor(identity);
  });

  it('should ask for full history with a days limit', () => {
    const identity = randomBytes(32);
    requestHistoryFor(identity, { days: 365, fullSync: true });
    const props = sentDeviceProps(registrationPayload(identity));
    expect(props.requireFullSync).toBe(true);
    expect(props.historySyncConfig?.fullSyncDaysLimit).toBe(365);
    forgetHistoryFor(identity);
    expect(sentDeviceProps(registrationPayload(identity)).historySyncConfig?.fullSyncDaysLimit).toBeFalsy();
  });

  it('should leave login payloads alone', () => {
    const login = proto.ClientPayload.fromObject({ passive: true, username: 5511999999999, device: 3 });
    const decoded = proto.ClientPayload.decode(proto.ClientPayload.encode(login).finish());
    expect(decoded.devicePairingData).toBeNull();
    expect(decoded.device).toBe(3);
  });

  describe(historySocketOptions.name, () => {
    const FULL = proto.HistorySync.HistorySyncType.FULL;
    const RECENT = proto.HistorySync.HistorySyncType.RECENT;

    it('should process FULL chunks only for a full-history request', () => {
      expect(historySocketOptions({ days: 200, fullSync: true }).shouldSyncHistoryMessage({ syncType: FULL })).toBe(true);
      expect(historySocketOptions({ days: 200, fullSync: true }).syncFullHistory).toBe(true);
      expect(historySocketOptions({ days: 30, fullSync: false }).shouldSyncHistoryMessage({ syncType: FULL })).toBe(false);
      expect(historySocketOptions(null).shouldSyncHistoryMessage({ syncType: RECENT })).toBe(true);
      expect(historySocketOptions(null).syncFullHistory).toBe(false);
    });
  });
});
