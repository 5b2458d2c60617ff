import { callFunction, guardedFetch } from '@gw/chatbot';
import { ChatwootClient } from '@gw/chatwoot';
import type { WebhookRow } from '@gw/persistence';
import { guardedConnector, SsrfGuard } from '@gw/platform';
import { HttpTransport } from '@gw/relay';
import { startSsrfTargets, type SsrfTargets } from '@gw/testing';
import { Agent } from 'undici';
import { LinkPreviewBuilder } from '../src/send/link-preview';

/**
 * The SSRF matrix (libs/testing ssrf-targets) for the fetchers the gateway, the relay and the chatbot
 * own: every encoding of a forbidden address, and the allowed server's redirects to each, must reach
 * nothing but 127.0.0.2 (the only address SSRF_ALLOWLIST admits here). The worker's fetchers and
 * proxies: libs/sessions/test/outbound-ssrf.spec.ts.
 */
describe('outbound requests through the SSRF guard', () => {
  let targets: SsrfTargets;
  let guard: SsrfGuard;
  let all: string[];

  beforeAll(async () => {
    targets = await startSsrfTargets();
    guard = new SsrfGuard(targets.allowlist);
    all = [...targets.forbiddenUrls, ...targets.redirects];
  });
  afterEach(() => expect(targets.arrivals()).toEqual({}));
  afterAll(() => targets.close());

  it('webhooks and HTTP sinks (HttpTransport): delivered to the allowed server only, signed headers nowhere else', async () => {
    const transport = new HttpTransport({ ssrf: guard, requestTimeoutMs: 5_000 });
    const message = { id: 'evt_1', event: { eventType: 'messages', payload: {} }, body: '{}' } as never;
    const hook = (url: string) => ({ url, secret: 'whsec_c2VjcmV0', addUrlEvents: false, addUrlTypesMessages: false }) as WebhookRow;
    expect(await transport.send(hook(`${targets.publicUrl}/ok`), message)).toMatchObject({ ok: true });
    for (const url of all) expect(await transport.send(hook(url), message)).toMatchObject({ ok: false });
    await transport.close();
  });

  it('Chatwoot: the API and attachments, with the token on the allowed server only', async () => {
    const agent = new Agent({ connect: guardedConnector(guard, { timeout: 5_000 }) });
    const client = (url: string) => new ChatwootClient({ url, accessToken: 'cw-secret', accountId: 1 }, agent, 5_000, guard);
    for (const url of all) {
      await expect(client(url).searchContacts('x')).rejects.toThrow();
      await expect(client(targets.publicUrl).download(url, 1_000_000)).rejects.toThrow();
    }
    // The API path of a redirecting base: the public server answers its 307, which is not followed.
    const hits = targets.publicHits.length;
    await expect(client(`${targets.publicUrl}/to/${encodeURIComponent(targets.forbiddenUrls[0])}?`).searchContacts('x')).rejects.toThrow(/not followed/);
    expect(targets.publicHits.length).toBe(hits + 1);
    await agent.close();
  });

  it('chatbot providers, functions and knowledge URLs (guardedFetch), however called', async () => {
    const fetch = guardedFetch(guard);
    expect((await fetch(`${targets.publicUrl}/ok`)).status).toBe(200);
    for (const url of all) {
      const answer = await fetch(url, { headers: { authorization: 'Bearer sk-secret' } }).then(
        (response) => response.status,
        () => 'refused',
      );
      // A redirect is answered as it is (3xx), never followed.
      expect([url, answer === 'refused' || (typeof answer === 'number' && answer >= 300 && answer < 400)]).toEqual([url, true]);
      const called = (await callFunction(
        { name: 'f', description: '', method: 'POST', endpoint: url, headers: { authorization: 'Bearer fn' }, body: '', parameters: [] } as never,
        {},
        fetch,
        5_000,
      )) as { ok?: boolean };
      expect(called.ok).not.toBe(true);
    }
  });

  it('link previews: the page and its image', async () => {
    const previews = new LinkPreviewBuilder(guard);
    for (const url of all) await previews.build(`see ${url}`, {});
    for (const url of targets.forbiddenUrls)
      await expect(previews.build(`see ${targets.publicUrl}/ok`, { image: url })).rejects.toThrow(/linkPreviewImage refused/);
    for (const url of targets.redirects) await previews.build(`see ${targets.publicUrl}/ok`, { image: url });
    await previews.close();
  });
});
