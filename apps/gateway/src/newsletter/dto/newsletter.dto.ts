import { applyDecorators } from '@nestjs/common';
import { IsDefined, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';

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
  @NewsletterId() id?: string;
  @NewsletterId() jid?: string;
}

/** `POST /newsletter/create`: a name, and optionally a description and a picture. */
export class CreateNewsletterDto {
  @IsDefined({ message: 'name is required' })
  @IsString({ message: 'name must be a string' })
  @Matches(NOT_BLANK, { message: 'name is required' })
  @MaxLength(MAX_NEWSLETTER_NAME, { message: `name must be at most ${MAX_NEWSLETTER_NAME} characters` })
  name!: string;

  @IsOptional()
  @IsString({ message: 'description must be a string' })
  @MaxLength(MAX_NEWSLETTER_DESCRIPTION, { message: `description must be at most ${MAX_NEWSLETTER_DESCRIPTION} characters` })
  description?: string;

  /** URL, bare base64 or data URI of the channel's picture. */
  @IsOptional()
  @IsString({ message: 'picture must be a string' })
  picture?: string;
}

/** `POST /newsletter/link`: the invite key (or the link https://whatsapp.com/channel/<key>). */
export class NewsletterLinkDto {
  @IsDefined({ message: 'key is required' })
  @IsString({ message: 'key must be a string' })
  @Matches(NOT_BLANK, { message: 'key is required' })
  @MaxLength(200, { message: 'invalid invite key' })
  key!: string;
}

/** `POST /newsletter/name`. */
export class NewsletterNameDto extends NewsletterIdDto {
  @IsDefined({ message: 'name is required' })
  @IsString({ message: 'name must be a string' })
  @Matches(NOT_BLANK, { message: 'name is required' })
  @MaxLength(MAX_NEWSLETTER_NAME, { message: `name must be at most ${MAX_NEWSLETTER_NAME} characters` })
  name!: string;
}

/** `POST /newsletter/description`: '' removes it. */
export class NewsletterDescriptionDto extends NewsletterIdDto {
  @IsDefined({ message: 'description is required' })
  @IsString({ message: 'description must be a string' })
  @MaxLength(MAX_NEWSLETTER_DESCRIPTION, { message: `description must be at most ${MAX_NEWSLETTER_DESCRIPTION} characters` })
  description!: string;
}

/** `POST /newsletter/messages`: the newest `count` posts (20 when not sent), or the `count` before the post `beforeid`. */
export class NewsletterMessagesDto extends NewsletterIdDto {
  @PostCount() count?: number;

  @ServerId('beforeid') beforeid?: number;
}

/** `POST /newsletter/updates` (deprecated): checked as the reference describes it, though WhatsApp no longer answers it. */
export class NewsletterUpdatesDto extends NewsletterIdDto {
  @PostCount() count?: number;

  @ServerId('afterid') afterid?: number;

  /** Unix seconds, or milliseconds when above 1000000000000. */
  @IsOptional()
  @IsInt({ message: 'since must be an integer' })
  @Min(0, { message: 'since must be a timestamp in seconds or milliseconds' })
  @Max(Number.MAX_SAFE_INTEGER, { message: 'since must be a timestamp in seconds or milliseconds' })
  since?: number;
}
