import { ErrorCode, RpcError, type BusinessFieldResult, type BusinessProfileField, type CatalogProduct } from '@gw/contracts';
import type { BusinessProfileRecord } from '@gw/contracts';
import { getBinaryNodeChild, getBinaryNodeChildren, jidNormalizedUser } from '../baileys';
import type { BinaryNode, WASocket } from '../baileys';
import type { OpHandlers, OpRequestParsers } from './op-handler';

/** The ops of the gateway's `business/` area. */
export type BusinessOps =
  | 'business.profile'
  | 'business.categories'
  | 'business.updateProfile'
  | 'business.catalog'
  | 'business.product'
  | 'business.productDelete'
  | 'business.productVisibility';

const USER_JID = /^\d{5,20}@s\.whatsapp\.net$/;
/** WhatsApp's product ids are digits; retailer-side ids never reach these ops. */
export const PRODUCT_ID = /^\d{1,32}$/;
export const CATALOG_CURSOR = /^[A-Za-z0-9+/=_-]{1,512}$/;
export const PROFILE_FIELDS: readonly BusinessProfileField[] = ['description', 'address', 'email'];
export const MAX_PROFILE_FIELD = 512;
const MAX_CATALOG_PAGE = 100;

function userJidOf(raw: Record<string, unknown>): string {
  const jid = typeof raw.jid === 'string' ? raw.jid : '';
  if (!USER_JID.test(jid)) throw new RpcError(ErrorCode.BadRequest, 'jid must be a phone-number JID');
  return jid;
}

function productIdOf(raw: Record<string, unknown>): string {
  const id = typeof raw.id === 'string' ? raw.id : '';
  if (!PRODUCT_ID.test(id)) throw new RpcError(ErrorCode.BadRequest, 'invalid product id');
  return id;
}

export const businessRequests = {
  'business.profile': (raw, instanceId) => ({ instanceId, jid: userJidOf(raw) }),
  'business.categories': (_raw, instanceId) => ({ instanceId }),
  'business.updateProfile': (raw, instanceId) => {
    const given = (typeof raw.fields === 'object' && raw.fields !== null ? raw.fields : {}) as Record<string, unknown>;
    const fields: Partial<Record<BusinessProfileField, string>> = {};
    for (const field of PROFILE_FIELDS) {
      const value = given[field];
      if (value === undefined) continue;
      if (typeof value !== 'string' || value.length > MAX_PROFILE_FIELD)
        throw new RpcError(ErrorCode.BadRequest, `${field} must be a string of at most ${MAX_PROFILE_FIELD} characters`);
      fields[field] = value;
    }
    if (!Object.keys(fields).length) throw new RpcError(ErrorCode.BadRequest, 'at least one field (description, address, email) is required');
    return { instanceId, fields };
  },
  'business.catalog': (raw, instanceId) => {
    const after = raw.after === undefined || raw.after === '' ? undefined : raw.after;
    if (after !== undefined && (typeof after !== 'string' || !CATALOG_CURSOR.test(after))) throw new RpcError(ErrorCode.BadRequest, 'invalid after cursor');
    const limit = typeof raw.limit === 'number' && Number.isInteger(raw.limit) ? Math.min(Math.max(raw.limit, 1), MAX_CATALOG_PAGE) : 10;
    return { instanceId, jid: userJidOf(raw), after, limit };
  },
  'business.product': (raw, instanceId) => ({ instanceId, jid: userJidOf(raw), id: productIdOf(raw) }),
  'business.productDelete': (raw, instanceId) => ({ instanceId, id: productIdOf(raw) }),
  'business.productVisibility': (raw, instanceId) => {
    if (typeof raw.hidden !== 'boolean') throw new RpcError(ErrorCode.BadRequest, 'hidden must be a boolean');
    return { instanceId, id: productIdOf(raw), hidden: raw.hidden };
  },
} satisfies OpRequestParsers<BusinessOps>;

/** The IQ error code of a refused query (Baileys throws a Boom carrying it in `data`), if it is one. */
function iqErrorCode(error: unknown): number | undefined {
  const { data, output } = (error ?? {}) as { data?: unknown; output?: { statusCode?: number } };
  return typeof data === 'number' ? data : output?.statusCode;
}

/** A WhatsApp query whose refusals become bus errors: item-not-found is NotFound (`missing`), forbidden is Forbidden, the rest Refused. */
async function bizQuery(socket: WASocket, node: BinaryNode, missing: string): Promise<BinaryNode> {
  try {
    return await socket.query(node);
  } catch (error) {
    const code = iqErrorCode(error);
    if (code === 404) throw new RpcError(ErrorCode.NotFound, missing);
    if (code === 403) throw new RpcError(ErrorCode.Forbidden, 'this WhatsApp account is not a business account');
    if (code === 400 || code === 406) throw new RpcError(ErrorCode.BadRequest, `WhatsApp refused the value (${(error as Error).message})`);
    if (code === 408 || /timed out/i.test((error as Error)?.message ?? '')) throw new RpcError(ErrorCode.Timeout, 'WhatsApp did not answer in time');
    if (code) throw new RpcError(ErrorCode.Refused, `WhatsApp refused the request (${code} ${(error as Error).message})`);
    throw error;
  }
}

