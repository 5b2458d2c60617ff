import type { ClientRequest } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { Agent } from 'node:https';
import type { Socket } from 'node:net';
import type { ProxySettings } from '@gw/persistence';
import { guardedConnector, guardedLookup, type Logger, type SsrfGuard } from '@gw/platform';
import type { AgentConnectOpts } from 'agent-base';
import { HttpsProxyAgent } from 'https-proxy-agent';
import { SocksProxyAgent } from 'socks-proxy-agent';
import { Agent as UndiciAgent, type buildConnector, Pool, ProxyAgent, Socks5ProxyAgent, type Dispatcher } from 'undici';
import { WA_CERT_DETAILS } from '../baileys';
import type { SimulatorSeam } from '../config/session-worker.config';

/** The network-facing part of a Baileys socket config. */
export interface NetworkOptions {
  waWebSocketUrl?: string;
  /** WebSocket transport (Socket/Client/websocket.js). */
  agent?: Agent;
  /** Media uploads through node:https (messages-media.js getWAUploadToServer). */
  fetchAgent?: Agent;
  /** Downloads and link previews go through global fetch with `options.dispatcher`. */
  options?: { dispatcher: Dispatcher };
}

let seamAgents: { fetchAgent: Agent; dispatcher: Dispatcher } | null = null;

/** The `options` each socket was made with; Baileys keeps them in its config, which the socket does not expose. */
const socketFetchOptions = new WeakMap<object, NonNullable<NetworkOptions['options']>>();

/** Remembers the socket's `options`, for what downloads beside Baileys (`fetchOptionsOf`). */
export function rememberFetchOptions(socket: object, network: NetworkOptions): void {
  if (network.options) socketFetchOptions.set(socket, network.options);
}

/**
 * What a download made for a socket outside Baileys' own calls passes to Baileys' download helpers
 * (app-state blobs: extractSyncdPatches, decodePatches), as Baileys passes its `config.options`: the
 * instance's proxy (and the simulator seam's TLS). Empty for a socket made without either.
 */
export function fetchOptionsOf(socket: object): { dispatcher?: Dispatcher } {
  return socketFetchOptions.get(socket) ?? {};
}

/**
 * Proxy (`proxy.mode === 'custom'` with a URL, or `internal` with a managed proxy of the operator's
 * pools assigned) and the simulator seam, combined. A proxy is
 * used for all three paths; http(s) proxies tunnel with CONNECT, socks proxies via SOCKS.
 *
 * The proxy's host passes `guard` (SSRF_ALLOWLIST) at every connection, as any URL a tenant gives:
 * resolved and judged first, its connection's own lookup judging again (rebinding). However it fails
 * (refused by the guard, refused by the host, timed out), the connection fails with one error,
 * PROXY_FAILED, so what a tenant sees never tells whether a host is there.
 */
export function networkOptions(proxy: ProxySettings | null, simulator: SimulatorSeam | undefined, guard: SsrfGuard): NetworkOptions {
  const options: NetworkOptions = {};
  if (simulator) {
    options.waWebSocketUrl = simulator.websocketUrl;
    // The simulator's media server uses a self-signed certificate. One pair of agents for every
    // socket of the process, as a process without the seam shares the global ones.
    seamAgents ??= {
      fetchAgent: new HttpsAgent({ rejectUnauthorized: false, keepAlive: true }),
      dispatcher: new UndiciAgent({ connect: { rejectUnauthorized: false } }),
    };
    options.fetchAgent = seamAgents.fetchAgent;
    options.options = { dispatcher: seamAgents.dispatcher };
  }
  const proxyUrl = proxy?.mode === 'custom' ? proxy.proxyUrl : proxy?.mode === 'internal' ? (proxy.managed?.proxyUrl ?? null) : null;
  if (proxyUrl) Object.assign(options, proxyOptions(proxyUrl, simulator !== undefined, guard));
  return options;
}

/** The one error of a connection to a proxy that failed, whatever the cause. */
export const PROXY_FAILED = 'the proxy could not be reached';

function proxyFailed(): Error {
  // An E… code: Baileys ends the socket with 408, as it does for any network failure.
  return Object.assign(new Error(PROXY_FAILED), { code: 'EPROXY' });
}

