import { BROWSER_CHOICES, type BrowserChoice } from '@gw/contracts';
import { IsBoolean, IsDefined, IsIn, IsInt, IsNotEmpty, IsNumber, IsOptional, IsString, Matches, Max, MaxLength, ValidateIf } from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';

/** Longest gap between two queued sends (seconds); more is a typo, and beyond 2³¹ Postgres refuses the value. */
export const MAX_DELAY_SECONDS = 86_400;
/** Longest chatbot pause (minutes): a year. */
export const MAX_CHATBOT_MINUTES = 525_600;

/** Absent is fine; `null` is validated like any other value (the type rule refuses it) instead of reaching a NOT NULL column. */
const OptionalNotNull = () => ValidateIf((_dto: object, value: unknown) => value !== undefined);
/**
 * Absent is fine, and `null` clears the value (the service stores it as empty): not `@IsOptional()`,
 * whose null the body validation reads as the field left out.
 */
const OptionalNullClears = () => ValidateIf((_dto: object, value: unknown) => value !== undefined && value !== null);

export class ConnectDto {
  @IsOptional()
  @IsString()
  @Matches(/^\d{10,15}$/, { message: 'phone must be 10 to 15 digits (international format, digits only)' })
  @JSONSchema({
    description: "The account's phone number, international format, digits only (e.g. 5511999999999): a pairing code is answered instead of a QR code",
  })
  phone?: string;

  @IsOptional()
  @IsIn(BROWSER_CHOICES, { message: `browser must be one of ${BROWSER_CHOICES.join(', ')}` })
  @JSONSchema({ description: 'The browser profile the session presents to WhatsApp; `auto` keeps a valid saved one or picks one for a new link' })
  browser?: BrowserChoice;

  @IsOptional()
  @IsString()
  @MaxLength(64)
  @JSONSchema({ description: "The name the phone shows for this linked device; best left empty (the browser's default)" })
  systemName?: string;

  @IsOptional()
  @IsString()
  @Matches(/^[a-z]{2}$/, { message: 'proxy_managed_country must be a lowercase ISO alpha-2 code' })
  @JSONSchema({ description: "The managed proxy's country, ISO alpha-2 lowercase (e.g. `br`); see `GET /proxy-managed/countries`" })
  proxy_managed_country?: string;

  @IsOptional()
  @IsString()
  @MaxLength(100)
  @JSONSchema({ description: "The managed proxy's state, the `state` of `GET /proxy-managed/cities`, when a city name is ambiguous" })
  proxy_managed_state?: string;

  @IsOptional()
  @IsString()
  @MaxLength(100)
  @JSONSchema({ description: "The managed proxy's city: a `value` of `GET /proxy-managed/cities`" })
  proxy_managed_city?: string;

  /** Range 0–365; values outside it are ignored (90 applies), so only the type is checked here. */
  @IsOptional()
  @IsInt({ message: 'history_days must be an integer' })
  @JSONSchema({ description: 'How many days of history to ask the phone for when linking (0 to 365; 90 otherwise)' })
  history_days?: number;
}

export class UpdateInstanceNameDto {
  @IsString()
  @IsNotEmpty({ message: 'name is required' })
  @MaxLength(100)
  @JSONSchema({ description: "The instance's new name" })
  name!: string;
}

export class UpdateDelaySettingsDto {
  @IsNumber({ allowNaN: false, allowInfinity: false }, { message: 'Invalid request payload: msg_delay_min must be a number' })
  @Max(MAX_DELAY_SECONDS, { message: `Invalid request payload: msg_delay_min must be at most ${MAX_DELAY_SECONDS} seconds` })
  @JSONSchema({ description: 'The shortest pause between two async messages, in seconds (0: none)' })
  msg_delay_min!: number;

  @IsNumber({ allowNaN: false, allowInfinity: false }, { message: 'Invalid request payload: msg_delay_max must be a number' })
  @Max(MAX_DELAY_SECONDS, { message: `Invalid request payload: msg_delay_max must be at most ${MAX_DELAY_SECONDS} seconds` })
  @JSONSchema({ description: 'The longest pause between two async messages, in seconds (raised to the minimum when below it)' })
  msg_delay_max!: number;
}

const FIELD_NAMES = Array.from({ length: 20 }, (_, i) => `lead_field${String(i + 1).padStart(2, '0')}`);
export { FIELD_NAMES };

export class UpdateFieldsMapDto {
  [key: string]: string | null | undefined;
}
for (const field of FIELD_NAMES) {
  OptionalNullClears()(UpdateFieldsMapDto.prototype, field);
  IsString()(UpdateFieldsMapDto.prototype, field);
  MaxLength(255)(UpdateFieldsMapDto.prototype, field);
  JSONSchema({ description: `What the custom lead field ${field} holds, as a front end names it (up to 255 characters; null clears it)` })(
    UpdateFieldsMapDto.prototype,
    field,
  );
}

export class ChatbotSettingsDto {
  @OptionalNullClears()
  @IsString()
  @MaxLength(300)
  @JSONSchema({ description: 'The OpenAI API key the chatbot uses (null clears it)' })
  openai_apikey?: string;