const iq = (xmlns: string, type: 'get' | 'set', content: BinaryNode[], extra: Record<string, string> = {}): BinaryNode => ({
  tag: 'iq',
  attrs: { to: 's.whatsapp.net', xmlns, type, ...extra },
  content,
});
/** whatsmeow's GetBusinessProfile (user.go:444-468) and rc14's getBusinessProfile: `<business_profile v=244><profile jid/>`. */
export const profileQuery = (jid: string): BinaryNode =>
  iq('w:biz', 'get', [{ tag: 'business_profile', attrs: { v: '244' }, content: [{ tag: 'profile', attrs: { jid } }] }]);
const textNode = (tag: string, value: string): BinaryNode => ({ tag, attrs: {}, content: Buffer.from(value, 'utf-8') });
const childText = (node: BinaryNode | undefined, tag: string): string => {
  const content = getBinaryNodeChild(node, tag)?.content;
  if (content === undefined || Array.isArray(content)) return '';
  return Buffer.from(content as Uint8Array | string).toString('utf-8');
};

/**
 * One product by id, as WhatsApp Web asks it (the 2023 bundle's 340591.js:24-43): `<product jid><product_id>`,
 * the image size; the answer holds it as `product_catalog > product`.
 */
export const productQuery = (jid: string, id: string): BinaryNode =>
  iq('w:biz:catalog', 'get', [{ tag: 'product', attrs: { jid }, content: [textNode('product_id', id), textNode('width', '100'), textNode('height', '100')] }]);

/**
 * A product shown or hidden, as WhatsApp Web does it (the 2023 bundle's 621753.js:24-33): a dedicated
 * `<product_visibility_update v=1>` iq with `smax_id=23`, naming the product and its `is_hidden`.
 */
export const productVisibilityQuery = (id: string, hidden: boolean): BinaryNode =>
  iq(
    'w:biz:catalog',
    'set',
    [
      {
        tag: 'product_visibility_update',
        attrs: { v: '1' },
        content: [{ tag: 'product', attrs: { is_hidden: String(hidden) }, content: [textNode('id', id)] }],
      },
    ],
    {
      smax_id: '23',
    },
  );

/** A product node (Utils/business.js' fields, and what it leaves out: sale price, status, images' ids). */
export function toCatalogProduct(node: BinaryNode): CatalogProduct {
  const status = getBinaryNodeChild(node, 'status_info');
  const images = getBinaryNodeChildren(getBinaryNodeChild(node, 'media'), 'image').map((image, index) => ({
    id: image.attrs.id ?? String(index + 1),
    requestImageUrl: childText(image, 'request_image_url'),
    originalImageUrl: childText(image, 'original_image_url'),
  }));
  const maxAvailable = Number(childText(node, 'max_available'));
  return {
    id: childText(node, 'id'),
    name: childText(node, 'name'),
    description: childText(node, 'description'),
    price: childText(node, 'price'),
    currency: childText(node, 'currency'),
    salePrice: childText(node, 'sale_price'),
    retailerId: childText(node, 'retailer_id'),
    url: childText(node, 'url'),
    availability: childText(node, 'availability') || 'in stock',
    isHidden: node.attrs.is_hidden === 'true',
    status: childText(status, 'status').toLowerCase(),
    canAppeal: childText(status, 'can_appeal') === 'true',
    maxAvailable: Number.isFinite(maxAvailable) ? maxAvailable : 0,
    images,
  };
}

/** A business profile node (all websites and categories, which rc14's getBusinessProfile drops to one). */
export function toBusinessProfile(node: BinaryNode): BusinessProfileRecord {
  return {
    jid: node.attrs.jid ?? '',
    tag: node.attrs.tag ?? '',
    description: childText(node, 'description'),
    address: childText(node, 'address'),
    email: childText(node, 'email'),
    websites: getBinaryNodeChildren(node, 'website')
      .map((website) => (website.content && !Array.isArray(website.content) ? Buffer.from(website.content as Uint8Array).toString('utf-8') : ''))
      .filter(Boolean),
    categories: getBinaryNodeChildren(getBinaryNodeChild(node, 'categories'), 'category').map((category) => ({
      id: category.attrs.id ?? '',
      localized_display_name: category.content && !Array.isArray(category.content) ? Buffer.from(category.content as Uint8Array).toString('utf-8') : '',
    })),
    business_hours_timezone: getBinaryNodeChild(node, 'business_hours')?.attrs.timezone ?? '',
  };
}

const describe = (error: unknown) => (error instanceof RpcError ? error.message : ((error as Error)?.message ?? String(error)));

