import { applyDecorators } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, ArrayNotEmpty, IsArray, IsBoolean, IsDefined, IsIn, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';

const NOT_BLANK = /\S/;
/** A channel's numeric id, with or without `@newsletter`. */
export const NEWSLETTER_ID = /^\s*\d{5,30}(@newsletter)?\s*$/;
export const INVALID_NEWSLETTER_ID = 'invalid newsletter id';
export const MAX_NEWSLETTER_NAME = 100;
export const MAX_NEWSLETTER_DESCRIPTION = 2048;
/** The most posts one `/newsletter/messages` asks WhatsApp for. */
export const MAX_NEWSLETTER_POSTS = 100;

/** `id` or `jid`: the channel's digits, or its full `<digits>@newsletter` JID. */
const NewsletterId = (): PropertyDecorator =>
  applyDecorators(IsOptional(), IsString({ message: INVALID_NEWSLETTER_ID }), Matches(NEWSLETTER_ID, { message: INVALID_NEWSLETTER_ID }));

/** `count` of posts: 1 to MAX_NEWSLETTER_POSTS. */
const PostCount = (): PropertyDecorator =>
  applyDecorators(
    IsOptional(),
    IsInt({ message: 'count must be an integer' }),
    Min(1, { message: `count must be from 1 to ${MAX_NEWSLETTER_POSTS}` }),
    Max(MAX_NEWSLETTER_POSTS, { message: `count must be from 1 to ${MAX_NEWSLETTER_POSTS}` }),
  );

/** A post's server id (positive, exact in a JS number). */
const ServerId = (field: string): PropertyDecorator =>
  applyDecorators(
    IsOptional(),
    IsInt({ message: `${field} must be an integer` }),
    Min(1, { message: `${field} must be a positive server id` }),
    Max(Number.MAX_SAFE_INTEGER, { message: `${field} must be a positive server id` }),
  );

/** The body of every route that names one channel: `id` (digits) or `jid` (`…@newsletter`), one of them required. */
export class NewsletterIdDto {
  @JSONSchema({ description: "The channel's numeric id; `id` or `jid` is required" })
  @NewsletterId()
  id?: string;
  @JSONSchema({ description: "The channel's JID (`…@newsletter`); `id` or `jid` is required" })
  @NewsletterId()
  jid?: string;
}

/** `POST /newsletter/create`: a name, and optionally a description and a picture. */
export class CreateNewsletterDto {
  @IsDefined({ message: 'name is required' })
  @IsString({ message: 'name must be a string' })
  @Matches(NOT_BLANK, { message: 'name is required' })
  @MaxLength(MAX_NEWSLETTER_NAME, { message: `name must be at most ${MAX_NEWSLETTER_NAME} characters` })
  @JSONSchema({ description: "The channel's name" })
  name!: string;

  @IsOptional()
  @IsString({ message: 'description must be a string' })
  @MaxLength(MAX_NEWSLETTER_DESCRIPTION, { message: `description must be at most ${MAX_NEWSLETTER_DESCRIPTION} characters` })
  @JSONSchema({ description: "The channel's description" })
  description?: string;

  /** URL, bare base64 or data URI of the channel's picture (at most 1 MB). */
  @IsOptional()
  @IsString({ message: 'picture must be a string' })
  @MaxLength(2 * 1024 * 1024, { message: 'picture is larger than 1 MB' })
  @JSONSchema({ description: "The channel's picture: a URL, bare base64 or a data URI (at most 1 MB)" })
  picture?: string;
}

/** `POST /newsletter/link`: the invite key (or the link https://whatsapp.com/channel/<key>). */
export class NewsletterLinkDto {
  @IsDefined({ message: 'key is required' })
  @IsString({ message: 'key must be a string' })
  @Matches(NOT_BLANK, { message: 'key is required' })
  @MaxLength(200, { message: 'invalid invite key' })
  @JSONSchema({ description: "The key of the channel's invite link (the part after `whatsapp.com/channel/`)" })
  key!: string;
}

/** `POST /newsletter/name`. */
export class NewsletterNameDto extends NewsletterIdDto {
  @IsDefined({ message: 'name is required' })
  @IsString({ message: 'name must be a string' })
  @Matches(NOT_BLANK, { message: 'name is required' })
  @MaxLength(MAX_NEWSLETTER_NAME, { message: `name must be at most ${MAX_NEWSLETTER_NAME} characters` })
  @JSONSchema({ description: "The channel's new name" })
  name!: string;
}

