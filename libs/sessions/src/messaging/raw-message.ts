import { BufferJSON, type WAMessage } from '../baileys';

interface LongLike {
  low: number;
  high: number;
  toNumber(): number;
}

function isLong(value: unknown): value is LongLike {
  return typeof value === 'object' && value !== null && typeof (value as LongLike).toNumber === 'function' && 'low' in value && 'high' in value;
}

/**
 * A WAProto object as plain data: own fields only, 64-bit integers as numbers, bytes kept as bytes,
 * enums as numbers. JSON.stringify on a protobufjs object would call its `toJSON` (bytes as base64
 * strings, enums as names), which `proto.*.encode` cannot take back; plain data can.
 */
function plain(value: unknown): unknown {
  if (value === null || value === undefined) return value;
  if (value instanceof Uint8Array) return value;
  if (isLong(value)) return value.toNumber();
  if (typeof value === 'bigint') return Number(value);
  if (Array.isArray(value)) return value.map(plain);
  if (typeof value === 'object') {
    const result: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
      if (child === undefined || typeof child === 'function') continue;
      result[key] = plain(child);
    }
    return result;
  }
  return value;
}

/** The `raw` column: the whole WAMessage (key with its LID/PN alternates included), BufferJSON. */
export function serialiseMessage(message: WAMessage): string {
  return JSON.stringify(plain(message), BufferJSON.replacer);
}

/** A stored `raw` back into a WAMessage Baileys accepts (quotes, poll creations, media download). */
export function reviveMessage(raw: string): WAMessage {
  return JSON.parse(raw, BufferJSON.reviver) as WAMessage;
}
