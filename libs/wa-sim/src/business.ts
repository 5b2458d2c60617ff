// WhatsApp Business: the business profile (`w:biz` get/set), the product catalogue (`w:biz:catalog`:
// product_catalog pages, one product, visibility updates, edit, add, delete) and the
// account's new-chat limits (the w:mex reachout-timelock and message-capping queries). Node shapes
// are the ones rc14 sends and parses (Socket/business.js, chats.js getBusinessProfile,
// Utils/business.js) and whatsmeow reads (business.go); a non-business account has no profile and
// no catalogue, and may not change either (403), as WhatsApp answers.
import { randomInt } from 'crypto';
import type { Account, DeviceRef } from './accounts';
import { decodeAppState } from './app-state';
import type { SimContext } from './context';
import { SimError } from './errors';
import type { BinaryNode } from './node-io';
import { child, children, contentString, iqError, iqResult, node } from './node-io';
import type { RouteSpec } from './route-spec';
import { MEX_QUERIES, mexBadRequest } from './mex-queries';

// The new-chat limit queries, from the one table of w:mex references.
const REACHOUT_TIMELOCK = MEX_QUERIES.REACHOUT_TIMELOCK.id;
const MESSAGE_CAPPING_INFO = MEX_QUERIES.MESSAGE_CAPPING_INFO.id;

export interface BusinessCategory {
  id: string;
  name: string;
}

export interface BusinessProfile {
  description: string;
  address: string;
  email: string;
  websites: string[];
  categories: BusinessCategory[];
}

export interface Product {
  id: string;
  name: string;
  description: string;
  /** As WhatsApp keeps it: an integer string (the amount × 1000). */
  price: string;
  currency: string;
  retailerId: string;
  url: string;
  isHidden: boolean;
  images: string[];
}

/** A WhatsApp Business quick reply as the phone's app state keeps it (`quick_reply` mutations of the `regular` collection). */
export interface PhoneQuickReply {
  /** The mutation index's id (WhatsApp uses the creation time in seconds). */
  id: string;
  shortcut: string;
  message: string;
  keywords: string[];
}

/** What the phone's account is told about starting new chats (Baileys' NewChatMessageCapInfo and ReachoutTimelockState). */
export interface AccountLimits {
  capping: { total_quota: number; used_quota: number; capping_status: string; ote_status: string; mv_status: string; cycle_end_timestamp: string };
  timelock: { is_active: boolean; time_enforcement_ends: string; enforcement_type: string };
}

/** The categories WhatsApp Business offers (a subset, with WhatsApp's category ids). */
export const BUSINESS_CATEGORIES: BusinessCategory[] = [
  { id: '133436743388217', name: 'Artes e entretenimento' },
  { id: '1223524174334504', name: 'Automotivo' },
  { id: '2250', name: 'Beleza, cosméticos e cuidados pessoais' },
  { id: '180164648685982', name: 'Educação' },
  { id: '1709', name: 'Finanças' },
  { id: '629', name: 'Hotel' },
  { id: '2236', name: 'Medicina e saúde' },
  { id: '1758418281071392', name: 'Organização sem fins lucrativos' },
  { id: '192119584190796', name: 'Eventos' },
  { id: '273819889375819', name: 'Restaurante' },
  { id: '2700', name: 'Vestuário e roupas' },
  { id: '200600219953504', name: 'Compras e varejo' },
  { id: '145118935550090', name: 'Alimentos e mercearia' },
  { id: '2500', name: 'Serviços profissionais' },
  { id: '128003127270269', name: 'Viagens e transporte' },
  { id: '629', name: 'Hospedagem' },
  { id: '2240', name: 'Outra empresa' },
].filter((category, index, all) => all.findIndex((other) => other.id === category.id) === index);

/** The store as the state file keeps it (by phone number), so a sandbox keeps its businesses across restarts. */
export interface BusinessState {
  profiles: Array<[string, BusinessProfile]>;
  catalogs: Array<[string, Product[]]>;
  limits: Array<[string, AccountLimits]>;
}

const text = (tag: string, value: string) => node(tag, {}, Buffer.from(value, 'utf-8'));
const PAGE_MAX = 100;

export class BusinessStore {
  private readonly profiles = new Map<string, BusinessProfile>();
  private readonly catalogs = new Map<string, Product[]>();
  private readonly limits = new Map<string, AccountLimits>();
  /** Profile fields whose changes WhatsApp refuses for an account (a fault for tests), with the IQ error code. */
  private readonly refusals = new Map<string, Map<string, number>>();

