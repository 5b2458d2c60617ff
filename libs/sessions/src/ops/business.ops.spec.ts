import { ErrorCode } from '@gw/contracts';
import type { BinaryNode } from '../baileys';
import type { Session } from '../session/session';
import { businessOps, businessRequests, toBusinessProfile, toCatalogProduct } from './business.ops';

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

  /** The hand-built nodes pinned as docs/protocol.md references them (checked 2026-12-02). */
  describe('protocol nodes', () => {
    const ME = '5511988887777@s.whatsapp.net';
    const fakeSocket = (answer: (node: BinaryNode) => BinaryNode) => {
      const sent: BinaryNode[] = [];
      const socket = {
        user: { id: '5511988887777:3@s.whatsapp.net' },
        query: async (node: BinaryNode) => {
          sent.push(node);
          return answer(node);
        },
      };
      return { sent, session: { instanceId: 'i1', openSocket: () => socket } as unknown as Session };
    };
    const productNode: BinaryNode = { tag: 'product', attrs: { is_hidden: 'false' }, content: [text('id', '77'), text('name', 'Caneca')] };
    const iqError = (code: number) => Object.assign(new Error('item-not-found'), { data: code });

    it('B1 should ask a business profile with <business_profile v=244><profile jid/>', async () => {
      const { sent, session } = fakeSocket(() => ({
        tag: 'iq',
        attrs: {},
        content: [{ tag: 'business_profile', attrs: {}, content: [{ tag: 'profile', attrs: { jid: ME }, content: [text('email', 'a@b.c')] }] }],
      }));
      const reply = await businessOps['business.profile'](session, { instanceId: 'i1', jid: ME });
      expect(sent[0]).toEqual({
        tag: 'iq',
        attrs: { to: 's.whatsapp.net', xmlns: 'w:biz', type: 'get' },
        content: [{ tag: 'business_profile', attrs: { v: '244' }, content: [{ tag: 'profile', attrs: { jid: ME } }] }],
      });
      expect(reply.profile?.email).toBe('a@b.c');
    });

    it('B2 should send no invented category query: the categories are those of the own business profile', async () => {
      const { sent, session } = fakeSocket(() => ({
        tag: 'iq',
        attrs: {},
        content: [
          {
            tag: 'business_profile',
            attrs: {},
            content: [
              {
                tag: 'profile',
                attrs: { jid: ME },
                content: [{ tag: 'categories', attrs: {}, content: [{ tag: 'category', attrs: { id: '133436743388217' }, content: Buffer.from('Artes') }] }],
              },
            ],
          },
        ],
      }));
      const reply = await businessOps['business.categories'](session, { instanceId: 'i1' });
      expect(sent).toHaveLength(1);
      expect(sent[0].content).toEqual([{ tag: 'business_profile', attrs: { v: '244' }, content: [{ tag: 'profile', attrs: { jid: ME } }] }]);
      expect(reply).toEqual({ categories: [{ id: '133436743388217', localized_display_name: 'Artes' }] });
      const none = fakeSocket(() => ({ tag: 'iq', attrs: {}, content: [{ tag: 'business_profile', attrs: {} }] }));
      await expect(businessOps['business.categories'](none.session, { instanceId: 'i1' })).rejects.toMatchObject({ code: ErrorCode.NotFound });
    });

    it('B5 should ask one product with <product jid><product_id> and read it under product_catalog, as WA Web does', async () => {
      const { sent, session } = fakeSocket(() => ({ tag: 'iq', attrs: {}, content: [{ tag: 'product_catalog', attrs: {}, content: [productNode] }] }));
      const reply = await businessOps['business.product'](session, { instanceId: 'i1', jid: ME, id: '77' });
      expect(sent[0]).toEqual({
        tag: 'iq',
        attrs: { to: 's.whatsapp.net', xmlns: 'w:biz:catalog', type: 'get' },
        content: [{ tag: 'product', attrs: { jid: ME }, content: [text('product_id', '77'), text('width', '100'), text('height', '100')] }],
      });
      expect(reply).toMatchObject({ id: '77', name: 'Caneca' });
      // The shape this op read before (product > product) is not WhatsApp's.
      const old = fakeSocket(() => ({ tag: 'iq', attrs: {}, content: [{ tag: 'product', attrs: {}, content: [productNode] }] }));
      await expect(businessOps['business.product'](old.session, { instanceId: 'i1', jid: ME, id: '77' })).rejects.toMatchObject({ code: ErrorCode.NotFound });
    });

    it('B7 should show or hide a product with WA Web product_visibility_update (smax_id 23), then read it back', async () => {
      const { sent, session } = fakeSocket((node): BinaryNode =>
        node.attrs.type === 'set'
          ? { tag: 'iq', attrs: { type: 'result' } }
          : { tag: 'iq', attrs: {}, content: [{ tag: 'product_catalog', attrs: {}, content: [{ ...productNode, attrs: { is_hidden: 'true' } }] }] },
      );
      const reply = await businessOps['business.productVisibility'](session, { instanceId: 'i1', id: '77', hidden: true });
      expect(sent[0]).toEqual({
        tag: 'iq',
        attrs: { to: 's.whatsapp.net', xmlns: 'w:biz:catalog', type: 'set', smax_id: '23' },
        content: [
          { tag: 'product_visibility_update', attrs: { v: '1' }, content: [{ tag: 'product', attrs: { is_hidden: 'true' }, content: [text('id', '77')] }] },
        ],
      });
      expect(sent[1].content).toEqual([
        { tag: 'product', attrs: { jid: ME }, content: [text('product_id', '77'), text('width', '100'), text('height', '100')] },
      ]);
      expect(reply).toMatchObject({ id: '77', isHidden: true });
      const missing = fakeSocket(() => {
        throw iqError(404);
      });
      await expect(businessOps['business.productVisibility'](missing.session, { instanceId: 'i1', id: '77', hidden: false })).rejects.toMatchObject({
        code: ErrorCode.NotFound,
      });
    });

    it('B3, B4 and B6 should keep rc14 profile delta, catalogue page and product delete nodes', async () => {
      const { sent, session } = fakeSocket((node): BinaryNode => {
        const [first] = node.content as BinaryNode[];
        if (first.tag === 'product_catalog_delete')
          return { tag: 'iq', attrs: {}, content: [{ tag: 'product_catalog_delete', attrs: { deleted_count: '1' } }] };
        if (first.tag === 'product_catalog')
          return {
            tag: 'iq',
            attrs: {},
            content: [{ tag: 'product_catalog', attrs: {}, content: [productNode, { tag: 'paging', attrs: {}, content: [text('after', 'NEXT')] }] }],
          };
        return { tag: 'iq', attrs: { type: 'result' } };
      });
      await businessOps['business.updateProfile'](session, { instanceId: 'i1', fields: { email: 'x@y.z' } });
      const page = await businessOps['business.catalog'](session, { instanceId: 'i1', jid: ME, limit: 10, after: 'A1' });
      await businessOps['business.productDelete'](session, { instanceId: 'i1', id: '77' });
      expect(sent[0].content).toEqual([{ tag: 'business_profile', attrs: { v: '3', mutation_type: 'delta' }, content: [text('email', 'x@y.z')] }]);
      expect(sent[1].content).toEqual([
        {
          tag: 'product_catalog',
          attrs: { jid: ME, allow_shop_source: 'true' },
          content: [text('limit', '10'), text('width', '100'), text('height', '100'), text('after', 'A1')],
        },
      ]);
      expect(page).toMatchObject({ products: [expect.objectContaining({ id: '77' })], after: 'NEXT' });
      expect(sent[2].content).toEqual([
        { tag: 'product_catalog_delete', attrs: { v: '1' }, content: [{ tag: 'product', attrs: {}, content: [text('id', '77')] }] },
      ]);
    });
  });
});
