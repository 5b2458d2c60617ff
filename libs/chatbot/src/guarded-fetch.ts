import { guardedConnector, type SsrfGuard } from '@gw/platform';
import { Agent, fetch as undiciFetch } from 'undici';

/**
 * A `fetch` that only reaches what the SSRF guard allows: the URL is checked (scheme, every address
 * its host resolves to) before the request, the connection's own lookup refuses a private address
 * again (DNS rebinding), and redirects are not followed. Given to the AI SDK's providers, and used for
 * functions and knowledge URLs.
 */
export function guardedFetch(guard: SsrfGuard): typeof fetch {
  const agent = new Agent({ connect: guardedConnector(guard, { timeout: 10_000 }), keepAliveTimeout: 10_000 });
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    await guard.check(url);
    const request = input instanceof Request ? { method: input.method, headers: input.headers, body: input.body, signal: input.signal } : {};
    return undiciFetch(url, { ...request, ...(await multipart(init)), redirect: 'manual', dispatcher: agent } as never) as unknown as Response;
  }) as typeof fetch;
}

/**
 * `init` with a FormData body (the AI SDK's transcription upload) encoded as multipart bytes and its
 * content type: the FormData is Node's own, which the undici package's fetch does not recognise (it
 * would send "[object FormData]").
 */
async function multipart(init: RequestInit | undefined): Promise<RequestInit | undefined> {
  if (!init || !(init.body instanceof globalThis.FormData)) return init;
  const encoded = new Response(init.body);
  const headers = Object.fromEntries(new Headers(init.headers).entries());
  headers['content-type'] = encoded.headers.get('content-type') ?? 'multipart/form-data';
  return { ...init, headers, body: Buffer.from(await encoded.arrayBuffer()) };
}

/**
 * A `fetch` whose answers hold at most `maxBytes`: one that says it is larger (content-length) is
 * refused before its body is read, and a body that grows past it fails as it streams in. What another
 * server (a custom agent's `url`) answers is then never read whole beyond the bound.
 */
export function boundedFetch(fetch: typeof globalThis.fetch, maxBytes: number): typeof globalThis.fetch {
  const tooLarge = () => new Error(`the answer is larger than ${maxBytes} bytes`);
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const response = await fetch(input, init);
    if (Number(response.headers.get('content-length') ?? 0) > maxBytes) {
      await response.body?.cancel().catch(() => undefined);
      throw tooLarge();
    }
    if (!response.body) return response;
    let size = 0;
    const body = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          size += chunk.byteLength;
          if (size > maxBytes) controller.error(tooLarge());
          else controller.enqueue(chunk);
        },
      }),
    );
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  }) as typeof fetch;
}
