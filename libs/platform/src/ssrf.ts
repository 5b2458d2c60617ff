import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { buildConnector } from 'undici';

/**
 * The SSRF guard in front of every URL we fetch (webhooks, media, link previews): only http(s), and
 * never a loopback, private, link-local, carrier-grade NAT, multicast or metadata address unless an
 * operator-given CIDR allowlist (SSRF_ALLOWLIST) lets it through. The name is resolved here and every
 * address it resolves to must pass, so a DNS answer cannot smuggle a private address in. An IPv6
 * address that carries an IPv4 one (mapped, compatible, NAT64, 6to4, Teredo) is judged by the IPv4
 * addresses it carries as well (docs/adr/0026-outbound-requests-through-the-ssrf-guard.md).
 */
export class SsrfError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SsrfError';
  }
}

const BLOCKED_V4 = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const;
const BLOCKED_V6 = [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  // NAT64 for local use (RFC 8215): never a public address, whatever it carries.
  ['64:ff9b:1::', 48],
  ['2001:db8::', 32],
] as const;

export class SsrfGuard {
  private readonly blocked = new BlockList();
  private readonly allowed = new BlockList();

  /** @param allowlist CIDRs (`127.0.0.0/8,::1/128`) that pass even though they are private. */
  constructor(allowlist: string[] = []) {
    for (const [address, prefix] of BLOCKED_V4) this.blocked.addSubnet(address, prefix, 'ipv4');
    for (const [address, prefix] of BLOCKED_V6) this.blocked.addSubnet(address, prefix, 'ipv6');
    for (const entry of allowlist) {
      const [address, prefix] = entry.trim().split('/');
      const family = isIP(address);
      if (!family) throw new Error(`SSRF_ALLOWLIST: "${entry}" is not a CIDR`);
      const bits = prefix === undefined ? (family === 4 ? 32 : 128) : Number(prefix);
      if (!Number.isInteger(bits) || bits < 0 || bits > (family === 4 ? 32 : 128)) throw new Error(`SSRF_ALLOWLIST: "${entry}" has a bad prefix`);
      this.allowed.addSubnet(address, bits, family === 4 ? 'ipv4' : 'ipv6');
    }
  }

  /** Parses CIDRs from a comma list (the SSRF_ALLOWLIST variable). */
  static fromList(list: string | undefined): SsrfGuard {
    return new SsrfGuard(
      (list ?? '')
        .split(',')
        .map((entry) => entry.trim())
        .filter(Boolean),
    );
  }

  isAddressAllowed(address: string): boolean {
    const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
    const family = isIP(bare);
    if (!family) return false;
    if (family === 4) return this.allowed.check(bare, 'ipv4') || !this.blocked.check(bare, 'ipv4');
    if (this.allowed.check(bare, 'ipv6')) return true;
    const carried = embeddedIpv4(bare);
    // Mapped, compatible and SIIT addresses are the IPv4 address itself, allowlist included.
    if (carried.kind === 'same') return this.isAddressAllowed(carried.addresses[0]);
    return !this.blocked.check(bare, 'ipv6') && carried.addresses.every((ipv4) => this.isAddressAllowed(ipv4));
  }

  /** Checks the URL's form only (scheme, host present); for configuration time without DNS. */
  checkUrlForm(raw: string): URL {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new SsrfError('URL is not valid');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new SsrfError('URL must use http or https');
    if (!url.hostname) throw new SsrfError('URL has no host');
    if (url.username || url.password) throw new SsrfError('URL must not carry credentials');
    return url;
  }

  /** Resolves the host and checks every address; returns the URL and the addresses that passed. */
  async check(raw: string): Promise<{ url: URL; addresses: string[] }> {
    const url = this.checkUrlForm(raw);
    return { url, addresses: await this.checkHost(url.hostname) };
  }

  /**
   * Resolves a host (a name, or an address in any form the system resolver reads, `0x7f000001`
   * included) and checks every address; answers the addresses that passed. For hosts of URLs that
   * are not http(s) (proxies, brokers), whose hosts WHATWG URL leaves as written.
   */
  async checkHost(hostname: string): Promise<string[]> {
    const host = hostname.replace(/^\[|\]$/g, '');
    let addresses: string[];
    if (isIP(host)) addresses = [host];
    else {
      try {
        addresses = (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);
      } catch {
        throw new SsrfError(`host ${host} does not resolve`);
      }
    }
    if (addresses.length === 0) throw new SsrfError(`host ${host} does not resolve`);
    const refused = addresses.find((address) => !this.isAddressAllowed(address));
    if (refused) throw new SsrfError(`URL points to a private or reserved address (${refused})${ALLOWLIST_HINT}`);
    return addresses;
  }
}

