import { Controller, Get, Query, UseGuards } from '@nestjs/common';
import { ApiQuery, ApiOperation } from '@nestjs/swagger';
import { InstanceGuard } from '../common/auth.guards';
import { ApiReply } from '../openapi/api-reply.decorator';
import { ProxyManagedCitiesQuery } from './dto/proxy-managed.dto';
import { PROXY_MANAGED_CITIES_EXAMPLE, PROXY_MANAGED_COUNTRIES_EXAMPLE } from './dto/proxy-managed.examples';
import { ProxyManagedCitiesResponse, ProxyManagedCountriesResponse } from './dto/proxy-managed.response';
import { ProxyManagedService } from './proxy-managed.service';
import { ApiArea } from '../openapi/api-areas';

/** The places the operator's managed proxies cover, for `/instance/connect`'s `proxy_managed_*`. */
@ApiArea('Proxy')
@Controller('proxy-managed')
@UseGuards(InstanceGuard)
export class ProxyManagedController {
  constructor(private readonly proxies: ProxyManagedService) {}

  @Get('countries')
  @ApiReply(ProxyManagedCountriesResponse, { example: PROXY_MANAGED_COUNTRIES_EXAMPLE, errors: ['invalid_token', 'internal'] })
  @ApiOperation({
    summary: 'Managed proxy: list its countries',
    description: "The countries the operator's managed proxies cover, for `proxy_managed_country` of `/instance/connect`. Not in uazapiGO.",
  })
  countries(): ProxyManagedCountriesResponse {
    return this.proxies.countries();
  }

  @Get('cities')
  @ApiQuery({
    name: 'country',
    required: false,
    description: 'ISO alpha-2, lowercase (default br)',
    schema: { type: 'string', pattern: '^[a-z]{2}$', default: 'br' },
  })
  @ApiQuery({
    name: 'state',
    required: false,
    description: "Only this state's cities (the cities' `state`)",
    schema: { type: 'string', pattern: '^[a-z0-9-]{1,16}$' },
  })
  @ApiQuery({ name: 'search', required: false, description: 'Part of the name or slug, accent- and case-blind', schema: { type: 'string', maxLength: 100 } })
  @ApiReply(ProxyManagedCitiesResponse, {
    example: PROXY_MANAGED_CITIES_EXAMPLE,
    errors: ['invalid_request', 'invalid_token', 'internal'],
  })
  @ApiOperation({
    summary: 'Managed proxy: list its cities',
    description:
      "The cities of one `country` (default `br`) the managed proxies cover, optionally of one `state` or matching `search`, for the `proxy_managed_country`, `proxy_managed_state` and `proxy_managed_city` fields of `/instance/connect`. Any instance's token (or the admin token) is accepted.",
  })
  cities(@Query() query: ProxyManagedCitiesQuery): Promise<ProxyManagedCitiesResponse> {
    return this.proxies.cities(query);
  }
}
