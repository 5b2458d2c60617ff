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

/**
 * The JSON text of `plain(value)` under BufferJSON.replacer, written in one pass: no plain copy of the
 * message first and no replacer call for every value (issue #38: it was 6 % of the worker's CPU in
 * bench/history, a copy per message stored). Answers undefined where JSON.stringify leaves the value out
 * (undefined, a function, a symbol): an object's property is then skipped, an array's item is `null`.
 * raw-message.spec.ts checks it against the two-pass form on real messages.
 */
function writeJson(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      return writeJson(Number(value));
    case 'object':
      break;
    default:
      return undefined;
  }
  if (value === null) return 'null';
  if (value instanceof Uint8Array) return `{"type":"Buffer","data":"${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64')}"}`;
  if (isLong(value)) return writeJson(value.toNumber());
  if (Array.isArray(value)) {
    let out = '[';
    for (let index = 0; index < value.length; index++) out += `${index ? ',' : ''}${writeJson(value[index]) ?? 'null'}`;
    return `${out}]`;
  }
  // BufferJSON.replacer turns any object whose `type` is 'Buffer' into bytes: rare enough for the two-pass form.
  if ((value as { type?: unknown }).type === 'Buffer') return JSON.stringify(plain(value), BufferJSON.replacer);
  let out = '{';
  let first = true;
  for (const key of Object.keys(value)) {
    const child = (value as Record<string, unknown>)[key];
    if (child === undefined || typeof child === 'function') continue;
    const text = writeJson(child);
    if (text === undefined) continue;
    out += `${first ? '' : ','}${JSON.stringify(key)}:${text}`;
    first = false;
  }
  return `${out}}`;
}

/** The `raw` column: the whole WAMessage (key with its LID/PN alternates included), BufferJSON. */
export function serialiseMessage(message: WAMessage): string {
  return writeJson(message) ?? 'null';
}

/** serialiseMessage's two-pass form (a plain copy, then JSON.stringify with BufferJSON.replacer): what its output must equal. */
export function serialiseMessageTwoPass(message: WAMessage): string {
  return JSON.stringify(plain(message), BufferJSON.replacer);
}

/** A stored `raw` back into a WAMessage Baileys accepts (quotes, poll creations, media download). */
export function reviveMessage(raw: string): WAMessage {
  return JSON.parse(raw, BufferJSON.reviver) as WAMessage;
}
