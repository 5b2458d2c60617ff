import { Inject, Injectable } from '@nestjs/common';
import { connect } from 'node:net';
import type { ProxySettings } from '@gw/persistence';
import { ApiError } from '../common/api-error';
import { GATEWAY_CONFIG } from '../runtime/tokens';
import type { GatewayConfig } from '../runtime/gateway-config';
import type { ProxyManagedCitiesQuery } from './dto/proxy-managed.dto';
import type { ManagedProxy } from '../runtime/managed-proxy-pools';
import type { ProxyManagedCitiesResponse, ProxyManagedCity, ProxyManagedCountriesResponse } from './dto/proxy-managed.response';
import type { RequestInstance } from '../common/request-instance';

/** How long a proxy of the pool has to accept a TCP connection to count as working. */
export const PROXY_PROBE_TIMEOUT_MS = 3_000;

/** The place connect names (`proxy_managed_country`, `_state`, `_city`). */
export interface ManagedPlace {
  proxy_managed_country?: string;
  proxy_managed_state?: string;
  proxy_managed_city?: string;
}

/** Accent- and case-blind text, for the city search. */
const folded = (text: string) =>
  text
    .normalize('NFD')
    .replace(/\p{Diacritic}/gu, '')
    .toLowerCase();

/** A country's name as uazapi's users read it (Portuguese), or its code when the runtime has no name for it. */
function countryName(code: string): string {
  try {
    return new Intl.DisplayNames(['pt-BR'], { type: 'region' }).of(code.toUpperCase()) ?? code;
  } catch {
    return code;
  }
}

