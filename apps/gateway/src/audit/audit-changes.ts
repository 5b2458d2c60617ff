import { redactUrl } from '@gw/platform';
import { maskUrlCredentials } from '@gw/persistence';

/**
 * A field whose value is a credential: tokens, secrets, passwords and passphrases, API keys, access tokens (any
 * case, `_` or not), and a moved session's `bundle` (issue #40: the account's credentials, encrypted).
 */
const SECRET_FIELD = /token|secret|passw|passphrase|^bundle$|api_?key|authorization|credential/i;
/** How much of a request the log keeps: a knowledge text or a long list is cut, not stored whole. */
const MAX_STRING = 500;
const MAX_ITEMS = 50;
const MAX_DEPTH = 6;

/**
 * What a request changed, as the audit log keeps it: its fields with every credential masked. A
 * field named like a credential (`access_token`, `apikey`, `openai_apikey`, `secret`…) that holds a
 * string is `[masked]` (flags such as `includeToken` and counts such as `maxTokens` stay); a URL keeps
 * its host and path, its user info and its credential query parameters masked as the logger masks them.
 */
export function maskedChanges(body: unknown): Record<string, unknown> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return {};
  return mask(body, 0) as Record<string, unknown>;
}

function mask(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return maskString(value);
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) return '[…]';
  if (Array.isArray(value)) return value.slice(0, MAX_ITEMS).map((item) => mask(item, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value as Record<string, unknown>).slice(0, MAX_ITEMS)) {
    out[key] = SECRET_FIELD.test(key) && typeof item === 'string' ? (item ? '[masked]' : '') : mask(item, depth + 1);
  }
  return out;
}

function maskString(value: string): string {
  const cut = value.length > MAX_STRING ? `${value.slice(0, MAX_STRING)}…` : value;
  // Any string with a scheme may be a URL (webhook, proxy, broker): user info and credential parameters masked.
  return cut.includes('://') ? (redactUrl(maskUrlCredentials(cut)) as string) : cut;
}
