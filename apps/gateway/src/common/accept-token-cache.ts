import type { RequestInstance } from './request-instance';

/**
 * token → instance for sends (`POST /send/*`, sync or `async=true`), kept for ten seconds. An async
 * accept is one shared INSERT (group commit) plus the token lookup; without this, the lookup is most
 * of its SQL. (With a second, 1,000 instances sending 500/s between them still looked their token up
 * 4 times in 5.) A sync send's only database read on the gateway was this lookup (ADR 0012).
 *
 * Why only sends: they use of the instance its id and owner (and, for menus, its lead fields for
 * placeholders), none of which a second of staleness can make wrong in a way that matters. Every
 * other route reads the instance fresh (status, settings must reflect a change made a moment ago).
 * What staleness allows: for up to `ttlMs` after an instance is deleted or its token changes, a send
 * with the old token still reaches the accept path; a deleted instance's rows cannot be inserted
 * (foreign key), and that accept answers 401 like an unknown token; a sync send reaches no session
 * (the worker stopped it with the instance) and answers 409 No session.
 */
export class AcceptTokenCache {
  private readonly entries = new Map<string, { instance: RequestInstance; until: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
  ) {}

  get(token: string, now = Date.now()): RequestInstance | undefined {
    const entry = this.entries.get(token);
    if (!entry) return undefined;
    if (entry.until <= now) {
      this.entries.delete(token);
      return undefined;
    }
    return entry.instance;
  }

  set(token: string, instance: RequestInstance, now = Date.now()): void {
    if (this.entries.size >= this.maxEntries) {
      // Expired entries first; if all are live, the oldest inserted goes (Map keeps insertion order).
      for (const [key, entry] of this.entries) if (entry.until <= now) this.entries.delete(key);
      if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
    }
    this.entries.delete(token);
    this.entries.set(token, { instance, until: now + this.ttlMs });
  }

  forget(token: string): void {
    this.entries.delete(token);
  }
}

/** The gateway's one cache (guards are not singletons across modules; the cache must be). */
export const asyncAcceptTokens = new AcceptTokenCache(10_000, 50_000);

/** An `async=true` send: `POST /send/*` with `"async": true` in the parsed body. */
export function isAsyncSend(method: string, url: string, body: unknown): boolean {
  return isSend(method, url) && typeof body === 'object' && body !== null && (body as { async?: unknown }).async === true;
}

/** A send, sync or async: `POST /send/*`. */
export function isSend(method: string, url: string): boolean {
  return method === 'POST' && url.startsWith('/send/');
}
