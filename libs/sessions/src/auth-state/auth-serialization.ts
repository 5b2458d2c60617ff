import { BufferJSON, proto, type AuthenticationCreds, type SignalKeyType } from '../baileys';

/**
 * Creds and keys are stored as JSON text; Buffers/Uint8Arrays travel as `{type:'Buffer', data:<base64>}`.
 *
 * A value with no bytes in it (a Signal session: libsignal serialises its keys to base64 itself, and one
 * is written on nearly every send) is the same text without the replacer, which JSON.stringify then
 * calls on no key: ~2.5× faster for a session record (bench/send, issue #38). Anything the replacer or
 * a toJSON could change goes the replacer's way.
 */
export function serializeAuthValue(value: unknown): string {
  // A value that is bytes (Baileys stores a sender-key record as one): the replacer's text, without the
  // toJSON that JSON.stringify calls first, which spelt every byte out as a number in an array for the
  // replacer to turn back into bytes (1 s of the worker's CPU per 1,200 group messages in bench/inbound).
  if (value instanceof Uint8Array) return `{"type":"Buffer","data":"${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64')}"}`;
  return isPlainData(value) ? JSON.stringify(value) : JSON.stringify(value, BufferJSON.replacer);
}

/** Whether `value` holds nothing BufferJSON.replacer would rewrite (bytes, `{type:'Buffer'}`) and no toJSON. */
function isPlainData(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return true;
  if (value instanceof Uint8Array || typeof (value as { toJSON?: unknown }).toJSON === 'function') return false;
  const holder = value as Record<string, unknown>;
  if (holder.type === 'Buffer') return false;
  for (const key in holder) if (!isPlainData(holder[key])) return false;
  return true;
}

export function deserializeCreds(text: string): AuthenticationCreds {
  return compactBuffers(JSON.parse(text, BufferJSON.reviver) as AuthenticationCreds);
}

/** App-state sync keys are protobuf messages in memory; everything else is plain data. */
export function deserializeKey(type: SignalKeyType, text: string): unknown {
  const value: unknown = compactBuffers(JSON.parse(text, BufferJSON.reviver));
  if (type === 'app-state-sync-key' && value && typeof value === 'object') {
    return proto.Message.AppStateSyncKeyData.fromObject(value as Record<string, unknown>);
  }
  return value;
}

/**
 * Moves every Buffer of a freshly parsed value into one allocation of its own, in place (a Buffer
 * value itself is copied).
 *
 * The reviver's small Buffers are slices of Node's shared pool (64 KiB slabs on Node 24), and a slab
 * stays in memory as long as any slice of it does. Creds and keys live as long as their session, and
 * between two sessions' reads the worker's Postgres traffic fills the pool with short-lived buffers:
 * each session's few key bytes kept a whole slab of garbage alive (docs/adr/0016). One exact-size
 * ArrayBuffer per value keeps only the bytes.
 */
export function compactBuffers<T>(value: T): T {
  if (Buffer.isBuffer(value)) return (value.length > 0 ? ownCopy(value) : value) as T;
  const found: Array<{ holder: Record<string | number, unknown>; key: string | number; buffer: Buffer }> = [];
  const visit = (node: unknown): void => {
    if (!node || typeof node !== 'object' || Buffer.isBuffer(node)) return;
    const holder = node as Record<string | number, unknown>;
    for (const key of Object.keys(holder)) {
      const child = holder[key];
      if (Buffer.isBuffer(child)) {
        if (child.length > 0) found.push({ holder, key, buffer: child });
      } else visit(child);
    }
  };
  visit(value);
  if (found.length === 0) return value;
  const own = Buffer.allocUnsafeSlow(found.reduce((sum, entry) => sum + entry.buffer.length, 0));
  let offset = 0;
  for (const { holder, key, buffer } of found) {
    buffer.copy(own, offset);
    holder[key] = own.subarray(offset, offset + buffer.length);
    offset += buffer.length;
  }
  return value;
}

/** A copy in an ArrayBuffer of its own (never a slice of the shared pool). */
function ownCopy(buffer: Buffer): Buffer {
  const own = Buffer.allocUnsafeSlow(buffer.length);
  buffer.copy(own);
  return own;
}
