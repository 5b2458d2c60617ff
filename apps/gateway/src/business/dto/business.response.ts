import { ApiProperty, ApiSchema } from '@nestjs/swagger';

/** A business category. */
@ApiSchema({ name: 'BusinessCategory', description: 'A business category' })
export class BusinessCategory {
  @ApiProperty({ description: "The category's id on WhatsApp", example: '200600219953504' })
  id!: string;
  @ApiProperty({ description: "The category's name, in the account's language", example: 'Compras e varejo' })
  localized_display_name!: string;
}

/** A business profile (whatsmeow's BusinessProfile, uazapi's field names). */
@ApiSchema({ name: 'BusinessProfileFields', description: 'A WhatsApp Business profile' })
export class BusinessProfileFields {
  @ApiProperty({ description: "The business's JID (`<number>@s.whatsapp.net`)" })
  jid!: string;
  @ApiProperty({ description: "The profile's tag (its version, as WhatsApp sends it)" })
  tag!: string;
  @ApiProperty({ description: "The business's description" })
  description!: string;
  @ApiProperty({ description: "The business's address" })
  address!: string;
  @ApiProperty({ description: "The business's email" })
  email!: string;
  @ApiProperty({ type: 'string', isArray: true, description: "The business's websites" })
  websites!: string[];
  @ApiProperty({ type: () => BusinessCategory, isArray: true, description: "The business's categories" })
  categories!: BusinessCategory[];
  @ApiProperty({ description: 'The time zone of the opening hours (e.g. `America/Sao_Paulo`; "" when none)' })
  business_hours_timezone!: string;
}

/** `POST /business/get/profile`. */
@ApiSchema({ name: 'BusinessProfile', description: 'A WhatsApp Business profile' })
export class BusinessProfileResponse {
  @ApiProperty({ type: () => BusinessProfileFields, description: 'The profile' })
  response!: BusinessProfileFields;
}

/** `GET /business/get/categories`. */
@ApiSchema({ name: 'BusinessCategories', description: "The categories of the instance's business profile" })
export class BusinessCategoriesResponse {
  @ApiProperty({ type: () => BusinessCategory, isArray: true, description: 'The categories' })
  response!: BusinessCategory[];
}

/** One field's outcome of `/business/update/profile`: changed, or WhatsApp's error. */
export interface BusinessProfileFieldOutcome {
  status: 'updated' | 'error';
  error?: string;
}

/** `POST /business/update/profile` (200 all, 207 some, 500 none changed): each field's outcome. */
@ApiSchema({ name: 'BusinessProfileUpdated', description: "Each field's outcome, and how many changed" })
export class BusinessProfileUpdatedResponse {
  @ApiProperty({
    type: 'object',
    additionalProperties: {
      type: 'object',
      required: ['status'],
      properties: {
        status: { type: 'string', enum: ['updated', 'error'], description: 'The field was changed (`updated`), or not (`error`)' },
        error: { type: 'string', description: 'Why the field was not changed (with `error` only)' },
      },
    },
    description: 'Each field sent (`description`, `address`, `email`) with its outcome',
  })
  response!: Partial<Record<'description' | 'address' | 'email', BusinessProfileFieldOutcome>>;
  @ApiProperty({ type: 'integer', description: 'How many fields were changed' })
  updated!: number;
  @ApiProperty({ type: 'integer', description: 'How many fields were not changed' })
  failed!: number;
}

/** A JID as whatsmeow serialises it. */
@ApiSchema({ name: 'BusinessJid', description: 'A JID as whatsmeow serialises it' })
export class BusinessJid {
  @ApiProperty({ description: 'The user part (the number)' })
  User!: string;
  @ApiProperty({ type: 'integer', description: 'The agent (always 0)' })
  RawAgent!: number;
  @ApiProperty({ type: 'integer', description: 'The device (always 0)' })
  Device!: number;
  @ApiProperty({ type: 'integer', description: 'The integrator (always 0)' })
  Integrator!: number;
  @ApiProperty({ description: 'The server (`s.whatsapp.net`)' })
  Server!: string;
}

/** A product's price. */
@ApiSchema({ name: 'BusinessProductPrice', description: "A product's price" })
export class BusinessProductPrice {
  @ApiProperty({ description: 'The amount in thousandths of the currency unit (e.g. `1990000` for 1990.00)' })
  Amount!: string;
  @ApiProperty({ description: 'The currency (ISO 4217, e.g. `BRL`)' })
  Currency!: string;
}

/** Whether a product was approved. */
@ApiSchema({ name: 'BusinessProductStatus', description: "A product's review status" })
export class BusinessProductStatus {
  @ApiProperty({ description: "WhatsApp's review status (e.g. `approved`)" })
  Status!: string;
  @ApiProperty({ description: 'A refusal can be appealed' })
  CanAppeal!: boolean;
}

/** A picture's size. */
@ApiSchema({ name: 'BusinessImageDimensions', description: "A picture's size (0 when WhatsApp does not say)" })
export class BusinessImageDimensions {
  @ApiProperty({ type: 'integer', description: 'Height in pixels' })
  Height!: number;
  @ApiProperty({ type: 'integer', description: 'Width in pixels' })
  Width!: number;
}

