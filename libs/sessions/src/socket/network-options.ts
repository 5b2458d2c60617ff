import { Agent as HttpsAgent } from 'node:https';
import type { Agent } from 'node:https';
import type { ProxySettings } from '@gw/persistence';
import type { Logger } from '@gw/platform';
import { HttpsProxyAgent } from 'https-proxy-agent';
import { SocksProxyAgent } from 'socks-proxy-agent';
import { Agent as UndiciAgent, ProxyAgent, Socks5ProxyAgent, type Dispatcher } from 'undici';
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

/**
 * Proxy (`proxy.mode === 'custom'` with a URL, or `internal` with a managed proxy of the operator's
 * pools assigned) and the simulator seam, combined. A proxy is
 * used for all three paths; http(s) proxies tunnel with CONNECT, socks proxies via SOCKS.
 */
export function networkOptions(proxy: ProxySettings | null, simulator: SimulatorSeam | undefined): NetworkOptions {
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
  if (proxyUrl) Object.assign(options, proxyOptions(proxyUrl, simulator !== undefined));
  return options;
}

function proxyOptions(proxyUrl: string, insecure: boolean): NetworkOptions {
  const url = new URL(proxyUrl);
  const tls = insecure ? { rejectUnauthorized: false } : {};
  if (url.protocol === 'http:' || url.protocol === 'https:') {
    const agent = new HttpsProxyAgent(url, { keepAlive: true, ...tls });
    return { agent, fetchAgent: agent, options: { dispatcher: new ProxyAgent({ uri: url.toString(), requestTls: tls }) } };
  }
  if (url.protocol.startsWith('socks')) {
    const agent = new SocksProxyAgent(url);
    const dispatcher: Dispatcher = new Socks5ProxyAgent(url);
    return { agent, fetchAgent: agent, options: { dispatcher } };
  }
  throw new Error(`unsupported proxy protocol ${url.protocol}`);
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
