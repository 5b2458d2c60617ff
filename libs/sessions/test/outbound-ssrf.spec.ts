import { get } from 'node:https';
import type { Agent } from 'node:https';
import type { FileRepository, ProxySettings } from '@gw/persistence';
import { SsrfGuard } from '@gw/platform';
import { startSsrfTargets, type SsrfTargets } from '@gw/testing';
import { request, type Dispatcher } from 'undici';
import { MediaSource } from '../src/outbound/media-source';
import { networkOptions, PROXY_FAILED } from '../src/socket/network-options';

/**
 * The session worker's outbound requests against the SSRF matrix (libs/testing ssrf-targets): media
 * and pictures by URL (MediaSource), and a tenant's custom proxy on every path a socket uses (the
 * WebSocket and uploads through node:https, downloads through undici). Only 127.0.0.2 is allowed;
 * nothing may arrive at 127.0.0.1, 127.0.0.3 or [::1], in any encoding, after any redirect.
 */
describe('the session worker through the SSRF guard', () => {
  let targets: SsrfTargets;
  let guard: SsrfGuard;

  beforeAll(async () => {
    targets = await startSsrfTargets();
    guard = new SsrfGuard(targets.allowlist);
  });
  afterAll(() => targets.close());

  describe(MediaSource.name, () => {
    let media: MediaSource;
    beforeAll(() => (media = new MediaSource({} as FileRepository, guard)));
    afterAll(() => media.close());

    it('should fetch from the allowed server (the matrix can tell a fetch that works)', async () => {
      await expect(media.fetch(`${targets.publicUrl}/ok`)).resolves.toMatchObject({ data: Buffer.from('ok') });
    });

    it('should reach no forbidden address, in any encoding or through a redirect', async () => {
      for (const url of [...targets.forbiddenUrls, ...targets.redirects]) {
        await expect(media.fetch(url)).rejects.toThrow(/file URL refused|could not download the file/);
      }
      expect(targets.arrivals()).toEqual({});
    });
  });

  describe('a custom proxy', () => {
    const proxy = (proxyUrl: string): ProxySettings => ({
      mode: 'custom',
      proxyUrl,
      proxyFallback: null,
      managed: null,
      lastTestAt: null,
      lastTestError: null,
    });
    const viaAgent = (agent: Agent) =>
      new Promise<string>((resolve) => {
        const call = get('https://web.whatsapp.example/', { agent, timeout: 15_000 }, (response) => {
          response.resume();
          resolve(`answered ${response.statusCode}`);
        });
        call.on('error', (error) => resolve(error.message));
      });
    const viaDispatcher = (dispatcher: Dispatcher) =>
      request('https://mmg.whatsapp.example/file', { dispatcher, headersTimeout: 15_000 }).then(
        (response) => `answered ${response.statusCode}`,
        (error: Error & { cause?: Error }) => error.cause?.message ?? error.message,
      );
    const close = async (options: ReturnType<typeof networkOptions>) => {
      options.agent?.destroy();
      await options.options?.dispatcher.close();
    };

    it.each(['http', 'socks5', 'socks5h'])('should not connect to a forbidden %s proxy, in any encoding', async (scheme) => {
      for (const host of targets.forbiddenHosts) {
        const options = networkOptions(proxy(`${scheme}://${host}`), undefined, guard);
        expect([host, await viaAgent(options.agent as Agent)]).toEqual([host, PROXY_FAILED]);
        expect([host, await viaDispatcher(options.options!.dispatcher)]).toEqual([host, PROXY_FAILED]);
        await close(options);
      }
      expect(targets.arrivals()).toEqual({});
    });

    it.each(['http', 'socks5'])('should fail one way through a %s proxy, whether it is forbidden, refuses or hangs up', async (scheme) => {
      const seen = new Set<string>();
      const before = targets.publicConnections();
      for (const host of [targets.forbiddenHosts[0], '127.0.0.2:1', `127.0.0.2:${targets.port}`]) {
        const options = networkOptions(proxy(`${scheme}://${host}`), undefined, guard);
        seen.add(await viaAgent(options.agent as Agent));
        seen.add(await viaDispatcher(options.options!.dispatcher));
        await close(options);
      }
      expect([...seen]).toEqual([PROXY_FAILED]);
      // The allowed one was reached (and hung up): the guard let it through, and it was not hammered.
      expect(targets.publicConnections() - before).toBeGreaterThan(0);
      expect(targets.publicConnections() - before).toBeLessThan(5);
      expect(targets.arrivals()).toEqual({});
    });
  });
});
