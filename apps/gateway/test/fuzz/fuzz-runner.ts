import { request } from 'undici';
import { type FuzzCase, generateCases, operationsOf, type Operation } from './fuzz-cases';

export interface FuzzFinding {
  family: string;
  method: string;
  url: string;
  status: number | 'hang' | 'connection-error';
  detail: string;
}

export interface FuzzReport {
  seed: number;
  requests: number;
  operations: number;
  byStatus: Record<string, number>;
  byFamily: Record<string, number>;
  serverErrors: FuzzFinding[];
  /** 504s (a worker's answer late under the fuzzer's own load) that answered below 500 when sent again alone. */
  transientTimeouts: FuzzFinding[];
  /** 504s of deprecated routes, whose documented answer that is. */
  deprecatedAnswers: number;
  hangs: FuzzFinding[];
  connectionErrors: FuzzFinding[];
  /** Error answers whose body is not the catalogue's `{error}` (e.g. Fastify's `{statusCode, code, error, message}`). */
  foreignErrorBodies: FuzzFinding[];
  seconds: number;
}

/**
 * The catalogue's error body: `{error: string}` plus its `code` and extra fields, or, for the one kind of
 * that shape (`GET /quick-replies/{id}` without a valid token), `{code, message, data}`.
 */
export function isCatalogueError(text: string): boolean {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return false;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const fields = body as Record<string, unknown>;
  if (typeof fields.error === 'string') return !('statusCode' in fields) && !String(fields.code ?? '').startsWith('FST_');
  return typeof fields.code === 'number' && typeof fields.message === 'string' && 'data' in fields;
}

export interface FuzzOptions {
  baseUrl: string;
  /** Our own document (GET /openapi.json). */
  document: any;
  token: string;
  admintoken: string;
  count: number;
  seed: number;
  concurrency?: number;
  /** A request with no answer after this long is a hang. */
  hangMs?: number;
  /** Operations that end the instance or the admin token; they run last. */
  destructive?: (operation: Operation) => boolean;
  /** Called after each answer (e.g. to pick up a rotated admin token). */
  onAnswer?: (fuzzCase: FuzzCase, status: number, body: string) => void;
}

// `POST /instance/export` ends the session here too: its credentials leave with the bundle (issue #40).
const DESTRUCTIVE = new Set([
  'DELETE /instance',
  'POST /instance/disconnect',
  'POST /instance/export',
  'POST /admin/token/rotate',
  'POST /admin/restart',
  'POST /instance/reset',
]);

export const isDestructive = (operation: Operation) => DESTRUCTIVE.has(`${operation.method} ${operation.path}`);

/** Sends the cases and counts what came back: every 5xx, every hang and every dropped connection is a finding. */
export async function runFuzz(options: FuzzOptions): Promise<FuzzReport> {
  const started = Date.now();
  const operations = operationsOf(options.document);
  const tokens = { token: options.token, admintoken: options.admintoken };
  const cases = generateCases(operations, options.count, options.seed, tokens, options.destructive ?? isDestructive);
  const report: FuzzReport = {
    seed: options.seed,
    requests: 0,
    operations: operations.length,
    byStatus: {},
    byFamily: {},
    serverErrors: [],
    transientTimeouts: [],
    deprecatedAnswers: 0,
    hangs: [],
    connectionErrors: [],
    foreignErrorBodies: [],
    seconds: 0,
  };
  const hangMs = options.hangMs ?? 30_000;

  const timedOut: Array<{ fuzzCase: FuzzCase; finding: FuzzFinding }> = [];

  const one = async (fuzzCase: FuzzCase) => {
    // The admin token may have been rotated by an earlier case.
    if (fuzzCase.headers.admintoken === options.admintoken) fuzzCase.headers.admintoken = tokens.admintoken;
    report.requests++;
    report.byFamily[fuzzCase.family] = (report.byFamily[fuzzCase.family] ?? 0) + 1;
    const finding = (status: FuzzFinding['status'], detail: string): FuzzFinding => ({
      family: fuzzCase.family,
      method: fuzzCase.method,
      url: fuzzCase.url.slice(0, 200),
      status,
      detail: detail.slice(0, 300),
    });
    try {
      const response = await request(`${options.baseUrl}${fuzzCase.url}`, {
        method: fuzzCase.method as never,
        headers: fuzzCase.headers,
        body: fuzzCase.body,
        headersTimeout: hangMs,
        bodyTimeout: hangMs,
        // A body that trickles forever is a hang too.
        signal: AbortSignal.timeout(hangMs * 2),
      });
      // An event stream never ends by itself: its status and headers are the answer.
      const streaming = String(response.headers['content-type'] ?? '').startsWith('text/event-stream');
      const text = streaming ? (response.body.destroy(), '') : await response.body.text();
      report.byStatus[response.statusCode] = (report.byStatus[response.statusCode] ?? 0) + 1;
      // Whatever layer refused it (router, body parser, guard, DTO, service), an error is the catalogue's body (HEAD has none).
      if (response.statusCode >= 400 && fuzzCase.method !== 'HEAD' && !isCatalogueError(text))
        report.foreignErrorBodies.push(finding(response.statusCode, text));
      // A 504 is the worker answering late; whether bad input caused it is decided by sending it again alone.
      // A deprecated route's 504 is its documented answer (e.g. /newsletter/updates: WhatsApp no longer answers it).
      if (response.statusCode === 504 && fuzzCase.operation.deprecated) report.deprecatedAnswers++;
      else if (response.statusCode === 504) timedOut.push({ fuzzCase, finding: finding(504, text) });
      else if (response.statusCode >= 500) report.serverErrors.push(finding(response.statusCode, text));
      if (fuzzCase.operation.path === '/admin/token/rotate' && response.statusCode === 200) {
        const rotated = (JSON.parse(text) as { token?: string }).token;
        if (rotated) tokens.admintoken = rotated;
      }
      options.onAnswer?.(fuzzCase, response.statusCode, text);
    } catch (error) {
      const code = (error as { code?: string }).code ?? '';
      if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || (error as Error).name === 'TimeoutError') {
        report.byStatus.hang = (report.byStatus.hang ?? 0) + 1;
        report.hangs.push(finding('hang', `no answer within ${hangMs} ms`));
      } else {
        report.byStatus['connection-error'] = (report.byStatus['connection-error'] ?? 0) + 1;
        report.connectionErrors.push(finding('connection-error', `${code} ${(error as Error).message}`));
      }
    }
  };

  // A fixed number of lanes pulling from one generator: order is seeded, interleaving is not.
  const lanes = Array.from({ length: options.concurrency ?? 8 }, async () => {
    for (;;) {
      const next = cases.next();
      if (next.done) return;
      await one(next.value);
    }
  });
  await Promise.all(lanes);
  for (const { fuzzCase, finding } of timedOut) {
    const again = await request(`${options.baseUrl}${fuzzCase.url}`, {
      method: fuzzCase.method as never,
      headers: fuzzCase.headers,
      body: fuzzCase.body,
      headersTimeout: hangMs,
      bodyTimeout: hangMs,
    }).catch(() => undefined);
    await again?.body.text().catch(() => undefined);
    if (again && again.statusCode < 500) report.transientTimeouts.push(finding);
    else report.serverErrors.push(finding);
  }
  report.seconds = Math.round((Date.now() - started) / 100) / 10;
  return report;
}
