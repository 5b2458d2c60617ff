// Human-readable views of the protobufs a companion sends (ClientPayload, DeviceProps).
import { proto } from './baileys';
import type { DeviceDeclaration } from './accounts';

export function enumName(values: Record<string, unknown>, value: number | null | undefined): string | undefined {
  if (value === null || value === undefined) return undefined;
  const entry = Object.entries(values).find(([, v]) => v === value);
  return entry ? entry[0] : String(value);
}

export function versionString(
  version: { primary?: number | null; secondary?: number | null; tertiary?: number | null } | null | undefined,
): string | undefined {
  if (!version) return undefined;
  return [version.primary, version.secondary, version.tertiary].filter((v) => v !== null && v !== undefined).join('.');
}

export function describeRegistration(payload: proto.ClientPayload): DeviceDeclaration {
  const pairing = payload.devicePairingData;
  const declaration: DeviceDeclaration = {
    userAgentPlatform: enumName(proto.ClientPayload.UserAgent.Platform, payload.userAgent?.platform),
    appVersion: versionString(payload.userAgent?.appVersion),
    userAgentDevice: payload.userAgent?.device ?? undefined,
    osVersion: payload.userAgent?.osVersion ?? undefined,
    releaseChannel: enumName(proto.ClientPayload.UserAgent.ReleaseChannel, payload.userAgent?.releaseChannel),
    locale: [payload.userAgent?.localeLanguageIso6391, payload.userAgent?.localeCountryIso31661Alpha2].filter(Boolean).join('-') || undefined,
    webSubPlatform: enumName(proto.ClientPayload.WebInfo.WebSubPlatform, payload.webInfo?.webSubPlatform),
    pushName: payload.pushName ?? undefined,
    buildHash: pairing?.buildHash ? Buffer.from(pairing.buildHash).toString('hex') : undefined,
  };
  if (pairing?.deviceProps) {
    try {
      const props = proto.DeviceProps.decode(pairing.deviceProps);
      const json = props.toJSON() as Record<string, unknown>;
      declaration.os = props.os ?? undefined;
      declaration.platformType = enumName(proto.DeviceProps.PlatformType, props.platformType);
      declaration.platformTypeCode = props.platformType ?? undefined;
      declaration.propsVersion = versionString(props.version);
      declaration.requireFullSync = props.requireFullSync ?? undefined;
      const history = json.historySyncConfig as Record<string, unknown> | undefined;
      declaration.historySyncConfig = history;
      const config = props.historySyncConfig;
      declaration.fullSyncDaysLimit = config?.fullSyncDaysLimit ?? undefined;
      declaration.fullSyncSizeMbLimit = config?.fullSyncSizeMbLimit ?? undefined;
      declaration.recentSyncDaysLimit = config?.recentSyncDaysLimit ?? undefined;
      declaration.storageQuotaMb = config?.storageQuotaMb ?? undefined;
    } catch {
      // A malformed DeviceProps is still a registration; keep what we have.
    }
  }
  return declaration;
}
