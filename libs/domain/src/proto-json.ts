/**
 * WAProto objects as the API's `content` shows them (see webhook-captures/messages): field names in the
 * style of the Go protobuf structs (`URL`, `remoteJID`, `fileSHA256`, `stanzaID`, `senderTimestampMS`…),
 * bytes as base64, 64-bit integers as numbers, enums as numbers, empty and default fields left out.
 */
const EXACT: Record<string, string> = { url: 'URL', id: 'ID', ptt: 'PTT', jpegThumbnail: 'JPEGThumbnail' };
const SUFFIXES: Array<[RegExp, string]> = [
  [/Sha256$/, 'SHA256'],
  [/Url$/, 'URL'],
  [/Jid$/, 'JID'],
  [/Id$/, 'ID'],
  [/Ms$/, 'MS'],
  [/Ts$/, 'TS'],
  [/Iv$/, 'IV'],
];

export function protoFieldName(name: string): string {
  if (EXACT[name]) return EXACT[name];
  let result = name;
  for (const [pattern, replacement] of SUFFIXES) result = result.replace(pattern, replacement);
  return result.replace(/Sha256/g, 'SHA256');
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

interface LongLike {
  low: number;
  high: number;
  unsigned?: boolean;
  toNumber(): number;
}

function isLong(value: unknown): value is LongLike {
  return typeof value === 'object' && value !== null && typeof (value as LongLike).toNumber === 'function' && 'low' in value && 'high' in value;
}

export function toProtoJson(value: unknown): Json | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'bigint') return Number(value);
  if (isLong(value)) return value.toNumber();
  if (value instanceof Uint8Array) return value.length ? Buffer.from(value).toString('base64') : undefined;
  if (Array.isArray(value)) {
    const items = value.map(toProtoJson).filter((item): item is Json => item !== undefined);
    return items.length ? items : undefined;
  }
  if (typeof value === 'object') {
    const result: Record<string, Json> = {};
    for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
      if (typeof child === 'function') continue;
      const converted = toProtoJson(child);
      if (converted !== undefined) result[protoFieldName(key)] = converted;
    }
    return result;
  }
  return undefined;
}