  constructor(private readonly ctx: SimContext) {}

  toState(): BusinessState {
    return { profiles: [...this.profiles.entries()], catalogs: [...this.catalogs.entries()], limits: [...this.limits.entries()] };
  }

  restore(state: BusinessState | undefined): void {
    for (const [phone, profile] of state?.profiles ?? []) this.profiles.set(phone, profile);
    for (const [phone, catalog] of state?.catalogs ?? []) this.catalogs.set(phone, catalog);
    for (const [phone, limits] of state?.limits ?? []) this.limits.set(phone, limits);
  }

  profileOf(account: Account): BusinessProfile | undefined {
    if (!account.business) return undefined;
    let profile = this.profiles.get(account.phone);
    if (!profile) {
      profile = { description: '', address: '', email: '', websites: [], categories: [BUSINESS_CATEGORIES[BUSINESS_CATEGORIES.length - 1]] };
      this.profiles.set(account.phone, profile);
      this.ctx.stateChanged();
    }
    return profile;
  }

  catalogOf(account: Account): Product[] {
    let catalog = this.catalogs.get(account.phone);
    if (!catalog) {
      catalog = [];
      this.catalogs.set(account.phone, catalog);
    }
    return catalog;
  }

  limitsOf(account: Account): AccountLimits {
    return (
      this.limits.get(account.phone) ?? {
        capping: { total_quota: 1000, used_quota: 0, capping_status: 'NONE', ote_status: 'NOT_ELIGIBLE', mv_status: 'NOT_ACTIVE', cycle_end_timestamp: '0' },
        timelock: { is_active: false, time_enforcement_ends: '0', enforcement_type: 'DEFAULT' },
      }
    );
  }

  /** What the server now says about the account's new chats (the send-limit faults, send-limits.ts). */
  setLimits(account: Account, limits: AccountLimits): void {
    this.limits.set(account.phone, limits);
    this.ctx.stateChanged();
  }

  /** A product the phone adds to its own catalogue (the control API; the Business app does it). */
  addProduct(account: Account, input: Partial<Product> & { name: string }): Product {
    if (!account.business) throw new SimError(400, `${account.phone} is not a business account`);
    const product: Product = {
      id: String(randomInt(10 ** 14, 2 ** 48 - 1)),
      description: '',
      price: '0',
      currency: 'BRL',
      retailerId: '',
      url: '',
      isHidden: false,
      images: [],
      ...input,
    };
    this.catalogOf(account).push(product);
    this.ctx.stateChanged();
    return product;
  }

  // ---------------------------------------------------------------- iqs

  /**
   * `w:biz`: the profile of a JID (get), a delta of the sender's own profile (set). WhatsApp's category
   * catalogue query is in no public client: anything else, such as a `<business_category_list>`, is a 400.
   */
  handleBizIq(sender: DeviceRef, iq: BinaryNode): BinaryNode {
    const request = child(iq, 'business_profile');
    if (!request) return iqError(iq, 400, 'bad-request');
    if (iq.attrs.type === 'get') {
      const profiles: BinaryNode[] = [];
      for (const wanted of children(request, 'profile')) {
        const account = wanted.attrs.jid ? this.ctx.registry.resolveUser(wanted.attrs.jid) : undefined;
        const profile = account ? this.profileOf(account) : undefined;
        if (account && profile) profiles.push(this.profileNode(account, profile));
      }
      return iqResult(iq, [node('business_profile', {}, profiles)]);
    }
    const profile = this.profileOf(sender.account);
    if (!profile) return iqError(iq, 403, 'forbidden');
    const refused = this.refusals.get(sender.account.phone);
    for (const field of children(request).map((entry) => entry.tag)) {
      const code = refused?.get(field);
      if (code) return iqError(iq, code, code === 500 ? 'internal-server-error' : 'not-acceptable');
    }
    const websites = children(request, 'website').map((website) => contentString(website) ?? '');
    for (const field of ['description', 'address', 'email'] as const) {
      const value = child(request, field);
      if (!value) continue;
      const written = contentString(value) ?? '';
      if (field === 'email' && written && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(written)) return iqError(iq, 400, 'bad-request');
      if (written.length > 512) return iqError(iq, 406, 'not-acceptable');
      profile[field] = written;
    }
    if (websites.length) profile.websites = websites.filter(Boolean).slice(0, 2);
    this.ctx.stateChanged();
    return iqResult(iq);
  }

