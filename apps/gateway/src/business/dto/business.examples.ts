/** Example bodies of the business routes (`@ApiReply`), with made-up values. */
import type { BusinessCatalogResponse, BusinessCategoriesResponse, BusinessProductResponse, BusinessProfileResponse } from './business.response';
import type { BusinessProfileUpdatedResponse } from './business.response';
import type { ReplyResponse } from '../../common/dto/reply.response';

export const BUSINESS_PROFILE_EXAMPLE: BusinessProfileResponse = {
  response: {
    jid: '5511999999999@s.whatsapp.net',
    tag: '1735689600',
    description: 'Loja de eletrônicos e acessórios',
    address: 'Rua das Flores, 123 - Centro',
    email: 'contato@empresa.com',
    websites: ['https://empresa.com'],
    categories: [{ id: '200600219953504', localized_display_name: 'Compras e varejo' }],
    business_hours_timezone: 'America/Sao_Paulo',
  },
};

export const BUSINESS_CATEGORIES_EXAMPLE: BusinessCategoriesResponse = {
  response: [
    { id: '200600219953504', localized_display_name: 'Compras e varejo' },
    { id: '273819889375819', localized_display_name: 'Restaurante' },
  ],
};

export const BUSINESS_CATALOG_EXAMPLE: BusinessCatalogResponse = {
  response: {
    JID: { User: '5511999999999', RawAgent: 0, Device: 0, Integrator: 0, Server: 's.whatsapp.net' },
    CartEnabled: false,
    Source: '',
    Products: [
      {
        ID: '1234567890',
        Name: 'Produto Exemplo',
        Description: 'Descrição do produto',
        Price: { Amount: '1990000', Currency: 'BRL' },
        SalePrice: '',
        RetailerID: 'sku-123',
        Url: 'https://exemplo.com/produto',
        Availability: 'in stock',
        IsHidden: false,
        StatusInfo: { Status: 'approved', CanAppeal: false },
        MaxAvailable: 0,
        ImageFetchStatus: 'success',
        Images: [
          {
            ID: '1',
            OriginalDimensions: { Height: 0, Width: 0 },
            RequestImageUrl: 'https://mmg.whatsapp.net/v/t45.5328-4/produto.jpg',
            OriginalImageUrl: 'https://mmg.whatsapp.net/v/t45.5328-4/produto.jpg',
          },
        ],
      },
    ],
    Paging: { Before: '', After: 'b2Zmc2V0OjEw' },
  },
};

export const BUSINESS_PRODUCT_EXAMPLE: BusinessProductResponse = {
  response: {
    id: '1234567890',
    name: 'Produto Exemplo',
    description: 'Descrição do produto',
    price: '1990000',
    currency: 'BRL',
    retailer_id: 'sku-123',
    url: 'https://exemplo.com/produto',
    availability: 'in stock',
    is_hidden: false,
    images: ['https://mmg.whatsapp.net/v/t45.5328-4/produto.jpg'],
  },
};

export const BUSINESS_PROFILE_UPDATED_EXAMPLE: BusinessProfileUpdatedResponse = {
  response: { description: { status: 'updated' }, address: { status: 'updated' }, email: { status: 'updated' } },
  updated: 3,
  failed: 0,
};

export const BUSINESS_PRODUCT_DELETED_EXAMPLE: ReplyResponse = { response: 'Deleted product' };

export const BUSINESS_PRODUCT_SHOWN_EXAMPLE: ReplyResponse = { response: 'Product shown' };

export const BUSINESS_PRODUCT_HIDDEN_EXAMPLE: ReplyResponse = { response: 'Product hidden' };
