import { Controller, Get, Query, UseGuards } from '@nestjs/common';
import { ApiQuery } from '@nestjs/swagger';
import { InstanceGuard } from '../common/auth.guards';
import { ApiReply } from '../openapi/api-reply.decorator';
import { SCHEMAS } from '../openapi/schemas';
import { ProxyManagedService } from './proxy-managed.service';

/** The places the operator's managed proxies cover, for `/instance/connect`'s `proxy_managed_*`. */
@Controller('proxy-managed')
@UseGuards(InstanceGuard)
export class ProxyManagedController {
  constructor(private readonly proxies: ProxyManagedService) {}

  @Get('countries')
  @ApiReply(SCHEMAS.ProxyManagedCountries, { example: { countries: [{ value: 'br', label: 'Brasil', cities: 2 }] }, errors: ['invalid_token', 'internal'] })
  countries() {
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
  @ApiReply(SCHEMAS.ProxyManagedCities, {
    example: { country: 'br', state: 'sp', cities: [{ value: 'campinas', label: 'Campinas', state: 'sp', state_label: 'São Paulo', raw_city: 'Campinas' }] },
    errors: ['invalid_request', 'invalid_token', 'internal'],
  })
  cities(@Query() query: Record<string, unknown>) {
    return this.proxies.cities(query);
  }
}
