import { Body, Controller, Get, HttpCode, HttpStatus, Post, Res, UseGuards } from '@nestjs/common';
import type { FastifyReply } from 'fastify';

import { CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { ApiReply } from '../openapi/api-reply.decorator';
import { BUSINESS_CATALOG_EXAMPLE, BUSINESS_CATEGORIES_EXAMPLE, BUSINESS_PRODUCT_EXAMPLE, BUSINESS_PROFILE_EXAMPLE } from './dto/business.examples';
import {
  BUSINESS_PRODUCT_DELETED_EXAMPLE,
  BUSINESS_PRODUCT_HIDDEN_EXAMPLE,
  BUSINESS_PRODUCT_SHOWN_EXAMPLE,
  BUSINESS_PROFILE_UPDATED_EXAMPLE,
} from './dto/business.examples';
import { BusinessCatalogResponse, BusinessCategoriesResponse, BusinessProductResponse, BusinessProfileResponse } from './dto/business.response';
import { BusinessProfileUpdatedResponse } from './dto/business.response';
import { BusinessService } from './business.service';
import { BusinessProfileDto, BusinessProfileUpdateDto, CatalogInfoDto, CatalogListDto, ProductIdDto } from './dto/business.dto';
import { ApiArea } from '../openapi/api-areas';
import { ApiOperation } from '@nestjs/swagger';
import { ReplyResponse } from '../common/dto/reply.response';
import type { RequestInstance } from '../common/request-instance';

const WHATSAPP_ERRORS = ['invalid_request', 'invalid_token', 'forbidden', 'not_found', 'conflict', 'whatsapp_refused', 'timeout', 'internal'] as const;

/** WhatsApp Business: `/business/get/*`, `/business/update/profile` and `/business/catalog/*`. */
@ApiArea('Business')
@Controller('business')
@UseGuards(InstanceGuard)
export class BusinessController {
  constructor(private readonly business: BusinessService) {}

  @Post('get/profile')
  @HttpCode(HttpStatus.OK)
  @ApiReply(BusinessProfileResponse, { example: BUSINESS_PROFILE_EXAMPLE, errors: WHATSAPP_ERRORS })
  @ApiOperation({
    summary: 'Get a business profile',
    description:
      'The WhatsApp Business profile of the connected account, or of another business (`jid`): description, address, email, websites, category and hours.',
  })
  profile(@CurrentInstance() instance: RequestInstance, @Body() dto: BusinessProfileDto): Promise<BusinessProfileResponse> {
    return this.business.profile(instance, dto);
  }

  @Get('get/categories')
  @ApiReply(BusinessCategoriesResponse, {
    description:
      "The categories of the instance's own business profile (404 when the account is no business account). No reference exists for WhatsApp's " +
      'catalogue of business categories: its query is in no public client (Baileys, whatsmeow, WhatsApp Web, Cobalt, WAHA; see docs/protocol.md), ' +
      'so none is invented and the full list WhatsApp offers is not available',
    example: BUSINESS_CATEGORIES_EXAMPLE,
    errors: ['invalid_token', 'not_found', 'conflict', 'whatsapp_refused', 'timeout', 'internal'],
  })
  @ApiOperation({ summary: 'List the business categories', description: 'The business categories WhatsApp offers for a profile.' })
  categories(@CurrentInstance() instance: RequestInstance): Promise<BusinessCategoriesResponse> {
    return this.business.categories(instance);
  }

  @Post('update/profile')
  @HttpCode(HttpStatus.OK)
  @ApiReply(BusinessProfileUpdatedResponse, {
    description: 'Every field sent was changed',
    otherStatuses: { 207: 'Some fields were changed, the others carry their error', 500: 'No field was changed: each carries its error' },
    example: BUSINESS_PROFILE_UPDATED_EXAMPLE,
    errors: WHATSAPP_ERRORS,
  })
  @ApiOperation({
    summary: 'Update the business profile',
    description: "Updates the connected WhatsApp Business account's profile; every field is optional and only those sent change.",
  })
  async updateProfile(
    @CurrentInstance() instance: RequestInstance,
    @Body() dto: BusinessProfileUpdateDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<BusinessProfileUpdatedResponse> {
    const { status, body } = await this.business.updateProfile(instance, dto);
    void reply.status(status);
    return body;
  }

  @Post('catalog/list')
  @HttpCode(HttpStatus.OK)
  @ApiReply(BusinessCatalogResponse, {
    description:
      'A page of the catalogue. CartEnabled is read from an `is_cart_enabled` attribute of the answer that no reference documents ' +
      '(no reference exists for it; see docs/protocol.md): false when WhatsApp does not send it',
    example: BUSINESS_CATALOG_EXAMPLE,
    errors: WHATSAPP_ERRORS,
  })
  @ApiOperation({
    summary: "List a catalogue's products",
    description:
      "A page of a business's catalogue (`jid`; up to 10 products). For the next page send the `after` token answered in `response.Paging.After`, unchanged.",
  })
  catalog(@CurrentInstance() instance: RequestInstance, @Body() dto: CatalogListDto): Promise<BusinessCatalogResponse> {
    return this.business.catalog(instance, dto);
  }

  @Post('catalog/info')
  @HttpCode(HttpStatus.OK)
  @ApiReply(BusinessProductResponse, { example: BUSINESS_PRODUCT_EXAMPLE, errors: WHATSAPP_ERRORS })
  @ApiOperation({ summary: 'Get a catalogue product', description: 'One product of a catalogue, by its id.' })
  product(@CurrentInstance() instance: RequestInstance, @Body() dto: CatalogInfoDto): Promise<BusinessProductResponse> {
    return this.business.product(instance, dto);
  }

  @Post('catalog/delete')
  @HttpCode(HttpStatus.OK)
  @ApiReply(ReplyResponse, { example: BUSINESS_PRODUCT_DELETED_EXAMPLE, errors: WHATSAPP_ERRORS })
  @ApiOperation({ summary: 'Delete a catalogue product', description: "Deletes a product of the account's catalogue." })
  deleteProduct(@CurrentInstance() instance: RequestInstance, @Body() dto: ProductIdDto): Promise<ReplyResponse> {
    return this.business.deleteProduct(instance, dto);
  }

  @Post('catalog/show')
  @HttpCode(HttpStatus.OK)
  @ApiReply(ReplyResponse, { example: BUSINESS_PRODUCT_SHOWN_EXAMPLE, errors: WHATSAPP_ERRORS })
  @ApiOperation({ summary: 'Show a catalogue product', description: "Makes a hidden product of the account's catalogue visible again." })
  showProduct(@CurrentInstance() instance: RequestInstance, @Body() dto: ProductIdDto): Promise<ReplyResponse> {
    return this.business.setProductHidden(instance, dto, false);
  }

  @Post('catalog/hide')
  @HttpCode(HttpStatus.OK)
  @ApiReply(ReplyResponse, { example: BUSINESS_PRODUCT_HIDDEN_EXAMPLE, errors: WHATSAPP_ERRORS })
  @ApiOperation({ summary: 'Hide a catalogue product', description: "Hides a product of the account's catalogue without deleting it." })
  hideProduct(@CurrentInstance() instance: RequestInstance, @Body() dto: ProductIdDto): Promise<ReplyResponse> {
    return this.business.setProductHidden(instance, dto, true);
  }
}
