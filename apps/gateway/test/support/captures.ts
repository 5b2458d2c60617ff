import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * The real webhook payloads (../shared/reference/webhook-captures beside the repository, or
 * WEBHOOK_CAPTURES_DIR), for tests that compare our envelopes with them.
 */
export function capture(path: string): Record<string, any> {
  const dir = process.env.WEBHOOK_CAPTURES_DIR ?? resolve(process.cwd(), '../shared/reference/webhook-captures');
  return JSON.parse(readFileSync(resolve(dir, path), 'utf8'));
}

/** Keys of an object, sorted (payloads pass through jsonb, which keeps no key order): a shape without its values. */
export const keysOf = (value: unknown): string[] => (value && typeof value === 'object' && !Array.isArray(value) ? Object.keys(value).sort() : []);

/** The type of each value ('null', 'array', 'string', …), key by key. */
export function typesOf(value: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(Object.entries(value).map(([key, entry]) => [key, entry === null ? 'null' : Array.isArray(entry) ? 'array' : typeof entry]));
}
