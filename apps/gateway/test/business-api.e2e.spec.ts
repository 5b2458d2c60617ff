import { nextPhone, Stack } from './support/stack';

type SimProduct = { id: string; name: string; isHidden: boolean; price: string; currency: string };

/** `/business/*` through HTTP, real Baileys against the simulator (w:biz and w:biz:catalog as WhatsApp answers them). */
describe('business API (HTTP → worker → Baileys → simulator)', () => {
  const stack = new Stack();
  let token: string;
  let owner: string;
  let shop: string;
  let person: string;
  const shopProducts: SimProduct[] = [];

  const call = (method: 'GET' | 'POST', path: string, body?: unknown) => stack.gw.call(method, path, { token, body });
  const simCatalog = async (phone: string) => (await stack.control<{ products: SimProduct[] }>('GET', `/sim/accounts/${phone}/catalog`)).products;
  const setBusiness = (phone: string, business: boolean) => stack.control('POST', '/sim/accounts', { phone, business });

  beforeAll(async () => {
    await stack.start();
    ({ token, phone: owner } = await stack.connectedInstance('business'));
    await setBusiness(owner, true);
    shop = nextPhone('5591');
    person = nextPhone('5592');
    await stack.control('POST', '/sim/accounts', { phone: shop, name: 'Loja', business: true });
    await stack.control('POST', '/sim/accounts', { phone: person, name: 'Pessoa' });
    await stack.control('POST', `/sim/accounts/${shop}/business-profile`, {
      description: 'Eletrônicos e acessórios',
      address: 'Rua das Flores, 123',
      email: 'contato@loja.com',
      websites: ['https://loja.com', 'https://instagram.com/loja'],
      categories: ['200600219953504', '2500'],
    });
    for (let index = 1; index <= 12; index++) {
      shopProducts.push(
        await stack.control<SimProduct>('POST', `/sim/accounts/${shop}/catalog`, {
          name: `Produto ${index}`,
          description: `Descrição ${index}`,
          price: String(index * 1000_000),
          currency: 'BRL',
          retailerId: `sku-${index}`,
          url: `https://loja.com/p/${index}`,
          isHidden: index === 12,
          images: [`https://mmg.whatsapp.net/p/${index}.jpg`],
        }),
      );
    }
  }, 90_000);
  afterAll(() => stack.stop());

  it('should read a business profile with every website and category, and 404 for an account that is no business', async () => {
    const read = await call('POST', '/business/get/profile', { jid: `${shop}@s.whatsapp.net` });
    expect(read.status).toBe(200);
    expect(read.body.response).toMatchObject({
      jid: `${shop}@s.whatsapp.net`,
      description: 'Eletrônicos e acessórios',
      address: 'Rua das Flores, 123',
      email: 'contato@loja.com',
      websites: ['https://loja.com', 'https://instagram.com/loja'],
      categories: [
        { id: '200600219953504', localized_display_name: 'Compras e varejo' },
        { id: '2500', localized_display_name: 'Serviços profissionais' },
      ],
    });
    // A phone number works as well as a JID.
    expect((await call('POST', '/business/get/profile', { jid: `+${shop}` })).body.response.email).toBe('contato@loja.com');
    expect(await call('POST', '/business/get/profile', { jid: person })).toEqual({
      status: 404,
      body: { error: 'business profile not found: the account is not a WhatsApp Business account' },
    });
    expect((await call('POST', '/business/get/profile', { jid: '123@g.us' })).status).toBe(400);
    expect((await call('POST', '/business/get/profile', { jid: 42 })).status).toBe(400);
  });

  it("should answer the categories of the own business profile (WhatsApp's category catalogue query is in no public client)", async () => {
    await stack.control('POST', `/sim/accounts/${owner}/business-profile`, { categories: ['273819889375819', '2250'] });
    const categories = await call('GET', '/business/get/categories');
    expect(categories).toEqual({
      status: 200,
      body: {
        response: [
          { id: '273819889375819', localized_display_name: 'Restaurante' },
          { id: '2250', localized_display_name: 'Beleza, cosméticos e cuidados pessoais' },
        ],
      },
    });
  });

  it('should change the own profile field by field (200), answer 207 when WhatsApp refuses one and 500 when it refuses all', async () => {
    const all = await call('POST', '/business/update/profile', { description: 'Nova descrição', address: 'Av. Principal, 456', email: 'novo@empresa.com' });
    expect(all).toEqual({
      status: 200,
      body: { response: { description: { status: 'updated' }, address: { status: 'updated' }, email: { status: 'updated' } }, updated: 3, failed: 0 },
    });
    expect(await stack.control('GET', `/sim/accounts/${owner}/business-profile`)).toMatchObject({
      description: 'Nova descrição',
      address: 'Av. Principal, 456',
      email: 'novo@empresa.com',
    });
    // With no jid, the profile read is the instance's own.
    expect((await call('POST', '/business/get/profile', {})).body.response).toMatchObject({ jid: `${owner}@s.whatsapp.net`, description: 'Nova descrição' });

    await stack.control('POST', `/sim/accounts/${owner}/business-profile/refuse`, { fields: ['address'] });
    const partial = await call('POST', '/business/update/profile', { description: 'Só a descrição muda', address: 'Recusado, 1' });
    expect(partial.status).toBe(207);
    expect(partial.body).toMatchObject({ response: { description: { status: 'updated' }, address: { status: 'error' } }, updated: 1, failed: 1 });
    expect(partial.body.response.address.error).toMatch(/refused/);
    expect(await stack.control('GET', `/sim/accounts/${owner}/business-profile`)).toMatchObject({
      description: 'Só a descrição muda',
      address: 'Av. Principal, 456',
    });
    const none = await call('POST', '/business/update/profile', { address: 'Recusado, 2' });
    expect(none.status).toBe(500);
    expect(none.body).toMatchObject({ updated: 0, failed: 1 });
    await stack.control('POST', `/sim/accounts/${owner}/business-profile/refuse`, { fields: [] });

    expect(await call('POST', '/business/update/profile', {})).toEqual({
      status: 400,
      body: { error: 'at least one field (description, address, email) is required' },
    });
    expect(await call('POST', '/business/update/profile', { email: 'not-an-email' })).toEqual({
      status: 400,
      body: { error: 'email must be an e-mail address' },
    });
    expect((await call('POST', '/business/update/profile', { description: 'x'.repeat(513) })).status).toBe(400);
  });

  it('should page another business catalogue (10 a page, hidden products left out) with Paging.After', async () => {
    const first = await call('POST', '/business/catalog/list', { jid: `${shop}@s.whatsapp.net` });
    expect(first.status).toBe(200);
    expect(first.body.response).toMatchObject({
      JID: { User: shop, RawAgent: 0, Device: 0, Integrator: 0, Server: 's.whatsapp.net' },
      CartEnabled: true,
      Source: '',
    });
    expect(first.body.response.Products).toHaveLength(10);
    expect(first.body.response.Products[0]).toEqual({
      ID: shopProducts[0].id,
      Name: 'Produto 1',
      Description: 'Descrição 1',
      Price: { Amount: '1000000', Currency: 'BRL' },
      SalePrice: '',
      RetailerID: 'sku-1',
      Url: 'https://loja.com/p/1',
      Availability: 'in stock',
      IsHidden: false,
      StatusInfo: { Status: 'approved', CanAppeal: false },
      MaxAvailable: 0,
      ImageFetchStatus: 'success',
      Images: [
        {
          ID: '1',
          OriginalDimensions: { Height: 0, Width: 0 },
          RequestImageUrl: 'https://mmg.whatsapp.net/p/1.jpg',
          OriginalImageUrl: 'https://mmg.whatsapp.net/p/1.jpg',
        },
      ],
    });
    const after = first.body.response.Paging.After as string;
    expect(after).not.toBe('');
    const second = await call('POST', '/business/catalog/list', { jid: shop, after });
    expect(second.body.response.Products.map((product: { Name: string }) => product.Name)).toEqual(['Produto 11']);
    expect(second.body.response.Paging.After).toBe('');

    expect(await call('POST', '/business/catalog/list', {})).toEqual({ status: 400, body: { error: 'missing jid in payload' } });
    expect((await call('POST', '/business/catalog/list', { jid: shop, after: '../../etc' })).status).toBe(400);
    expect(await call('POST', '/business/catalog/list', { jid: person })).toEqual({ status: 404, body: { error: 'catalog not found' } });
  });

  it('should read one product, and 404 for one the business does not show', async () => {
    const info = await call('POST', '/business/catalog/info', { jid: shop, id: shopProducts[2].id });
    expect(info).toEqual({
      status: 200,
      body: {
        response: {
          id: shopProducts[2].id,
          name: 'Produto 3',
          description: 'Descrição 3',
          price: '3000000',
          currency: 'BRL',
          retailer_id: 'sku-3',
          url: 'https://loja.com/p/3',
          availability: 'in stock',
          is_hidden: false,
          images: ['https://mmg.whatsapp.net/p/3.jpg'],
        },
      },
    });
    expect(await call('POST', '/business/catalog/info', { jid: shop, id: shopProducts[11].id })).toEqual({ status: 404, body: { error: 'product not found' } });
    expect(await call('POST', '/business/catalog/info', { jid: shop, id: '999' })).toEqual({ status: 404, body: { error: 'product not found' } });
    expect(await call('POST', '/business/catalog/info', { jid: shop })).toEqual({ status: 400, body: { error: 'missing id in payload' } });
    expect((await call('POST', '/business/catalog/info', { jid: shop, id: 'abc' })).status).toBe(400);
  });

  it('should hide, show and delete a product of the own catalogue, as the phone sees it', async () => {
    const mine = await stack.control<SimProduct>('POST', `/sim/accounts/${owner}/catalog`, { name: 'Camiseta', price: '49900000', currency: 'BRL' });
    expect(await call('POST', '/business/catalog/hide', { id: mine.id })).toEqual({ status: 200, body: { response: 'Product hidden' } });
    expect((await simCatalog(owner)).find((product) => product.id === mine.id)?.isHidden).toBe(true);
    // The owner still sees its hidden product in its own catalogue.
    const own = await call('POST', '/business/catalog/list', { jid: owner });
    expect(own.body.response.Products).toContainEqual(expect.objectContaining({ ID: mine.id, IsHidden: true }));

    expect(await call('POST', '/business/catalog/show', { id: mine.id })).toEqual({ status: 200, body: { response: 'Product shown' } });
    expect((await simCatalog(owner)).find((product) => product.id === mine.id)?.isHidden).toBe(false);

    expect(await call('POST', '/business/catalog/delete', { id: mine.id })).toEqual({ status: 200, body: { response: 'Deleted product' } });
    expect((await simCatalog(owner)).map((product) => product.id)).not.toContain(mine.id);
    expect(await call('POST', '/business/catalog/delete', { id: mine.id })).toEqual({ status: 404, body: { error: 'product not found' } });
    expect(await call('POST', '/business/catalog/hide', { id: '123' })).toEqual({ status: 404, body: { error: 'product not found' } });
    expect(await call('POST', '/business/catalog/show', {})).toEqual({ status: 400, body: { error: 'missing id in payload' } });
  });

  it('should answer 403 when the instance is no business account', async () => {
    await setBusiness(owner, false);
    try {
      expect(await call('POST', '/business/catalog/hide', { id: '123' })).toEqual({
        status: 403,
        body: { error: 'this WhatsApp account is not a business account' },
      });
      expect(await call('POST', '/business/update/profile', { description: 'x' })).toEqual({
        status: 403,
        body: { error: 'this WhatsApp account is not a business account' },
      });
    } finally {
      await setBusiness(owner, true);
    }
  });
});