/** `POST /newsletter/description`: '' removes it. */
export class NewsletterDescriptionDto extends NewsletterIdDto {
  @IsDefined({ message: 'description is required' })
  @IsString({ message: 'description must be a string' })
  @MaxLength(MAX_NEWSLETTER_DESCRIPTION, { message: `description must be at most ${MAX_NEWSLETTER_DESCRIPTION} characters` })
  @JSONSchema({ description: "The channel's new description" })
  description!: string;
}

/** `POST /newsletter/messages`: the newest `count` posts (20 when not sent), or the `count` before the post `beforeid`. */
export class NewsletterMessagesDto extends NewsletterIdDto {
  @JSONSchema({ description: 'How many posts to read (the latest first)' })
  @PostCount()
  count?: number;

  @JSONSchema({ description: 'Only posts older than this server id (the next page)' })
  @ServerId('beforeid')
  beforeid?: number;
}

/** `POST /newsletter/updates` (deprecated): checked as the reference describes it, though WhatsApp no longer answers it. */
export class NewsletterUpdatesDto extends NewsletterIdDto {
  @JSONSchema({ description: 'How many posts to read (the latest first)' })
  @PostCount()
  count?: number;

  @JSONSchema({ description: 'Only updates of posts after this server id' })
  @ServerId('afterid')
  afterid?: number;

  /** Unix seconds, or milliseconds when above 1000000000000. */
  @IsOptional()
  @IsInt({ message: 'since must be an integer' })
  @Min(0, { message: 'since must be a timestamp in seconds or milliseconds' })
  @Max(Number.MAX_SAFE_INTEGER, { message: 'since must be a timestamp in seconds or milliseconds' })
  @JSONSchema({ description: 'Only updates since then: Unix seconds, or milliseconds when above 1000000000000' })
  since?: number;
}

/** A post of the channel by `messageid` or `serverid` (one of them required), looked for in the newest `count` × `maxpages` posts. */
export class NewsletterPostDto extends NewsletterIdDto {
  @IsOptional()
  @IsString({ message: 'messageid must be a string' })
  @Matches(/^[A-Za-z0-9._:-]{1,128}$/, { message: 'messageid must be a message id' })
  @JSONSchema({ description: "The post's message id; `messageid` or `serverid` is required" })
  messageid?: string;

  @JSONSchema({ description: "The post's server id; `messageid` or `serverid` is required" })
  @ServerId('serverid')
  serverid?: number;

  @JSONSchema({ description: 'How many recent posts a page of the search reads' })
  @PostCount()
  count?: number;

  @IsOptional()
  @IsInt({ message: 'maxpages must be an integer' })
  @Min(1, { message: 'maxpages must be from 1 to 20' })
  @Max(20, { message: 'maxpages must be from 1 to 20' })
  @JSONSchema({ description: 'How many pages of recent posts to search (1 to 20)' })
  maxpages?: number;
}

/** `POST /newsletter/messages/edit`: the post's new text or caption. */
export class NewsletterPostEditDto extends NewsletterPostDto {
  @IsDefined({ message: 'text is required' })
  @IsString({ message: 'text must be a string' })
  @Matches(NOT_BLANK, { message: 'text is required' })
  @MaxLength(65_536, { message: 'text must be at most 65536 characters' })
  @JSONSchema({ description: "The post's new text (or caption)" })
  text!: string;
}

/** `POST /newsletter/viewed`: the server ids of the posts seen. */
export class NewsletterViewedDto extends NewsletterIdDto {
  @IsDefined({ message: 'serverids is required' })
  @IsArray({ message: 'serverids must be an array of server ids' })
  @ArrayNotEmpty({ message: 'serverids is required' })
  @ArrayMaxSize(100, { message: 'serverids must name at most 100 posts' })
  @IsInt({ each: true, message: 'serverids must be an array of server ids' })
  @Min(1, { each: true, message: 'serverids must be positive server ids' })
  @Max(Number.MAX_SAFE_INTEGER, { each: true, message: 'serverids must be positive server ids' })
  @JSONSchema({ description: 'The server ids of the posts viewed' })
  serverids!: number[];
}

/** `POST /newsletter/reaction`: `reaction` an emoji, or '' to take it back. */
export class NewsletterReactionDto extends NewsletterIdDto {
  @IsDefined({ message: 'serverid is required' })
  @IsInt({ message: 'serverid must be an integer' })
  @Min(1, { message: 'serverid must be a positive server id' })
  @Max(Number.MAX_SAFE_INTEGER, { message: 'serverid must be a positive server id' })
  @JSONSchema({ description: 'The server id of the post' })
  serverid!: number;

