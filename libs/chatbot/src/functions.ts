import type { FunctionSettings } from './records';

/** The most of a function's answer the model is shown. */
const MAX_ANSWER_CHARS = 8_000;

const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

function fill(template: string, args: Record<string, unknown>, encode: (value: string) => string): string {
  return template.replace(PLACEHOLDER, (_match, name: string) => {
    const value = args[name];
    return value === undefined || value === null ? '' : encode(typeof value === 'string' ? value : JSON.stringify(value));
  });
}

/** A JSON body template: placeholders in string values become the arguments themselves (a whole "{{n}}" keeps the argument's type). */
function fillJson(value: unknown, args: Record<string, unknown>): unknown {
  if (typeof value === 'string') {
    const whole = /^\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}$/.exec(value);
    if (whole) return args[whole[1]] ?? null;
    return fill(value, args, (text) => text);
  }
  if (Array.isArray(value)) return value.map((item) => fillJson(item, args));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, fillJson(item, args)]));
  return value;
}

/**
 * Calls an HTTP function for the model: `{{parameter}}` in the endpoint (URL-encoded), the headers and
 * the body template; a GET or DELETE without placeholders in its URL gets the arguments as its query.
 * The answer (status and body, cut at 8000 characters) goes back to the model; so do a timeout and a
 * refused URL (SSRF guard), as errors it can tell the contact about.
 */
export async function callFunction(fn: FunctionSettings, args: Record<string, unknown>, fetch: typeof globalThis.fetch, timeoutMs: number): Promise<unknown> {
  let url = fill(fn.endpoint, args, encodeURIComponent);
  const headers: Record<string, string> = Object.fromEntries(Object.entries(fn.headers).map(([name, value]) => [name, fill(value, args, (text) => text)]));
  let body: string | undefined;
  if (fn.method === 'GET' || fn.method === 'DELETE') {
    if (!/\{\{/.test(fn.endpoint)) {
      const query = new URL(url);
      for (const [name, value] of Object.entries(args)) if (value !== undefined && value !== null) query.searchParams.set(name, String(value));
      url = query.href;
    }
  } else if (typeof fn.body === 'string' && fn.body.trim()) {
    body = fill(fn.body, args, (text) => text);
  } else if (fn.body && typeof fn.body === 'object' && Object.keys(fn.body).length) {
    body = JSON.stringify(fillJson(fn.body, args));
  } else {
    body = JSON.stringify(args);
  }
  if (body !== undefined && !Object.keys(headers).some((name) => name.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const response = await fetch(url, { method: fn.method, headers, body, signal });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: the text as it is
    }
    const answer =
      typeof parsed === 'string'
        ? parsed.slice(0, MAX_ANSWER_CHARS)
        : JSON.stringify(parsed).length > MAX_ANSWER_CHARS
          ? text.slice(0, MAX_ANSWER_CHARS)
          : parsed;
    return { status: response.status, ok: response.ok, body: answer };
  } catch (error) {
    if (signal.aborted) return { error: `the function did not answer within ${timeoutMs} ms` };
    return { error: `the function could not be called: ${(error as Error).message}` };
  }
}