/** Whether something accepts a TCP connection at the proxy's host and port within the probe timeout. */
export function probeProxy(url: string, timeoutMs = PROXY_PROBE_TIMEOUT_MS): Promise<boolean> {
  const parsed = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: parsed.hostname.replace(/^\[|\]$/g, ''), port: Number(parsed.port) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * The operator's managed proxy pools (PROXY_MANAGED_POOLS / PROXY_MANAGED_FILE): the places they
 * cover (`/proxy-managed/countries`, `/proxy-managed/cities`), and the proxy an instance connects
 * through when `/instance/connect` names a place: a working one of that place, kept for the instance
 * while it stays in the pool and keeps answering. The proxies' URLs never leave the service.
 */
@Injectable()
export class ProxyManagedService {
  private readonly pools: readonly ManagedProxy[];

  constructor(@Inject(GATEWAY_CONFIG) config: GatewayConfig) {
    this.pools = config.managedProxies ?? [];
  }

  countries(): ProxyManagedCountriesResponse {
    const byCountry = new Map<string, Set<string>>();
    for (const proxy of this.pools) byCountry.set(proxy.country, (byCountry.get(proxy.country) ?? new Set()).add(`${proxy.state}/${proxy.city}`));
    return {
      countries: [...byCountry.entries()]
        .map(([value, cities]) => ({ value, label: countryName(value), cities: cities.size }))
        .sort((a, b) => a.label.localeCompare(b.label, 'pt-BR')),
    };
  }

  async cities(dto: ProxyManagedCitiesQuery): Promise<ProxyManagedCitiesResponse> {
    const country = dto.country ?? 'br';
    const inCountry = this.pools.filter((proxy) => proxy.country === country);
    if (!inCountry.length) throw ApiError.badRequest(`country: no managed proxies in "${country}" (GET /proxy-managed/countries lists the countries)`);
    if (dto.state && !inCountry.some((proxy) => proxy.state === dto.state))
      throw ApiError.badRequest(`state: no managed proxies in "${dto.state}" of "${country}"`);
    const search = folded(dto.search?.trim() ?? '');
    const seen = new Map<string, ProxyManagedCity>();
    for (const proxy of inCountry) {
      if (dto.state && proxy.state !== dto.state) continue;
      if (search && !folded(proxy.label).includes(search) && !proxy.city.includes(search)) continue;
      const key = `${proxy.state}/${proxy.city}`;
      if (!seen.has(key))
        seen.set(key, {
          value: proxy.city,
          label: proxy.label,
          state: proxy.state,
          state_label: proxy.stateLabel || proxy.state.toUpperCase(),
          raw_city: proxy.label,
        });
    }
    const cities = [...seen.values()].sort((a, b) => a.label.localeCompare(b.label, 'pt-BR'));
    return { country, ...(dto.state ? { state: dto.state } : {}), cities };
  }

  /**
   * The proxy settings an instance connects with when connect names a place: null when it names none
   * (nothing changes). A place the pools do not have is a 400 naming the field; a place whose proxies
   * all fail to answer is a 503. The instance keeps the proxy it had for that place while it works.
   */
  async assign(instance: RequestInstance, place: ManagedPlace): Promise<ProxySettings | null> {
    const country = place.proxy_managed_country?.trim().toLowerCase() ?? '';
    const state = place.proxy_managed_state?.trim().toLowerCase() ?? '';
    const city = place.proxy_managed_city?.trim().toLowerCase() ?? '';
    if (!country && !state && !city) return null;
    if (!country) throw ApiError.badRequest('proxy_managed_country is required with proxy_managed_state or proxy_managed_city');
    let candidates = this.pools.filter((proxy) => proxy.country === country);
    if (!candidates.length)
      throw ApiError.badRequest(`proxy_managed_country: no managed proxies in "${country}" (GET /proxy-managed/countries lists the countries)`);
    if (state) {
      candidates = candidates.filter((proxy) => proxy.state === state);
      if (!candidates.length) throw ApiError.badRequest(`proxy_managed_state: no managed proxies in "${state}" of "${country}"`);
    }
    if (city) {
      candidates = candidates.filter((proxy) => proxy.city === city);
      if (!candidates.length)
        throw ApiError.badRequest(
          `proxy_managed_city: no managed proxies in "${city}"${state ? ` (${state})` : ''} of "${country}" (GET /proxy-managed/cities?country=${country} lists the cities)`,
        );
      const states = [...new Set(candidates.map((proxy) => proxy.state))];
      if (!state && states.length > 1) throw ApiError.badRequest(`proxy_managed_state is required: "${city}" is in more than one state (${states.join(', ')})`);
    }
    const picked = await this.pick(candidates, instance.proxy?.managed?.proxyUrl);
    if (!picked)
      throw new ApiError(
        'unavailable',
        `no managed proxy of ${[city, state, country].filter(Boolean).join(', ')} answers right now; try again or choose another place`,
      );
    return picked;
  }

  /**
   * `POST /instance/proxy` with `mode: internal`: a working proxy of the pools for the instance — the
   * one it has, else one of the place it last had, else one of any place. Null when the operator
   * declared no pools (internal then means a direct connection); 503 when none answers.
   */
  async assignInternal(instance: RequestInstance): Promise<ProxySettings | null> {
    if (!this.pools.length) return null;
    const place = instance.proxy?.managed;
    const samePlace = this.pools.filter(
      (proxy) => proxy.country === place?.country && (!place?.state || proxy.state === place.state) && (!place?.city || proxy.city === place.city),
    );
    const picked =
      (samePlace.length ? await this.pick(samePlace, place?.proxyUrl) : null) ??
      (await this.pick(
        this.pools.filter((proxy) => !samePlace.includes(proxy)),
        place?.proxyUrl,
      ));
    if (!picked) throw new ApiError('unavailable', 'no managed proxy answers right now; try again later, or use mode custom');
    return picked;
  }

  /**
   * `rotate_now` (uazapi 2.1.1): a working proxy of the pools other than the instance's, of its place
   * first, else of any place; 409 when no other one answers (or the pools have no other).
   */
  async rotateInternal(instance: RequestInstance): Promise<ProxySettings> {
    const place = instance.proxy?.managed;
    const others = this.pools.filter((proxy) => proxy.url !== place?.proxyUrl);
    const samePlace = others.filter(
      (proxy) => proxy.country === place?.country && (!place?.state || proxy.state === place.state) && (!place?.city || proxy.city === place.city),
    );
    const picked =
      (samePlace.length ? await this.pick(samePlace, undefined) : null) ??
      (await this.pick(
        others.filter((proxy) => !samePlace.includes(proxy)),
        undefined,
      ));
    if (!picked) throw ApiError.conflict('cannot rotate the internal proxy: no other proxy of the pools is available for rotation');
    return picked;
  }

  /** The first of `candidates` that accepts a TCP connection (`current` first, the others shuffled to spread instances), as the instance's proxy settings. */
  private async pick(candidates: readonly ManagedProxy[], current: string | undefined): Promise<ProxySettings | null> {
    const kept = candidates.find((proxy) => proxy.url === current);
    const order = kept ? [kept, ...shuffled(candidates.filter((proxy) => proxy !== kept))] : shuffled([...candidates]);
    for (const proxy of order) {
      if (!(await probeProxy(proxy.url))) continue;
      return {
        mode: 'internal',
        proxyUrl: null,
        proxyFallback: null,
        managed: { country: proxy.country, state: proxy.state || undefined, city: proxy.city, proxyUrl: proxy.url },
        lastTestAt: new Date().toISOString(),
        lastTestError: null,
      };
    }
    return null;
  }
}

function shuffled<T>(items: T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [copy[i], copy[j]] = [copy[j], copy[i]];
  }
  return copy;
}
