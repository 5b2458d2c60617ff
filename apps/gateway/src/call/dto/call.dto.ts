import { Transform } from 'class-transformer';
import { IsBoolean, IsInt, IsOptional, IsString, Max, MaxLength, Min, Matches } from 'class-validator';
import { RequiredString } from '../../send/dto/field-rules';
import { JSONSchema } from 'class-validator-jsonschema';

export const MAX_CALL_DURATION = 600;
const INVALID_DURATION = `invalid call_duration: give whole seconds from 1 to ${MAX_CALL_DURATION}`;

/** `call_duration` may come as a numeric string (older clients); '' and null are absent. */
const Numeric = () =>
  Transform(({ value }: { value: unknown }) => {
    if (value === '' || value === null) return undefined;
    if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
    return value;
  });

/** `POST /call/make`: who to ring, and for how long (absent: until WhatsApp gives up, about a minute). */
export class CallMakeDto {
  @JSONSchema({ description: 'The contact, a phone number in international format' })
  @RequiredString('missing number in payload', 'invalid number JID')
  @MaxLength(100, { message: 'invalid number JID' })
  number!: string;

  @Numeric()
  @IsOptional()
  @IsInt({ message: INVALID_DURATION })
  @Min(1, { message: INVALID_DURATION })
  @Max(MAX_CALL_DURATION, { message: INVALID_DURATION })
  @JSONSchema({ description: 'Hang up after this many seconds' })
  call_duration?: number;

  /** A video call (rings as one; no media either way). */
  @JSONSchema({ description: 'Ring as a video call (no media either way)' })
  @IsOptional()
  @IsBoolean({ message: 'video must be a boolean' })
  video?: boolean;
}

/** `POST /call/reject`: the call to reject (all optional: the newest ringing call, or the newest from `number`). */
export class CallRejectDto {
  @JSONSchema({ description: 'The caller (optional)' })
  @IsOptional()
  @IsString({ message: 'invalid number' })
  @MaxLength(100, { message: 'invalid number' })
  number?: string;

  @IsOptional()
  @IsString({ message: 'invalid call id' })
  @Matches(/^[A-Za-z0-9_-]{1,128}$/, { message: 'invalid call id' })
  @JSONSchema({ description: "The call's id (optional)" })
  id?: string;
}
