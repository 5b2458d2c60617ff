import { Body, Controller, Get, HttpCode, HttpStatus, Post, Res, UseGuards } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { InstanceEntity } from '@gw/persistence';
import { CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { ApiReply } from '../openapi/api-reply.decorator';
import { SCHEMAS } from '../openapi/schemas';
import { BUSINESS_CATALOG_EXAMPLE, BUSINESS_CATEGORIES_EXAMPLE, BUSINESS_PRODUCT_EXAMPLE, BUSINESS_PROFILE_EXAMPLE } from './business.examples';
import { BusinessService } from './business.service';
import { BusinessProfileDto, BusinessProfileUpdateDto, CatalogInfoDto, CatalogListDto, ProductIdDto } from './dto/business.dto';

const WHATSAPP_ERRORS = ['invalid_request', 'invalid_token', 'forbidden', 'not_found', 'conflict', 'whatsapp_refused', 'timeout', 'internal'] as const;

/** WhatsApp Business: `/business/get/*`, `/business/update/profile` and `/business/catalog/*`. */
@Controller('business')
@UseGuards(InstanceGuard)
export class BusinessController {
  constructor(private readonly business: BusinessService) {}

  @Post('get/profile')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.BusinessProfile, { example: BUSINESS_PROFILE_EXAMPLE, errors: WHATSAPP_ERRORS })
  profile(@CurrentInstance() instance: InstanceEntity, @Body() dto: BusinessProfileDto) {
    return this.business.profile(instance, dto);
  }

  @Get('get/categories')
  @ApiReply(SCHEMAS.BusinessCategories, {
    description:
      "The categories of the instance's own business profile (404 when the account is no business account). No reference exists for WhatsApp's " +
      'catalogue of business categories: its query is in no public client (Baileys, whatsmeow, WhatsApp Web, Cobalt, WAHA; see docs/protocol.md), ' +
      'so none is invented and the full list WhatsApp offers is not available',
    example: BUSINESS_CATEGORIES_EXAMPLE,
    errors: ['invalid_token', 'not_found', 'conflict', 'whatsapp_refused', 'timeout', 'internal'],
  })
  categories(@CurrentInstance() instance: InstanceEntity) {
    return this.business.categories(instance);
  }

  @Post('update/profile')
  @ApiReply(SCHEMAS.BusinessProfileUpdated, {
    description: 'Every field sent was changed (200); some were (207, the others with their error); none were (500, same body)',
    example: { response: { description: { status: 'updated' }, address: { status: 'updated' }, email: { status: 'updated' } }, updated: 3, failed: 0 },
    errors: WHATSAPP_ERRORS,
  })
  async updateProfile(@CurrentInstance() instance: InstanceEntity, @Body() dto: BusinessProfileUpdateDto, @Res({ passthrough: true }) reply: FastifyReply) {
    const { status, body } = await this.business.updateProfile(instance, dto);
    void reply.status(status);
    return body;
  }

  @Post('catalog/list')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.BusinessCatalog, {
    description:
      'A page of the catalogue. CartEnabled is read from an `is_cart_enabled` attribute of the answer that no reference documents ' +
      '(no reference exists for it; see docs/protocol.md): false when WhatsApp does not send it',
    example: BUSINESS_CATALOG_EXAMPLE,
    errors: WHATSAPP_ERRORS,
  })
  catalog(@CurrentInstance() instance: InstanceEntity, @Body() dto: CatalogListDto) {
    return this.business.catalog(instance, dto);
  }

  @Post('catalog/info')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.BusinessProduct, { example: BUSINESS_PRODUCT_EXAMPLE, errors: WHATSAPP_ERRORS })
  product(@CurrentInstance() instance: InstanceEntity, @Body() dto: CatalogInfoDto) {
    return this.business.product(instance, dto);
  }

  @Post('catalog/delete')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.Response, { example: { response: 'Deleted product' }, errors: WHATSAPP_ERRORS })
  deleteProduct(@CurrentInstance() instance: InstanceEntity, @Body() dto: ProductIdDto) {
    return this.business.deleteProduct(instance, dto);
  }

  @Post('catalog/show')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.Response, { example: { response: 'Product shown' }, errors: WHATSAPP_ERRORS })
  showProduct(@CurrentInstance() instance: InstanceEntity, @Body() dto: ProductIdDto) {
    return this.business.setProductHidden(instance, dto, false);
  }

  @Post('catalog/hide')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.Response, { example: { response: 'Product hidden' }, errors: WHATSAPP_ERRORS })
  hideProduct(@CurrentInstance() instance: InstanceEntity, @Body() dto: ProductIdDto) {
    return this.business.setProductHidden(instance, dto, true);
  }
}
