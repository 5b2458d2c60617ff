import { Injectable } from '@nestjs/common';
import type { BusinessProfileField, CatalogProduct } from '@gw/contracts';
import { parseChatTarget } from '@gw/domain';

import { ApiError } from '../common/api-error';
import { SessionClient } from '../session/session.client';
import {
  INVALID_JID,
  type BusinessProfileDto,
  type BusinessProfileUpdateDto,
  type CatalogInfoDto,
  type CatalogListDto,
  type ProductIdDto,
} from './dto/business.dto';
import type { BusinessCatalogProduct, BusinessCatalogResponse, BusinessCategoriesResponse, BusinessJid } from './dto/business.response';
import type { BusinessProductResponse, BusinessProfileResponse, BusinessProfileUpdatedResponse } from './dto/business.response';
import type { ReplyResponse } from '../common/dto/reply.response';
import type { RequestInstance } from '../common/request-instance';

const PROFILE_FIELDS: readonly BusinessProfileField[] = ['description', 'address', 'email'];
/** Products per catalogue page, as uazapi's integration answers (up to 10 per call). */
const CATALOG_PAGE = 10;

/** A JID as whatsmeow serialises it (the catalogue's `JID`). */
function jidObject(jid: string): BusinessJid {
  const [user, server] = jid.split('@');
  return { User: user, RawAgent: 0, Device: 0, Integrator: 0, Server: server };
}

/** A product as uazapi answers it: whatsmeow's Product struct, field for field. */
function productView(product: CatalogProduct): BusinessCatalogProduct {
  return {
    ID: product.id,
    Name: product.name,
    Description: product.description,
    Price: product.price || product.currency ? { Amount: product.price, Currency: product.currency } : null,
    SalePrice: product.salePrice,
    RetailerID: product.retailerId,
    Url: product.url,
    Availability: product.availability,
    IsHidden: product.isHidden,
    StatusInfo: { Status: product.status, CanAppeal: product.canAppeal },
    MaxAvailable: product.maxAvailable,
    ImageFetchStatus: product.images.length ? 'success' : '',
    Images: product.images.map((image) => ({
      ID: image.id,
      OriginalDimensions: { Height: 0, Width: 0 },
      RequestImageUrl: image.requestImageUrl,
      OriginalImageUrl: image.originalImageUrl,
    })),
  };
}

/**
 * WhatsApp Business through the instance: business profiles (any business's, and the instance's own
 * to change), the category list and catalogues (any business's to read; the instance's own products to
 * hide, show or delete). Everything is asked of WhatsApp at the time; nothing is stored.
 */
@Injectable()
export class BusinessService {
  constructor(private readonly sessions: SessionClient) {}

  async profile(instance: RequestInstance, dto: BusinessProfileDto): Promise<BusinessProfileResponse> {
    const jid = dto.jid?.trim() ? this.businessJid(dto.jid) : this.ownJid(instance);
    const { profile } = await this.sessions.request(instance.id, 'business.profile', { instanceId: instance.id, jid });
    if (!profile) throw ApiError.notFound('business profile not found: the account is not a WhatsApp Business account');
    return {
      response: {
        jid: profile.jid,
        tag: profile.tag,
        description: profile.description,
        address: profile.address,
        email: profile.email,
        websites: profile.websites,
        categories: profile.categories,
        business_hours_timezone: profile.business_hours_timezone,
      },
    };
  }

  async categories(instance: RequestInstance): Promise<BusinessCategoriesResponse> {
    const { categories } = await this.sessions.request(instance.id, 'business.categories', { instanceId: instance.id });
    return { response: categories };
  }

  /**
   * Each field sent is its own change at WhatsApp: all changed answer 200, some 207, none 500, each
   * field with its outcome (`{status: updated}` or `{status: error, error}`).
   */
  async updateProfile(instance: RequestInstance, dto: BusinessProfileUpdateDto): Promise<{ status: number; body: BusinessProfileUpdatedResponse }> {
    const fields: Partial<Record<BusinessProfileField, string>> = {};
    for (const field of PROFILE_FIELDS) if (typeof dto[field] === 'string') fields[field] = dto[field].trim();
    if (!Object.keys(fields).length) throw ApiError.badRequest('at least one field (description, address, email) is required');
    const { results } = await this.sessions.request(instance.id, 'business.updateProfile', { instanceId: instance.id, fields });
    const outcomes = Object.values(results);
    const updated = outcomes.filter((result) => result.status === 'updated').length;
    const failed = outcomes.length - updated;
    return { status: failed === 0 ? 200 : updated === 0 ? 500 : 207, body: { response: results, updated, failed } };
  }

  async catalog(instance: RequestInstance, dto: CatalogListDto): Promise<BusinessCatalogResponse> {
    const jid = this.businessJid(dto.jid);
    const page = await this.sessions.request(instance.id, 'business.catalog', {
      instanceId: instance.id,
      jid,
      ...(dto.after ? { after: dto.after } : {}),
      limit: CATALOG_PAGE,
    });
    return {
      response: {
        JID: jidObject(page.jid),
        CartEnabled: page.cartEnabled,
        Source: '',
        Products: page.products.map(productView),
        Paging: { Before: '', After: page.after },
      },
    };
  }

  async product(instance: RequestInstance, dto: CatalogInfoDto): Promise<BusinessProductResponse> {
    const product = await this.sessions.request(instance.id, 'business.product', {
      instanceId: instance.id,
      jid: this.businessJid(dto.jid),
      id: dto.id.trim(),
    });
    return {
      response: {
        id: product.id,
        name: product.name,
        description: product.description,
        price: product.price,
        currency: product.currency,
        retailer_id: product.retailerId,
        url: product.url,
        availability: product.availability,
        is_hidden: product.isHidden,
        images: product.images.map((image) => image.originalImageUrl || image.requestImageUrl).filter(Boolean),
      },
    };
  }

  async deleteProduct(instance: RequestInstance, dto: ProductIdDto): Promise<ReplyResponse> {
    await this.sessions.request(instance.id, 'business.productDelete', { instanceId: instance.id, id: dto.id.trim() });
    return { response: 'Deleted product' };
  }

  async setProductHidden(instance: RequestInstance, dto: ProductIdDto, hidden: boolean): Promise<ReplyResponse> {
    await this.sessions.request(instance.id, 'business.productVisibility', { instanceId: instance.id, id: dto.id.trim(), hidden });
    return { response: hidden ? 'Product hidden' : 'Product shown' };
  }

  private businessJid(value: string): string {
    const target = parseChatTarget(value);
    if (!target || target.kind !== 'user') throw ApiError.badRequest(INVALID_JID);
    return target.jid;
  }

  /** The instance's own account (its profile when no `jid` is given). */
  private ownJid(instance: RequestInstance): string {
    const user = (instance.jid ?? '').split('@')[0].split(':')[0];
    if (!user) throw ApiError.conflict('No session');
    return `${user}@s.whatsapp.net`;
  }
}
