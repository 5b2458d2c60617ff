import type { BinaryNode } from '../baileys';
import { businessRequests, toBusinessProfile, toCatalogProduct } from './business.ops';

const text = (tag: string, value: string): BinaryNode => ({ tag, attrs: {}, content: Buffer.from(value) });

describe('business ops', () => {
  describe('toBusinessProfile', () => {
    it('should keep every website and category (rc14 keeps one of each)', () => {
      const sut = toBusinessProfile({
        tag: 'profile',
        attrs: { jid: '5511999999999@s.whatsapp.net', tag: '42' },
        content: [
          text('description', 'Loja'),
          text('website', 'https://a.com'),
          text('website', 'https://b.com'),
          {
            tag: 'categories',
            attrs: {},
            content: [
              { tag: 'category', attrs: { id: '1' }, content: Buffer.from('Um') },
              { tag: 'category', attrs: { id: '2' }, content: Buffer.from('Dois') },
            ],
          },
          { tag: 'business_hours', attrs: { timezone: 'America/Sao_Paulo' } },
        ],
      });
      expect(sut).toEqual({
        jid: '5511999999999@s.whatsapp.net',
        tag: '42',
        description: 'Loja',
        address: '',
        email: '',
        websites: ['https://a.com', 'https://b.com'],
        categories: [
          { id: '1', localized_display_name: 'Um' },
          { id: '2', localized_display_name: 'Dois' },
        ],
        business_hours_timezone: 'America/Sao_Paulo',
      });
    });
  });

  describe('toCatalogProduct', () => {
    it('should read a product node, hidden or not, with its status and images', () => {
      const sut = toCatalogProduct({
        tag: 'product',
        attrs: { is_hidden: 'true' },
        content: [
          text('id', '123'),
          text('name', 'Camiseta'),
          text('price', '49900000'),
          text('currency', 'BRL'),
          {
            tag: 'media',
            attrs: {},
            content: [{ tag: 'image', attrs: {}, content: [text('request_image_url', 'https://r'), text('original_image_url', 'https://o')] }],
          },
          { tag: 'status_info', attrs: {}, content: [text('status', 'APPROVED'), text('can_appeal', 'true')] },
        ],
      });
      expect(sut).toMatchObject({
        id: '123',
        name: 'Camiseta',
        price: '49900000',
        currency: 'BRL',
        isHidden: true,
        availability: 'in stock',
        status: 'approved',
        canAppeal: true,
        images: [{ id: '1', requestImageUrl: 'https://r', originalImageUrl: 'https://o' }],
      });
    });
  });

  describe('requests', () => {
    it('should refuse what the gateway would never send', () => {
      expect(() => businessRequests['business.profile']({ jid: '123@g.us' }, 'i')).toThrow('jid must be a phone-number JID');
      expect(() => businessRequests['business.productDelete']({ id: 'abc' }, 'i')).toThrow('invalid product id');
      expect(() => businessRequests['business.productVisibility']({ id: '1', hidden: 'yes' }, 'i')).toThrow('hidden must be a boolean');
      expect(() => businessRequests['business.updateProfile']({ fields: {} }, 'i')).toThrow('at least one field');
      expect(() => businessRequests['business.updateProfile']({ fields: { email: 1 } }, 'i')).toThrow('email must be a string');
      expect(() => businessRequests['business.catalog']({ jid: '5511999999999@s.whatsapp.net', after: 'a b' }, 'i')).toThrow('invalid after cursor');
      expect(businessRequests['business.catalog']({ jid: '5511999999999@s.whatsapp.net', limit: 500 }, 'i')).toEqual({
        instanceId: 'i',
        jid: '5511999999999@s.whatsapp.net',
        after: undefined,
        limit: 100,
      });
    });
  });
});
