import { webhookCapture } from '@gw/testing';

/** A real webhook payload (libs/testing/fixtures/webhook-captures), for tests that compare our envelopes with it. */
export function capture(path: string): Record<string, any> {
  return webhookCapture(path);
}

/** Keys of an object, sorted (payloads pass through jsonb, which keeps no key order): a shape without its values. */
export const keysOf = (value: unknown): string[] => (value && typeof value === 'object' && !Array.isArray(value) ? Object.keys(value).sort() : []);

/** The type of each value ('null', 'array', 'string', …), key by key. */
export function typesOf(value: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(Object.entries(value).map(([key, entry]) => [key, entry === null ? 'null' : Array.isArray(entry) ? 'array' : typeof entry]));
}