/**
 * The business socket's queries, written out where rc14 drops what the API answers (all websites and
 * categories of a profile, the catalogue's cart flag and status, one product by id). A refused query
 * is a bus error; a profile field WhatsApp refuses fails alone (`/business/update/profile` answers 207).
 */
export const businessOps: OpHandlers<BusinessOps> = {
  'business.profile': async (session, request) => {
    const socket = session.openSocket();
    const result = await bizQuery(socket, profileQuery(request.jid), 'business profile not found');
    const profile = getBinaryNodeChild(getBinaryNodeChild(result, 'business_profile'), 'profile');
    return { profile: profile ? toBusinessProfile(profile) : null };
  },
  // WhatsApp's catalogue of business categories is asked by a query no public client carries (not rc14,
  // Baileys upstream, whatsmeow, WA Web's modules, Cobalt or WAHA; see docs/protocol.md): none is invented. The
  // categories answered are those of the account's own business profile, read with the profile query above.
  'business.categories': async (session) => {
    const socket = session.openSocket();
    const own = socket.user?.id ? jidNormalizedUser(socket.user.id) : '';
    if (!own) throw new RpcError(ErrorCode.NotConnected, 'the instance is not logged in');
    const result = await bizQuery(socket, profileQuery(own), 'business profile not found');
    const profile = getBinaryNodeChild(getBinaryNodeChild(result, 'business_profile'), 'profile');
    if (!profile) throw new RpcError(ErrorCode.NotFound, 'business profile not found: the account is not a WhatsApp Business account');
    return { categories: toBusinessProfile(profile).categories };
  },
  'business.updateProfile': async (session, request) => {
    const socket = session.openSocket();
    const results: Partial<Record<BusinessProfileField, BusinessFieldResult>> = {};
    // One delta per field, as uazapi changes them: a value WhatsApp refuses fails alone.
    for (const field of PROFILE_FIELDS) {
      const value = request.fields[field];
      if (value === undefined) continue;
      try {
        await bizQuery(
          socket,
          iq('w:biz', 'set', [{ tag: 'business_profile', attrs: { v: '3', mutation_type: 'delta' }, content: [textNode(field, value)] }]),
          'business profile not found',
        );
        results[field] = { status: 'updated' };
      } catch (error) {
        if (error instanceof RpcError && error.code === ErrorCode.Forbidden) throw error;
        results[field] = { status: 'error', error: describe(error) };
      }
    }
    return { results };
  },
  'business.catalog': async (session, request) => {
    const socket = session.openSocket();
    const params: BinaryNode[] = [textNode('limit', String(request.limit)), textNode('width', '100'), textNode('height', '100')];
    if (request.after) params.push(textNode('after', request.after));
    const result = await bizQuery(
      socket,
      iq('w:biz:catalog', 'get', [{ tag: 'product_catalog', attrs: { jid: request.jid, allow_shop_source: 'true' }, content: params }]),
      'catalog not found',
    );
    const catalog = getBinaryNodeChild(result, 'product_catalog');
    return {
      jid: request.jid,
      cartEnabled: catalog?.attrs.is_cart_enabled === 'true',
      products: getBinaryNodeChildren(catalog, 'product').map(toCatalogProduct),
      after: childText(getBinaryNodeChild(catalog, 'paging'), 'after'),
    };
  },
  'business.product': async (session, request) => {
    const socket = session.openSocket();
    const result = await bizQuery(socket, productQuery(request.jid, request.id), 'product not found');
    const product = getBinaryNodeChild(getBinaryNodeChild(result, 'product_catalog'), 'product');
    if (!product) throw new RpcError(ErrorCode.NotFound, 'product not found');
    return toCatalogProduct(product);
  },
  'business.productDelete': async (session, request) => {
    const socket = session.openSocket();
    const result = await bizQuery(
      socket,
      iq('w:biz:catalog', 'set', [
        { tag: 'product_catalog_delete', attrs: { v: '1' }, content: [{ tag: 'product', attrs: {}, content: [textNode('id', request.id)] }] },
      ]),
      'product not found',
    );
    const deleted = Number(getBinaryNodeChild(result, 'product_catalog_delete')?.attrs.deleted_count ?? 0) || 0;
    if (!deleted) throw new RpcError(ErrorCode.NotFound, 'product not found');
    return { deleted };
  },
  'business.productVisibility': async (session, request) => {
    const socket = session.openSocket();
    // WhatsApp Web's own iq for hiding a product (a partial product_catalog_edit is in no client). Its answer
    // carries no product: the product is read back, as WA Web's catalogue shows it after the change.
    await bizQuery(socket, productVisibilityQuery(request.id, request.hidden), 'product not found');
    const own = socket.user?.id ? jidNormalizedUser(socket.user.id) : '';
    const read = await bizQuery(socket, productQuery(own, request.id), 'product not found');
    const product = getBinaryNodeChild(getBinaryNodeChild(read, 'product_catalog'), 'product');
    if (!product) throw new RpcError(ErrorCode.NotFound, 'product not found');
    return toCatalogProduct(product);
  },
};
