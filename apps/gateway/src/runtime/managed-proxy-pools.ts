import { readFileSync } from 'node:fs';
import { ConfigError, type EnvReader } from '@gw/platform';

/**
 * One proxy of the operator's pools: where it exits (country, state, city) and its URL. Declared in
 * PROXY_MANAGED_POOLS (JSON) or the JSON file PROXY_MANAGED_FILE, checked at boot:
 * `[{"country":"br","state":"sp","city":"saopaulo","label":"São Paulo","url":"socks5://user:pass@10.0.0.5:1080"}, …]`.
 */
export interface ManagedProxy {
  /** ISO 3166-1 alpha-2, lowercase. */
  country: string;
  /** The subdivision's code (lowercase), '' when the pool does not split the country. */
  state: string;
  /** The city's slug, what `proxy_managed_city` takes. */
  city: string;
  /** The city's name as people write it. */
  label: string;
  /** The subdivision's name ('' when none is given: the code is shown). */
  stateLabel: string;
  /** http, https, socks5 or socks5h, with its credentials. */
  url: string;
}

const COUNTRY = /^[a-z]{2}$/;
const STATE = /^[a-z0-9-]{1,16}$/;
const CITY = /^[a-z0-9-]{1,64}$/;
const PROTOCOLS = ['http:', 'https:', 'socks5:', 'socks5h:'];

/** The pools as the operator declared them (an empty list when neither variable is set). */
export function readManagedProxyPools(env: EnvReader): ManagedProxy[] {
  const inline = env.optionalString('PROXY_MANAGED_POOLS');
  const file = env.optionalString('PROXY_MANAGED_FILE');
  if (inline && file) throw new ConfigError('PROXY_MANAGED_POOLS', 'set PROXY_MANAGED_POOLS or PROXY_MANAGED_FILE, not both');
  const name = inline ? 'PROXY_MANAGED_POOLS' : 'PROXY_MANAGED_FILE';
  let text: string | undefined = inline;
  if (file) {
    try {
      text = readFileSync(file, 'utf-8');
    } catch (error) {
      throw new ConfigError(name, `cannot read ${file}: ${(error as Error).message}`);
    }
  }
  if (!text?.trim()) return [];
  try {
    return parseManagedProxyPools(text);
  } catch (error) {
    throw new ConfigError(name, (error as Error).message);
  }
}

/** Checks every entry; the message names the entry and field at fault (and never shows a proxy's credentials). */
export function parseManagedProxyPools(text: string): ManagedProxy[] {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new Error('must be a JSON array of {country, state, city, label, url}');
  }
  if (!Array.isArray(raw)) throw new Error('must be a JSON array of {country, state, city, label, url}');
  return raw.map((entry: unknown, index) => {
    if (typeof entry !== 'object' || entry === null) throw new Error(`entry ${index} must be an object`);
    const value = entry as Record<string, unknown>;
    const text = (field: string) => (typeof value[field] === 'string' ? (value[field] as string).trim() : '');
    const country = text('country').toLowerCase();
    const state = text('state').toLowerCase();
    const city = text('city').toLowerCase();
    if (!COUNTRY.test(country)) throw new Error(`entry ${index}: country must be a lowercase ISO alpha-2 code such as br`);
    if (state && !STATE.test(state)) throw new Error(`entry ${index}: state must be a code such as sp (a-z, 0-9, -)`);
    if (!CITY.test(city)) throw new Error(`entry ${index}: city must be a slug such as saopaulo (a-z, 0-9, -)`);
    let url: URL;
    try {
      url = new URL(text('url'));
    } catch {
      throw new Error(`entry ${index}: url must be a proxy URL such as socks5://user:pass@host:port`);
    }
    if (!PROTOCOLS.includes(url.protocol) || !url.hostname || !url.port)
      throw new Error(`entry ${index}: url must be http, https, socks5 or socks5h with a host and a port`);
    return { country, state, city, label: text('label') || city, stateLabel: text('state_label'), url: url.toString() };
  });
}