  @OptionalNotNull()
  @IsBoolean()
  @JSONSchema({ description: "The chatbot answers this instance's chats" })
  chatbot_enabled?: boolean;

  @OptionalNotNull()
  @IsBoolean()
  @JSONSchema({ description: 'The chatbot leaves groups alone' })
  chatbot_ignoreGroups?: boolean;

  @OptionalNullClears()
  @IsString()
  @MaxLength(100)
  @JSONSchema({ description: 'A word that, sent by you in a chat, stops the chatbot there (null clears it)' })
  chatbot_stopConversation?: string;

  @OptionalNotNull()
  @IsInt()
  @Max(MAX_CHATBOT_MINUTES, { message: `chatbot_stopMinutes must be at most ${MAX_CHATBOT_MINUTES} (a year)` })
  @JSONSchema({ description: 'For how many minutes the chatbot stays stopped in a chat after that word' })
  chatbot_stopMinutes?: number;

  @OptionalNotNull()
  @IsInt()
  @Max(MAX_CHATBOT_MINUTES, { message: `chatbot_stopWhenYouSendMsg must be at most ${MAX_CHATBOT_MINUTES} (a year)` })
  @JSONSchema({ description: 'For how many minutes the chatbot stays quiet in a chat after you write in it yourself (0: it does not)' })
  chatbot_stopWhenYouSendMsg?: number;
}

export class PresenceDto {
  @IsIn(['available', 'unavailable'], { message: 'Invalid presence value, use available or unavailable' })
  @JSONSchema({ description: "The account's presence: `available` (online) or `unavailable`" })
  presence!: 'available' | 'unavailable';
}

const AUDIENCE = ['all', 'contacts', 'contact_blacklist', 'none'];
export class PrivacyDto {
  @JSONSchema({ description: 'Who can add the account to groups: `all`, `contacts`, `contact_blacklist` or `none`' })
  @IsOptional()
  @IsIn(AUDIENCE)
  groupadd?: string;
  @JSONSchema({ description: 'Who sees its last seen: `all`, `contacts`, `contact_blacklist` or `none`' })
  @IsOptional()
  @IsIn(AUDIENCE)
  last?: string;
  @JSONSchema({ description: 'Who sees its status (the text under the name): `all`, `contacts`, `contact_blacklist` or `none`' })
  @IsOptional()
  @IsIn(AUDIENCE)
  status?: string;
  @JSONSchema({ description: 'Who sees its profile picture: `all`, `contacts`, `contact_blacklist` or `none`' })
  @IsOptional()
  @IsIn(AUDIENCE)
  profile?: string;
  @JSONSchema({ description: 'Read receipts: `all` (sent) or `none`' })
  @IsOptional()
  @IsIn(['all', 'none'])
  readreceipts?: string;
  @JSONSchema({ description: 'Who sees it online: `all` or `match_last_seen`' })
  @IsOptional()
  @IsIn(['all', 'match_last_seen'])
  online?: string;
  @JSONSchema({ description: 'Who can call it: `all` or `known`' })
  @IsOptional()
  @IsIn(['all', 'known'])
  calladd?: string;
}

export class ProxyDto {
  /** Required unless the older `enable` is given (true: custom, false: internal). */
  @ValidateIf((dto: ProxyDto) => dto.enable === undefined || (dto.mode !== undefined && dto.mode !== null))
  @IsDefined({ message: 'mode is required (custom, internal or none)' })
  @IsIn(['custom', 'internal', 'none'], { message: 'mode must be one of custom, internal, none' })
  @JSONSchema({ description: '`custom` (your `proxy_url`), `internal` (the managed proxies) or `none` (a direct connection, with `confirm_no_proxy`)' })
  mode?: 'custom' | 'internal' | 'none';

  /** The older body: `enable` + `proxy_url`. */
  @IsOptional()
  @IsBoolean()
  @JSONSchema({ description: 'The older form: true is `custom` (with `proxy_url`), false is `internal`' })
  enable?: boolean;

  @IsOptional()
  @IsString()
  @MaxLength(2000)
  @JSONSchema({ description: 'Required with `mode: custom`: `http://`, `https://`, `socks5://` or `socks5h://` (user:password@host:port)' })
  proxy_url?: string;

  @IsOptional()
  @IsString()
  @MaxLength(2000)
  @JSONSchema({ description: 'What `custom` falls back to when its proxy fails: `internal`, `never`, or another proxy URL' })
  proxy_fallback?: string;

  @IsOptional()
  @IsBoolean()
  @JSONSchema({ description: 'Required with `mode: none`: you accept connecting without a proxy' })
  confirm_no_proxy?: boolean;

  /** uazapi 2.1.1: with `mode: internal`, take another proxy of the pools at once (409 when none other answers). */
  @IsOptional()
  @IsBoolean()
  @JSONSchema({ description: 'With `internal`: switch to another proxy of the pools now (409 when there is none)' })
  rotate_now?: boolean;
}
