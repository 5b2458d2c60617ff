import { randomBytes, randomFillSync, randomUUID, timingSafeEqual, createHash } from 'node:crypto';

/** Random bytes drawn ahead for recordId (as Node's randomUUID keeps its own): each byte handed out once. */
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let taken = 0;

/** `bytes` fresh random bytes as hex, from the pool (refilled from the CSPRNG when it runs out). */
function randomHex(bytes: number): string {
  if (bytes > POOL_BYTES) return randomBytes(bytes).toString('hex');
  if (taken + bytes > pool.length) {
    pool = randomFillSync(Buffer.allocUnsafe(POOL_BYTES));
    taken = 0;
  }
  const hex = pool.toString('hex', taken, taken + bytes);
  taken += bytes;
  return hex;
}

/**
 * `r` + hex, the id style of the API's records (instances use 14 hex, messages 7). One is made for every
 * message stored: a call to the CSPRNG each cost ~5 µs against ~0.1 µs from the pool (bench/history's
 * 100,000 messages: ~1 s of the worker's CPU, issue #38).
 */
export function recordId(hexLength = 14): string {
  return `r${randomHex(Math.ceil(hexLength / 2)).slice(0, hexLength)}`;
}

/** A bearer token with 128 bits of entropy, in the UUID shape clients of the API expect. */
export function newToken(): string {
  return randomUUID();
}

export function newRequestId(): string {
  return randomUUID();
}

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** Constant-time comparison of two secrets of any length (compared by their digests). */
export function secretsEqual(a: string, b: string): boolean {
  const left = createHash('sha256').update(a).digest();
  const right = createHash('sha256').update(b).digest();
  return timingSafeEqual(left, right) && a.length === b.length;
}
