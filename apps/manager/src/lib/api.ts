/**
 * The console's only way to the gateway: its public HTTP API (same origin). The admin token goes in the
 * `admintoken` header, an instance token in `token`, exactly as any other client sends them.
 */

export type Role = 'admin' | 'instance';

export interface Credentials {
  role: Role;
  token: string;
}

/** An answer other than 2xx: the gateway's `{error}` text when it sent one. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly body?: unknown,
  ) {
    super(message);
  }
}

export interface CallOptions {
  /** The admin token (admin routes). */
  admin?: string;
  /** An instance token (instance routes). */
  token?: string;
  body?: unknown;
  signal?: AbortSignal;
  query?: Record<string, string | undefined>;
}

type Fetch = (input: string, init?: RequestInit) => Promise<Response>;

/** The message to show for a failed answer: `{error}` (or `{message}`), else the status line. */
export function errorText(status: number, body: unknown): string {
  if (body && typeof body === 'object') {
    const record = body as Record<string, unknown>;
    for (const key of ['error', 'message', 'details']) {
      const value = record[key];
      if (typeof value === 'string' && value) return value;
      if (Array.isArray(value) && value.length) return value.map(String).join('; ');
    }
  }
  if (typeof body === 'string' && body && body.length < 300) return body;
  return status === 0 ? 'The gateway did not answer' : `HTTP ${status}`;
}

export class Api {
  constructor(
    private readonly base = '',
    private readonly fetcher: Fetch = (input, init) => fetch(input, init),
  ) {}

  async call<T = unknown>(method: string, path: string, options: CallOptions = {}): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (options.admin !== undefined) headers.admintoken = options.admin;
    if (options.token !== undefined) headers.token = options.token;
    let body: string | undefined;
    if (options.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.body);
    }
    const query = Object.entries(options.query ?? {}).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== '');
    const url = `${this.base}${path}${query.length ? `?${new URLSearchParams(query).toString()}` : ''}`;
    let response: Response;
    try {
      response = await this.fetcher(url, { method, headers, body, signal: options.signal });
    } catch (error) {
      if ((error as Error)?.name === 'AbortError') throw error;
      throw new ApiFailure(0, 'The gateway did not answer (network error)');
    }
    const text = await response.text();
    let parsed: unknown = text;
    if (text) {
      try {
        parsed = JSON.parse(text);
      } catch {
        // not JSON: kept as text
      }
    } else parsed = undefined;
    if (!response.ok) throw new ApiFailure(response.status, errorText(response.status, parsed), parsed);
    return parsed as T;
  }

  /** Which kind of token this is: the admin's (GET /instance/all answers) or an instance's (GET /instance/status answers). */
  async identify(token: string): Promise<Role> {
    const trimmed = token.trim();
    if (!trimmed) throw new ApiFailure(400, 'Enter a token');
    try {
      await this.call('GET', '/instance/all', { admin: trimmed });
      return 'admin';
    } catch (error) {
      if (!(error instanceof ApiFailure) || (error.status !== 401 && error.status !== 403)) throw error;
    }
    try {
      await this.call('GET', '/instance/status', { token: trimmed });
      return 'instance';
    } catch (error) {
      if (error instanceof ApiFailure && (error.status === 401 || error.status === 403))
        throw new ApiFailure(401, 'This token is neither the admin token nor an instance token');
      throw error;
    }
  }
}

export const api = new Api();