/**
 * The IPv4 addresses an IPv6 address carries. `same`: the address is that IPv4 address (IPv4-mapped
 * `::ffff:0:0/96`, IPv4-compatible `::/96`, SIIT `::ffff:0:0:0/96`); `tunnel`: it leads to them
 * (NAT64 `64:ff9b::/96`, the last 32 bits; 6to4 `2002::/16`, bits 16-47; Teredo `2001::/32`, the
 * server in bits 32-63 and the client in the last 32 bits, inverted).
 */
function embeddedIpv4(address: string): { kind: 'same' | 'tunnel'; addresses: string[] } {
  const g = ipv6Groups(address);
  const ipv4 = (high: number, low: number) => `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
  const zeros = (count: number) => g.slice(0, count).every((group) => group === 0);
  if (zeros(5) && g[5] === 0xffff) return { kind: 'same', addresses: [ipv4(g[6], g[7])] };
  if (zeros(6)) return { kind: 'same', addresses: [ipv4(g[6], g[7])] };
  if (zeros(4) && g[4] === 0xffff && g[5] === 0) return { kind: 'same', addresses: [ipv4(g[6], g[7])] };
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((group) => group === 0)) return { kind: 'tunnel', addresses: [ipv4(g[6], g[7])] };
  if (g[0] === 0x2002) return { kind: 'tunnel', addresses: [ipv4(g[1], g[2])] };
  if (g[0] === 0x2001 && g[1] === 0) return { kind: 'tunnel', addresses: [ipv4(g[2], g[3]), ipv4(g[6] ^ 0xffff, g[7] ^ 0xffff)] };
  return { kind: 'tunnel', addresses: [] };
}

/** The eight 16-bit groups of a valid IPv6 address (`::` expanded, a trailing dotted quad as two groups). */
function ipv6Groups(address: string): number[] {
  let text = address;
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number);
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return groups.map((group) => parseInt(group, 16));
}

/** Says how an operator lets a local receiver (a webhook on this machine, a LAN service) through. */
const ALLOWLIST_HINT = '; to allow it, add its range to SSRF_ALLOWLIST (e.g. 127.0.0.0/8)';

/**
 * A `net` lookup that refuses what the guard refuses, at the moment of connecting. Used as the
 * connect-time lookup of an undici Agent, so that a DNS answer that changed after `check()` (rebinding)
 * is refused too.
 */
export function guardedLookup(guard: SsrfGuard) {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const dns = require('node:dns') as typeof import('node:dns');
  return (
    hostname: string,
    options: import('node:dns').LookupOptions,
    callback: (error: NodeJS.ErrnoException | null, address: string | import('node:dns').LookupAddress[], family?: number) => void,
  ) => {
    dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const list = addresses as import('node:dns').LookupAddress[];
      const refused = list.find((entry) => !guard.isAddressAllowed(entry.address));
      if (refused) return callback(connectRefusal(refused.address), []);
      if (options.all) return callback(null, list);
      callback(null, list[0].address, list[0].family);
    });
  };
}

function connectRefusal(address: string): SsrfError {
  return Object.assign(new SsrfError(`refused connection to a private or reserved address (${address})${ALLOWLIST_HINT}`), { code: 'ESSRF' });
}

/**
 * An undici connector (an Agent's or a Pool's `connect`) that refuses what the guard refuses at the
 * moment of connecting: a name through `guardedLookup`, a literal address (which never reaches a
 * lookup) here. Every connection the dispatcher opens passes the guard, a redirect's or a retry's
 * included, whatever was checked before.
 */
export function guardedConnector(guard: SsrfGuard, options: buildConnector.BuildOptions = {}): buildConnector.connector {
  const connect = buildConnector({ ...options, lookup: guardedLookup(guard) } as buildConnector.BuildOptions);
  return (target, callback) => {
    const host = target.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) && !guard.isAddressAllowed(host)) return callback(connectRefusal(host), null);
    connect(target, callback);
  };
}