  /** `w:biz:catalog`: a page of a catalogue, one product, and the owner's edits, additions and deletions. */
  handleCatalogIq(sender: DeviceRef, iq: BinaryNode): BinaryNode {
    const page = child(iq, 'product_catalog');
    if (page) {
      const owner = page.attrs.jid ? this.ctx.registry.resolveUser(page.attrs.jid) : undefined;
      if (!owner || !owner.business) return iqError(iq, 404, 'item-not-found');
      const mine = owner === sender.account;
      const visible = this.catalogOf(owner).filter((product) => mine || !product.isHidden);
      const limit = Math.min(Math.max(Number(contentString(child(page, 'limit')) ?? '10') || 10, 1), PAGE_MAX);
      const after = contentString(child(page, 'after'));
      const start = after
        ? Number(
            Buffer.from(after, 'base64url')
              .toString('utf-8')
              .replace(/^offset:/, ''),
          ) || 0
        : 0;
      const slice = visible.slice(start, start + limit);
      const next = start + limit < visible.length ? Buffer.from(`offset:${start + limit}`, 'utf-8').toString('base64url') : undefined;
      return iqResult(iq, [
        node('product_catalog', { is_cart_enabled: 'true' }, [
          ...slice.map((product) => this.productNode(product)),
          node('paging', {}, next ? [text('after', next)] : []),
        ]),
      ]);
    }
    // One product, as WhatsApp Web asks it (2023 bundle 340591.js:24-43): `<product jid><product_id>`, answered
    // as `product_catalog > product`; without a `<product_id>` the request is malformed.
    const one = child(iq, 'product');
    if (one && iq.attrs.type === 'get') {
      const id = contentString(child(one, 'product_id'));
      if (!id) return iqError(iq, 400, 'bad-request');
      const owner = one.attrs.jid ? this.ctx.registry.resolveUser(one.attrs.jid) : undefined;
      const product = owner?.business ? this.catalogOf(owner).find((entry) => entry.id === id) : undefined;
      if (!owner || !product || (product.isHidden && owner !== sender.account)) return iqError(iq, 404, 'item-not-found');
      return iqResult(iq, [node('product_catalog', {}, [this.productNode(product)])]);
    }
    if (!sender.account.business) return iqError(iq, 403, 'forbidden');
    const catalog = this.catalogOf(sender.account);
    // Products shown or hidden, as WhatsApp Web does it (2023 bundle 621753.js:24-33, smax_id 23): the answer
    // carries no product.
    const visibility = child(iq, 'product_visibility_update');
    if (visibility) {
      const changes = children(visibility, 'product');
      const found = changes.map((change) => catalog.find((entry) => entry.id === contentString(child(change, 'id'))));
      if (!changes.length || changes.some((change) => change.attrs.is_hidden !== 'true' && change.attrs.is_hidden !== 'false'))
        return iqError(iq, 400, 'bad-request');
      if (found.some((product) => !product)) return iqError(iq, 404, 'item-not-found');
      changes.forEach((change, at) => ((found[at] as Product).isHidden = change.attrs.is_hidden === 'true'));
      this.ctx.stateChanged();
      return iqResult(iq);
    }
    // A product's edit carries the whole product (rc14's productUpdate, the fields ProductUpdate requires); a
    // partial edit is in no client and is refused.
    const edit = child(iq, 'product_catalog_edit');
    if (edit) {
      const change = child(edit, 'product');
      const id = contentString(child(change, 'id'));
      const product = catalog.find((entry) => entry.id === id);
      if (!change || !product) return iqError(iq, 404, 'item-not-found');
      if (!contentString(child(change, 'name'))) return iqError(iq, 400, 'bad-request');
      this.applyProduct(product, change);
      this.ctx.stateChanged();
      return iqResult(iq, [node('product_catalog_edit', {}, [this.productNode(product)])]);
    }
    const add = child(iq, 'product_catalog_add');
    if (add) {
      const change = child(add, 'product');
      const name = contentString(child(change, 'name'));
      if (!change || !name) return iqError(iq, 400, 'bad-request');
      const product = this.addProduct(sender.account, { name });
      this.applyProduct(product, change);
      this.ctx.stateChanged();
      return iqResult(iq, [node('product_catalog_add', {}, [this.productNode(product)])]);
    }
    const remove = child(iq, 'product_catalog_delete');
    if (remove) {
      const ids = new Set(children(remove, 'product').map((entry) => contentString(child(entry, 'id'))));
      const before = catalog.length;
      const kept = catalog.filter((product) => !ids.has(product.id));
      this.catalogs.set(sender.account.phone, kept);
      this.ctx.stateChanged();
      return iqResult(iq, [node('product_catalog_delete', { deleted_count: String(before - kept.length) })]);
    }
    return iqError(iq, 400, 'bad-request');
  }

