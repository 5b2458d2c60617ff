import { randomBytes, randomUUID, timingSafeEqual, createHash } from 'node:crypto';

/** `r` + hex, the id style of the API's records (instances use 14 hex, messages 7). */
export function recordId(hexLength = 14): string {
  return `r${randomBytes(Math.ceil(hexLength / 2))
    .toString('hex')
    .slice(0, hexLength)}`;
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
