import { applyDecorators } from '@nestjs/common';
import { IsDefined, IsEmail, IsOptional, IsString, Matches, MaxLength, ValidateIf } from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';

export const INVALID_JID = 'invalid JID: give a phone number or a …@s.whatsapp.net JID';
export const INVALID_PRODUCT_ID = 'invalid product id: give the product ID of the catalogue (digits)';
const MAX_FIELD = 512;

/** A business's JID: a phone number or `…@s.whatsapp.net` (checked by the service, which turns it into the JID). */
const BusinessJid = (missing: string) =>
  applyDecorators(
    IsDefined({ message: missing }),
    IsString({ message: INVALID_JID }),
    Matches(/\S/, { message: missing }),
    MaxLength(100, { message: INVALID_JID }),
  );

/** A product id of a catalogue: WhatsApp's are digits. */
const ProductId = () =>
  applyDecorators(
    IsDefined({ message: 'missing id in payload' }),
    IsString({ message: INVALID_PRODUCT_ID }),
    Matches(/^\s*\d{1,32}\s*$/, { message: INVALID_PRODUCT_ID }),
  );

/** `POST /business/get/profile`: whose profile (the instance's own when `jid` is absent). */
export class BusinessProfileDto {
  @JSONSchema({ description: 'The business whose profile to read (a number or JID); the connected account when absent' })
  @IsOptional()
  @IsString({ message: INVALID_JID })
  @MaxLength(100, { message: INVALID_JID })
  jid?: string;
}

/** `POST /business/update/profile`: the fields to change (at least one; '' empties a field). */
export class BusinessProfileUpdateDto {
  @IsOptional()
  @IsString({ message: 'description must be a string' })
  @MaxLength(MAX_FIELD, { message: `description must be at most ${MAX_FIELD} characters` })
  @JSONSchema({ description: "The business's description" })
  description?: string;

  @IsOptional()
  @IsString({ message: 'address must be a string' })
  @MaxLength(MAX_FIELD, { message: `address must be at most ${MAX_FIELD} characters` })
  @JSONSchema({ description: "The business's address" })
  address?: string;

  @IsOptional()
  @IsString({ message: 'email must be a string' })
  @ValidateIf((dto: BusinessProfileUpdateDto) => typeof dto.email === 'string' && dto.email !== '')
  @IsEmail({}, { message: 'email must be an e-mail address' })
  @MaxLength(MAX_FIELD, { message: `email must be at most ${MAX_FIELD} characters` })
  @JSONSchema({ description: "The business's email" })
  email?: string;
}

/** `POST /business/catalog/list`: a catalogue's first page, or the page after `after` (the last page's `Paging.After`). */
export class CatalogListDto {
  @JSONSchema({ description: 'The business whose catalogue to list (a number or JID)' })
  @BusinessJid('missing jid in payload')
  jid!: string;

  @IsOptional()
  @IsString({ message: 'after must be the Paging.After of the previous page' })
  @Matches(/^[A-Za-z0-9+/=_-]{0,512}$/, { message: 'after must be the Paging.After of the previous page' })
  @JSONSchema({ description: 'The `response.Paging.After` token of the previous page, unchanged' })
  after?: string;
}

/** `POST /business/catalog/info`: one product of a catalogue. */
export class CatalogInfoDto {
  @JSONSchema({ description: 'The business owning the catalogue (a number or JID)' })
  @BusinessJid('missing jid in payload')
  jid!: string;
  @JSONSchema({ description: "The product's id" })
  @ProductId()
  id!: string;
}

/** `POST /business/catalog/delete|show|hide`: a product of the instance's own catalogue. */
export class ProductIdDto {
  @JSONSchema({ description: "The product's id" })
  @ProductId()
  id!: string;
}
