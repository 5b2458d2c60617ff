import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/**
 * The SSRF guard in front of every URL we fetch (webhooks, media, link previews): only http(s), and
 * never a loopback, private, link-local, carrier-grade NAT, multicast or metadata address unless an
 * operator-given CIDR allowlist (SSRF_ALLOWLIST) lets it through. The name is resolved here and every
 * address it resolves to must pass, so a DNS answer cannot smuggle a private address in.
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
  ['64:ff9b::', 96],
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
    const family = isIP(address);
    if (!family) return false;
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (this.allowed.check(address, type)) return true;
    // IPv4-mapped IPv6 (::ffff:10.0.0.1) is judged as the IPv4 address it carries.
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped) return this.isAddressAllowed(mapped[1]);
    return !this.blocked.check(address, type);
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
    const host = url.hostname.replace(/^\[|\]$/g, '');
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
    return { url, addresses };
  }
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
      if (refused)
        return callback(
          Object.assign(new SsrfError(`refused connection to a private or reserved address (${refused.address})${ALLOWLIST_HINT}`), { code: 'ESSRF' }),
          [],
        );
      if (options.all) return callback(null, list);
      callback(null, list[0].address, list[0].family);
    });
  };
}