  @IsDefined({ message: 'reaction is required (an emoji, or "" to remove it)' })
  @IsString({ message: 'reaction must be a string' })
  @MaxLength(32, { message: 'reaction must be one emoji' })
  @JSONSchema({ description: 'The emoji; an empty string removes the reaction' })
  reaction!: string;

  @IsOptional()
  @IsString({ message: 'reactionmessageid must be a string' })
  @Matches(/^[A-Za-z0-9]{6,64}$/, { message: 'reactionmessageid must be 6 to 64 letters and digits' })
  @JSONSchema({ description: "The reaction's own message id (WhatsApp makes one when absent)" })
  reactionmessageid?: string;
}

/** `POST /newsletter/picture`: a URL, base64 or a data URI of an image of at most 1 MB (`remove` takes it away). */
export class NewsletterPictureDto extends NewsletterIdDto {
  @IsDefined({ message: 'picture is required' })
  @IsString({ message: 'picture must be a string' })
  @Matches(NOT_BLANK, { message: 'empty image source' })
  @MaxLength(2 * 1024 * 1024, { message: 'picture is larger than 1 MB' })
  @JSONSchema({ description: 'The new picture: a URL, bare base64 or a data URI (at most 1 MB)' })
  picture!: string;
}

export const REACTION_CODES = ['all', 'basic', 'none', 'blocklist'] as const;

/** `POST /newsletter/settings`: who may react (all, basic, none, blocklist; any case). */
export class NewsletterSettingsDto extends NewsletterIdDto {
  @Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim().toLowerCase() : value))
  @IsDefined({ message: 'reactionCodes is required' })
  @IsIn(REACTION_CODES, { message: 'invalid reactionCodes' })
  @JSONSchema({ description: 'Which reactions the channel accepts: `all`, `basic`, `none` or `blocklist`' })
  reactionCodes!: (typeof REACTION_CODES)[number];
}

/** `POST /newsletter/search`: the channel directory, browsed (`view`) or searched (`searchText`). */
export class NewsletterSearchDto {
  @IsOptional()
  @IsInt({ message: 'limit must be an integer' })
  @Min(1, { message: 'limit must be from 1 to 100' })
  @Max(100, { message: 'limit must be from 1 to 100' })
  @JSONSchema({ description: 'Channels per page' })
  limit?: number;

  @IsOptional()
  @IsString({ message: 'view must be a string' })
  @Matches(/^[A-Za-z_]{1,40}$/, { message: 'view must be a directory view (RECOMMENDED, TRENDING, POPULAR, NEW…)' })
  @JSONSchema({ description: 'A directory view: `RECOMMENDED`, `TRENDING`, `POPULAR`, `NEW`…' })
  view?: string;

  @IsOptional()
  @IsArray({ message: 'countryCodes must be an array of country codes' })
  @ArrayMaxSize(50, { message: 'countryCodes must name at most 50 countries' })
  @IsString({ each: true, message: 'countryCodes must be an array of country codes' })
  @Matches(/^[A-Za-z]{2}$/, { each: true, message: 'countryCodes must be two-letter country codes' })
  @JSONSchema({ description: 'Only channels of these countries (ISO alpha-2 codes)' })
  countryCodes?: string[];

  @IsOptional()
  @IsString({ message: 'searchText must be a string' })
  @MaxLength(200, { message: 'searchText must be at most 200 characters' })
  @JSONSchema({ description: 'Text to search channels by' })
  searchText?: string;

  @IsOptional()
  @IsString({ message: 'after must be a string' })
  @MaxLength(500, { message: 'after must be the cursor of a previous answer' })
  @JSONSchema({ description: 'The cursor of the next page, from the previous answer' })
  after?: string;
}

/** `POST /newsletter/admin/invite|remove|revoke`: the person's phone number. */
export class NewsletterPhoneDto extends NewsletterIdDto {
  @IsDefined({ message: 'phone is required' })
  @IsString({ message: 'phone must be a string' })
  @Matches(NOT_BLANK, { message: 'phone is required' })
  @MaxLength(100, { message: 'Invalid phone' })
  @JSONSchema({ description: "The person's phone number, international format" })
  phone!: string;
}

/** `POST /newsletter/owner/transfer`: to one of the channel's admins; `quitAdmin` then steps the instance down. */
export class NewsletterOwnerDto extends NewsletterPhoneDto {
  @IsOptional()
  @IsBoolean({ message: 'quitAdmin must be a boolean' })
  @JSONSchema({ description: 'The former owner also stops being an admin' })
  quitAdmin?: boolean;
}