  /** Whether a w:mex IQ is one of the new-chat limit queries. */
  isLimitsQuery(iq: BinaryNode): boolean {
    const queryId = child(iq, 'query')?.attrs.query_id;
    return queryId === REACHOUT_TIMELOCK || queryId === MESSAGE_CAPPING_INFO;
  }

  /** The new-chat limit queries (w:mex); undefined for any other query. */
  handleMex(sender: DeviceRef, iq: BinaryNode): BinaryNode | undefined {
    const query = child(iq, 'query');
    const queryId = query?.attrs.query_id;
    if (queryId !== REACHOUT_TIMELOCK && queryId !== MESSAGE_CAPPING_INFO) return undefined;
    const variables = (() => {
      try {
        return (JSON.parse(contentString(query) ?? '{}') as { variables?: Record<string, unknown> }).variables ?? {};
      } catch {
        return undefined;
      }
    })();
    const known = queryId === REACHOUT_TIMELOCK ? MEX_QUERIES.REACHOUT_TIMELOCK : MEX_QUERIES.MESSAGE_CAPPING_INFO;
    if (!variables || known.check(variables)) return iqResult(iq, [node('result', {}, Buffer.from(JSON.stringify(mexBadRequest()), 'utf-8'))]);
    const limits = this.limitsOf(sender.account);
    const data =
      queryId === REACHOUT_TIMELOCK
        ? { xwa2_fetch_account_reachout_timelock: limits.timelock }
        : { xwa2_message_capping_info: { ...limits.capping, cycle_start_timestamp: '0', server_sent_timestamp: String(Math.floor(Date.now() / 1000)) } };
    return iqResult(iq, [node('result', {}, Buffer.from(JSON.stringify({ data }), 'utf-8'))]);
  }

  private applyProduct(product: Product, change: BinaryNode): void {
    if (change.attrs.is_hidden !== undefined) product.isHidden = change.attrs.is_hidden === 'true';
    for (const [tag, field] of [
      ['name', 'name'],
      ['description', 'description'],
      ['retailer_id', 'retailerId'],
      ['url', 'url'],
      ['price', 'price'],
      ['currency', 'currency'],
    ] as const) {
      const value = child(change, tag);
      if (value) product[field] = contentString(value) ?? '';
    }
  }

  private profileNode(account: Account, profile: BusinessProfile): BinaryNode {
    return node('profile', { jid: account.jid, tag: String(Math.abs(hash(account.phone))) }, [
      text('address', profile.address),
      text('description', profile.description),
      ...profile.websites.map((website) => text('website', website)),
      text('email', profile.email),
      node(
        'categories',
        {},
        profile.categories.map((category) => node('category', { id: category.id }, Buffer.from(category.name, 'utf-8'))),
      ),
      node('business_hours', { timezone: 'America/Sao_Paulo' }, [node('business_hours_config', { day_of_week: 'mon', mode: 'open_24h' })]),
    ]);
  }

  private productNode(product: Product): BinaryNode {
    const image = product.images[0] ?? '';
    return node('product', { is_hidden: String(product.isHidden) }, [
      text('id', product.id),
      text('name', product.name),
      text('description', product.description),
      text('retailer_id', product.retailerId),
      text('url', product.url),
      text('price', product.price),
      text('currency', product.currency),
      node('media', {}, image ? [node('image', {}, [text('request_image_url', image), text('original_image_url', image)])] : []),
      node('status_info', {}, [text('status', 'APPROVED'), text('can_appeal', 'false')]),
    ]);
  }