function proxyOptions(proxyUrl: string, insecure: boolean, guard: SsrfGuard): NetworkOptions {
  const url = new URL(proxyUrl);
  const tls = insecure ? { rejectUnauthorized: false } : {};
  // Hosts of socks URLs are as written (WHATWG normalises http(s) ones only); checkHost reads every form.
  const checked = () => guard.checkHost(url.hostname);
  if (url.protocol === 'http:' || url.protocol === 'https:') {
    const agent = new GuardedHttpsProxyAgent(url, { keepAlive: true, ...tls, lookup: guardedLookup(guard) }, checked);
    const proxyConnect = genericFailure(guardedConnector(guard, { ...tls, timeout: PROXY_CONNECT_TIMEOUT_MS }));
    const dispatcher = new ProxyAgent({
      uri: url.toString(),
      requestTls: tls,
      clientFactory: (origin: URL, options: object) => new Pool(origin, { ...options, connect: proxyConnect }),
      // The tunnel's failures too (a CONNECT the proxy hangs up on): undici would reconnect at once,
      // forever, on a socket error, hammering whatever is there.
      factory: (origin: string | URL, options: Pool.Options) =>
        new Pool(origin, { ...options, connect: genericFailure(options.connect as buildConnector.connector) }),
    });
    return { agent, fetchAgent: agent, options: { dispatcher } };
  }
  if (url.protocol.startsWith('socks')) {
    const agent = new GuardedSocksProxyAgent(url, { socketOptions: { lookup: guardedLookup(guard) as never } }, checked);
    const connect = genericFailure(guardedConnector(guard, { ...tls, timeout: PROXY_CONNECT_TIMEOUT_MS }));
    // undici's agent knows socks5: only; it hands host names to the proxy, which is what socks5h asks for.
    const socks = new URL(url.href.replace(/^socks5h:/, 'socks5:'));
    const dispatcher: Dispatcher = new GuardedSocks5ProxyAgent(socks, { connect } as ConstructorParameters<typeof Socks5ProxyAgent>[1]);
    return { agent, fetchAgent: agent, options: { dispatcher } };
  }
  throw new Error(`unsupported proxy protocol ${url.protocol}`);
}

const PROXY_CONNECT_TIMEOUT_MS = 10_000;

/** An undici connector whose every failure is PROXY_FAILED. */
function genericFailure(connect: buildConnector.connector): buildConnector.connector {
  return (target, callback) => connect(target, (error, socket) => (error ? callback(proxyFailed(), null) : callback(null, socket as Socket)));
}

/** node:https traffic (the WebSocket, media uploads) through an http(s) proxy the guard passed. */
class GuardedHttpsProxyAgent extends HttpsProxyAgent<string> {
  constructor(
    url: URL,
    options: ConstructorParameters<typeof HttpsProxyAgent>[1],
    private readonly checked: () => Promise<unknown>,
  ) {
    super(url, options);
  }

  override async connect(request: ClientRequest, options: AgentConnectOpts): Promise<Socket> {
    try {
      await this.checked();
      return await super.connect(request, options);
    } catch {
      throw proxyFailed();
    }
  }
}

/** undici traffic through a socks proxy: the handshake's failures (not a SOCKS server there…) are PROXY_FAILED too. */
class GuardedSocks5ProxyAgent extends Socks5ProxyAgent {
  async createSocks5Connection(targetHost: string, targetPort: number): Promise<Socket> {
    try {
      return await (Socks5ProxyAgent.prototype as unknown as GuardedSocks5ProxyAgent).createSocks5Connection.call(this, targetHost, targetPort);
    } catch {
      throw proxyFailed();
    }
  }
}

/** node:https traffic through a socks proxy the guard passed. */
class GuardedSocksProxyAgent extends SocksProxyAgent {
  constructor(
    url: URL,
    options: ConstructorParameters<typeof SocksProxyAgent>[1],
    private readonly checked: () => Promise<unknown>,
  ) {
    super(url, options);
  }

  override async connect(request: ClientRequest, options: AgentConnectOpts): Promise<Socket> {
    try {
      await this.checked();
      return await super.connect(request, options);
    } catch {
      throw proxyFailed();
    }
  }
}

let seamApplied: Buffer | null = null;

/**
 * Makes Baileys trust the simulator's certificate root. `WA_CERT_DETAILS` is a plain exported object
 * that the noise handshake reads on every connect, so this affects every socket of the process; it
 * is only ever called when both seam variables are set.
 */
export function applySimulatorSeam(simulator: SimulatorSeam | undefined, logger: Logger): void {
  if (!simulator) return;
  if (seamApplied?.equals(simulator.rootPublicKey)) return;
  WA_CERT_DETAILS.PUBLIC_KEY = Buffer.from(simulator.rootPublicKey);
  seamApplied = Buffer.from(simulator.rootPublicKey);
  logger.warn(
    { websocketUrl: simulator.websocketUrl },
    '!!! TEST SEAM ACTIVE: WhatsApp traffic goes to a simulator, its certificate root is trusted and media TLS is not verified. Never use this in production. !!!',
  );
}
