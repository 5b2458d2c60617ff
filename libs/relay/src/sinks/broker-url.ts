import { isIP } from 'node:net';
import { maskUrlCredentials, type SinkKind } from '@gw/persistence';
import { SsrfError, type SsrfGuard } from '@gw/platform';

/** A broker address as given: `amqp://user:pass@host:5672/vhost`, `nats://h1:4222,h2:4222`, `kafka://b1:9092,b2:9092`. */
export interface BrokerUrl {
  scheme: string;
  username: string;
  password: string;
  hosts: Array<{ host: string; port: number }>;
  /** The path without its leading slash (AMQP's vhost), decoded. */
  path: string;
  params: URLSearchParams;
}

const SCHEMES: Record<Exclude<SinkKind, 'webhook'>, Record<string, number>> = {
  rabbitmq: { amqp: 5672, amqps: 5671 },
  nats: { nats: 4222, tls: 4222 },
  kafka: { kafka: 9092, kafkas: 9093 },
};

export class BrokerUrlError extends Error {}

/** Parses a broker URL of this kind (several `host:port` separated by commas for NATS and Kafka). */
export function parseBrokerUrl(kind: Exclude<SinkKind, 'webhook'>, raw: string): BrokerUrl {
  const match = /^([a-z][a-z0-9+.-]*):\/\/(?:([^@/?#]*)@)?([^/?#]+)(\/[^?#]*)?(\?[^#]*)?$/i.exec(raw.trim());
  const schemes = SCHEMES[kind];
  const names = Object.keys(schemes)
    .map((scheme) => `${scheme}://`)
    .join(' or ');
  if (!match) throw new BrokerUrlError(`url must look like ${names}host:port`);
  const scheme = match[1].toLowerCase();
  if (!(scheme in schemes)) throw new BrokerUrlError(`url must start with ${names}`);
  const [user = '', pass = ''] = (match[2] ?? '').split(/:(.*)/s);
  const hosts = match[3].split(',').map((part) => {
    const hostMatch = /^(\[[0-9a-f:.]+\]|[a-z0-9._-]+)(?::(\d{1,5}))?$/i.exec(part.trim());
    if (!hostMatch) throw new BrokerUrlError(`url has a bad host: ${part.trim() || '(empty)'}`);
    const port = hostMatch[2] === undefined ? schemes[scheme] : Number(hostMatch[2]);
    if (port < 1 || port > 65535) throw new BrokerUrlError(`url has a bad port: ${hostMatch[2]}`);
    return { host: hostMatch[1].replace(/^\[|\]$/g, ''), port };
  });
  if (kind === 'rabbitmq' && hosts.length > 1) throw new BrokerUrlError('url names one RabbitMQ host');
  let path: string;
  try {
    path = decodeURIComponent((match[4] ?? '').replace(/^\//, ''));
    return { scheme, username: decodeURIComponent(user), password: decodeURIComponent(pass), hosts, path, params: new URLSearchParams(match[5] ?? '') };
  } catch {
    throw new BrokerUrlError('url has a bad percent-encoding');
  }
}

/**
 * Every broker host must pass the SSRF guard, as a webhook URL must: the name is resolved and every
 * address it resolves to is checked (connections then go through the guard's lookup where the client
 * lets us give one).
 */
export async function checkBrokerHosts(guard: SsrfGuard, url: BrokerUrl): Promise<void> {
  await checkedBrokerAddresses(guard, url);
}

/**
 * The addresses every broker host resolves to, each passed by the SSRF guard (`host:port`, IPv6 in
 * brackets). A client that resolves names itself at every (re)connection without taking our lookup
 * (NATS) is given these instead of the names, so a DNS answer that changes later cannot lead it to a
 * private address.
 */
export async function checkedBrokerAddresses(guard: SsrfGuard, url: BrokerUrl): Promise<Array<{ host: string; address: string; port: number }>> {
  const found: Array<{ host: string; address: string; port: number }> = [];
  for (const { host, port } of url.hosts) {
    const literal = isIP(host) === 6 ? `[${host}]` : host;
    try {
      const { addresses } = await guard.check(`http://${literal}:${port}/`);
      for (const address of addresses) found.push({ host, address, port });
    } catch (error) {
      if (error instanceof SsrfError) throw new SsrfError(`broker ${host}:${port}: ${error.message.replace(/^URL /, '')}`);
      throw error;
    }
  }
  return found;
}

/** The URL as answers and error records show it. */
export function displayBrokerUrl(raw: string): string {
  return maskUrlCredentials(raw);
}