/** A product picture. */
@ApiSchema({ name: 'BusinessProductImage', description: 'A picture of a product' })
export class BusinessProductImage {
  @ApiProperty({ description: "The picture's id" })
  ID!: string;
  @ApiProperty({ type: () => BusinessImageDimensions, description: "The picture's size" })
  OriginalDimensions!: BusinessImageDimensions;
  @ApiProperty({ description: 'The URL of the picture as requested' })
  RequestImageUrl!: string;
  @ApiProperty({ description: 'The URL of the original picture' })
  OriginalImageUrl!: string;
}

/** A product as uazapi answers it: whatsmeow's Product struct, field for field. */
@ApiSchema({ name: 'BusinessCatalogProduct', description: 'A product of a catalogue' })
export class BusinessCatalogProduct {
  @ApiProperty({ description: "The product's id" })
  ID!: string;
  @ApiProperty({ description: "The product's name" })
  Name!: string;
  @ApiProperty({ description: "The product's description" })
  Description!: string;
  @ApiProperty({ type: () => BusinessProductPrice, nullable: true, description: 'The price (null when the product has none)' })
  Price!: BusinessProductPrice | null;
  @ApiProperty({ description: 'The sale price ("" when none)' })
  SalePrice!: string;
  @ApiProperty({ description: "The business's own id for the product (SKU)" })
  RetailerID!: string;
  @ApiProperty({ description: "The product's page" })
  Url!: string;
  @ApiProperty({ description: 'Whether it is in stock (e.g. `in stock`)' })
  Availability!: string;
  @ApiProperty({ description: 'The product is hidden from customers' })
  IsHidden!: boolean;
  @ApiProperty({ type: () => BusinessProductStatus, description: "WhatsApp's review of the product" })
  StatusInfo!: BusinessProductStatus;
  @ApiProperty({ type: 'integer', description: 'The most a customer may order (0: no limit)' })
  MaxAvailable!: number;
  @ApiProperty({ description: '`success` when the product has pictures, else ""' })
  ImageFetchStatus!: string;
  @ApiProperty({ type: () => BusinessProductImage, isArray: true, description: "The product's pictures" })
  Images!: BusinessProductImage[];
}

/** Where a catalogue page sits. */
@ApiSchema({ name: 'BusinessCatalogPaging', description: 'Where a catalogue page sits' })
export class BusinessCatalogPaging {
  @ApiProperty({ description: 'Always ""' })
  Before!: string;
  @ApiProperty({ description: 'Send it as `after` for the next page; empty on the last page' })
  After!: string;
}

/** A page of a catalogue as whatsmeow's structs serialise it. */
@ApiSchema({ name: 'BusinessCatalogPage', description: 'A page of a catalogue' })
export class BusinessCatalogPage {
  @ApiProperty({ type: () => BusinessJid, description: 'The business whose catalogue it is' })
  JID!: BusinessJid;
  @ApiProperty({ description: 'The business takes orders through the cart' })
  CartEnabled!: boolean;
  @ApiProperty({ description: 'Always ""' })
  Source!: string;
  @ApiProperty({ type: () => BusinessCatalogProduct, isArray: true, description: 'The products of this page (up to 10)' })
  Products!: BusinessCatalogProduct[];
  @ApiProperty({ type: () => BusinessCatalogPaging, description: 'Where the page sits' })
  Paging!: BusinessCatalogPaging;
}

/** `POST /business/catalog/list`. */
@ApiSchema({ name: 'BusinessCatalog', description: "A page of a business's catalogue" })
export class BusinessCatalogResponse {
  @ApiProperty({ type: () => BusinessCatalogPage, description: 'The page' })
  response!: BusinessCatalogPage;
}

/** One product, uazapi's field names. */
@ApiSchema({ name: 'BusinessProductFields', description: 'A product of a catalogue' })
export class BusinessProductFields {
  @ApiProperty({ description: "The product's id" })
  id!: string;
  @ApiProperty({ description: "The product's name" })
  name!: string;
  @ApiProperty({ description: "The product's description" })
  description!: string;
  @ApiProperty({ description: 'The price in thousandths of the currency unit ("" when none)' })
  price!: string;
  @ApiProperty({ description: 'The currency (ISO 4217; "" when none)' })
  currency!: string;
  @ApiProperty({ description: "The business's own id for the product (SKU)" })
  retailer_id!: string;
  @ApiProperty({ description: "The product's page" })
  url!: string;
  @ApiProperty({ description: 'Whether it is in stock (e.g. `in stock`)' })
  availability!: string;
  @ApiProperty({ description: 'The product is hidden from customers' })
  is_hidden!: boolean;
  @ApiProperty({ type: 'string', isArray: true, description: "The URLs of the product's pictures" })
  images!: string[];
}

/** `POST /business/catalog/info`. */
@ApiSchema({ name: 'BusinessProduct', description: 'A product of a catalogue' })
export class BusinessProductResponse {
  @ApiProperty({ type: () => BusinessProductFields, description: 'The product' })
  response!: BusinessProductFields;
}
