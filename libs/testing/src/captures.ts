import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * A real uazapi webhook payload, for tests that compare our envelopes with it. The ones the tests use
 * are copied from the reference captures into libs/testing/fixtures/webhook-captures (same paths), so
 * the suite needs nothing outside the repository. Paths resolve from the repository root (where
 * `npm test` runs).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- captures are free-form JSON that tests index into
export function webhookCapture(path: string): Record<string, any> {
  return JSON.parse(readFileSync(resolve(process.cwd(), 'libs/testing/fixtures/webhook-captures', path), 'utf8'));
}
