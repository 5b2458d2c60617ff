/** Example bodies of the `/proxy-managed/*` answers. */
import type { ProxyManagedCitiesResponse, ProxyManagedCountriesResponse } from './proxy-managed.response';

export const PROXY_MANAGED_COUNTRIES_EXAMPLE: ProxyManagedCountriesResponse = { countries: [{ value: 'br', label: 'Brasil', cities: 2 }] };

export const PROXY_MANAGED_CITIES_EXAMPLE: ProxyManagedCitiesResponse = {
  country: 'br',
  state: 'sp',
  cities: [{ value: 'campinas', label: 'Campinas', state: 'sp', state_label: 'São Paulo', raw_city: 'Campinas' }],
};
