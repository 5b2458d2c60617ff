import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';

/** A country the managed proxies cover. */
@ApiSchema({ name: 'ProxyManagedCountry', description: 'A country the managed proxies cover' })
export class ProxyManagedCountry {
  @ApiProperty({ description: 'The country (ISO alpha-2, lowercase): what `proxy_managed_country` takes', example: 'br' })
  value!: string;
  @ApiProperty({ description: "The country's name", example: 'Brasil' })
  label!: string;
  @ApiProperty({ type: 'integer', description: 'How many cities of the country the managed proxies cover', example: 2 })
  cities!: number;
}

/** `GET /proxy-managed/countries`. */
@ApiSchema({ name: 'ProxyManagedCountries', description: "The countries the operator's managed proxies cover" })
export class ProxyManagedCountriesResponse {
  @ApiProperty({ type: () => ProxyManagedCountry, isArray: true, description: 'The countries, by name' })
  countries!: ProxyManagedCountry[];
}

/** A city the managed proxies cover. */
@ApiSchema({ name: 'ProxyManagedCity', description: 'A city the managed proxies cover' })
export class ProxyManagedCity {
  @ApiProperty({ description: "The city's slug: what `proxy_managed_city` takes", example: 'campinas' })
  value!: string;
  @ApiProperty({ description: "The city's name", example: 'Campinas' })
  label!: string;
  @ApiProperty({ description: "The city's state: what `proxy_managed_state` takes", example: 'sp' })
  state!: string;
  @ApiProperty({ description: "The state's name", example: 'São Paulo' })
  state_label!: string;
  @ApiProperty({ description: "The city's name as the pool configuration gives it", example: 'Campinas' })
  raw_city!: string;
}

/** `GET /proxy-managed/cities`: the cities of a country (of one state, matching a search) for `proxy_managed_city`. */
@ApiSchema({ name: 'ProxyManagedCities', description: "The cities of a country the operator's managed proxies cover" })
export class ProxyManagedCitiesResponse {
  @ApiProperty({ description: 'The country asked for (default `br`)' })
  country!: string;
  @ApiPropertyOptional({ description: 'The state asked for (only when one was)' })
  state?: string;
  @ApiProperty({ type: () => ProxyManagedCity, isArray: true, description: 'The cities, by name' })
  cities!: ProxyManagedCity[];
}