  /** The phone's quick replies, folded from every `quick_reply` mutation its devices or the phone made (the last of each id wins). */
  async quickReplies(account: Account): Promise<PhoneQuickReply[]> {
    const latest = new Map<string, PhoneQuickReply | null>();
    for (const mutation of (await decodeAppState(account)).regular?.mutations ?? []) {
      const index = Array.isArray(mutation.index) ? (mutation.index as unknown[]) : [];
      if (index[0] !== 'quick_reply' || typeof index[1] !== 'string') continue;
      const action = (mutation.action?.quickReplyAction ?? null) as { shortcut?: string; message?: string; keywords?: string[]; deleted?: boolean } | null;
      latest.set(
        index[1],
        mutation.operation === 'remove' || !action || action.deleted
          ? null
          : { id: index[1], shortcut: action.shortcut ?? '', message: action.message ?? '', keywords: action.keywords ?? [] },
      );
    }
    return [...latest.values()].filter((reply): reply is PhoneQuickReply => reply !== null);
  }

  // ---------------------------------------------------------------- control API

  routes(): RouteSpec[] {
    const account = (phone: string): Account => {
      const found = this.ctx.registry.resolveUser(phone);
      if (!found) throw new SimError(404, `no account ${phone}`);
      return found;
    };
    const business = (phone: string): Account => {
      const found = account(phone);
      if (!found.business) throw new SimError(400, `${phone} is not a business account`);
      return found;
    };
    return [
      { method: 'GET', path: '/sim/accounts/{phone}/business-profile', handler: ({ params }) => this.profileOf(business(params.phone)) },
      {
        method: 'POST',
        path: '/sim/accounts/{phone}/business-profile',
        handler: ({ params, body }) => {
          const profile = this.profileOf(business(params.phone))!;
          for (const field of ['description', 'address', 'email'] as const) if (typeof body[field] === 'string') profile[field] = body[field];
          if (Array.isArray(body.websites)) profile.websites = body.websites.map(String);
          this.ctx.stateChanged();
          if (Array.isArray(body.categories)) {
            profile.categories = body.categories.map((id) => {
              const category = BUSINESS_CATEGORIES.find((entry) => entry.id === String(id));
              if (!category) throw new SimError(400, `unknown category ${String(id)}`);
              return category;
            });
          }
          return profile;
        },
      },
      {
        // A fault: WhatsApp refuses changes of these profile fields of the account (`code`, default 500) until cleared with `fields: []`.
        method: 'POST',
        path: '/sim/accounts/{phone}/business-profile/refuse',
        handler: ({ params, body }) => {
          const target = business(params.phone);
          const fields = Array.isArray(body.fields) ? body.fields.map(String) : [];
          const code = Number(body.code ?? 500) || 500;
          this.refusals.set(target.phone, new Map(fields.map((field) => [field, code])));
          return { fields, code };
        },
      },
      {
        method: 'GET',
        path: '/sim/accounts/{phone}/quick-replies',
        handler: async ({ params }) => ({ quickReplies: await this.quickReplies(account(params.phone)) }),
      },
      { method: 'GET', path: '/sim/accounts/{phone}/catalog', handler: ({ params }) => ({ products: this.catalogOf(business(params.phone)) }) },
      {
        method: 'POST',
        path: '/sim/accounts/{phone}/catalog',
        handler: ({ params, body }) => {
          if (typeof body.name !== 'string' || !body.name) throw new SimError(400, 'name is required');
          const input: Partial<Product> & { name: string } = { name: body.name };
          for (const field of ['description', 'price', 'currency', 'retailerId', 'url'] as const)
            if (body[field] !== undefined) input[field] = String(body[field]);
          if (body.isHidden !== undefined) input.isHidden = body.isHidden === true;
          if (Array.isArray(body.images)) input.images = body.images.map(String);
          return this.addProduct(business(params.phone), input);
        },
      },
      {
        // What WhatsApp tells the account about starting new chats (the wa_messages_limits queries).
        method: 'POST',
        path: '/sim/accounts/{phone}/limits',
        handler: ({ params, body }) => {
          const target = account(params.phone);
          const current = this.limitsOf(target);
          const next: AccountLimits = {
            capping: { ...current.capping, ...((body.capping ?? {}) as Partial<AccountLimits['capping']>) },
            timelock: { ...current.timelock, ...((body.timelock ?? {}) as Partial<AccountLimits['timelock']>) },
          };
          this.limits.set(target.phone, next);
          this.ctx.stateChanged();
          return next;
        },
      },
    ];
  }
}

function hash(value: string): number {
  let result = 0;
  for (const char of value) result = (result * 31 + char.charCodeAt(0)) | 0;
  return result;
}
