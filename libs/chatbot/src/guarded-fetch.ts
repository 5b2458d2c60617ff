import { guardedLookup, type SsrfGuard } from '@gw/platform';
import { Agent, fetch as undiciFetch } from 'undici';

/**
 * A `fetch` that only reaches what the SSRF guard allows: the URL is checked (scheme, every address
 * its host resolves to) before the request, the connection's own lookup refuses a private address
 * again (DNS rebinding), and redirects are not followed. Given to the AI SDK's providers, and used for
 * functions and knowledge URLs.
 */
export function guardedFetch(guard: SsrfGuard): typeof fetch {
  const agent = new Agent({ connect: { lookup: guardedLookup(guard), timeout: 10_000 }, keepAliveTimeout: 10_000 });
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    await guard.check(url);
    const request = input instanceof Request ? { method: input.method, headers: input.headers, body: input.body, signal: input.signal } : {};
    return undiciFetch(url, { ...request, ...(init as object), redirect: 'manual', dispatcher: agent } as never) as unknown as Response;
  }) as typeof fetch;
}
