import { instant, integer } from '../../common/query-values';
import { IsDate, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';

export const AUDIT_PAGE_DEFAULT = 50;
export const AUDIT_PAGE_MAX = 500;

/** The filters of `GET /instance/audit` (and `GET /admin/audit`, which adds `instance`). */
export class InstanceAuditQueryDto {
  @IsOptional()
  @IsString({ message: 'action must be a string' })
  @MaxLength(100, { message: 'action must be at most 100 characters' })
  action?: string;

  @IsOptional()
  @IsString({ message: 'route must be a string' })
  @MaxLength(200, { message: 'route must be at most 200 characters' })
  route?: string;

  @IsOptional()
  @instant()
  @IsDate({ message: 'from must be an ISO 8601 date-time or Unix milliseconds' })
  from?: Date;

  @IsOptional()
  @instant()
  @IsDate({ message: 'to must be an ISO 8601 date-time or Unix milliseconds' })
  to?: Date;

  @IsOptional()
  @integer()
  @IsInt({ message: 'limit must be an integer' })
  @Min(1, { message: 'limit must be at least 1' })
  @Max(AUDIT_PAGE_MAX, { message: `limit must be at most ${AUDIT_PAGE_MAX}` })
  limit?: number;

  @IsOptional()
  @integer()
  @IsInt({ message: 'offset must be an integer' })
  @Min(0, { message: 'offset must not be negative' })
  @Max(1_000_000, { message: 'offset must be at most 1000000' })
  offset?: number;

  @IsOptional()
  @IsString({ message: 'cursor must be a string' })
  @Matches(/^[1-9]\d{0,17}$/, { message: "cursor must be a previous page's next_cursor" })
  cursor?: string;
}

export class AdminAuditQueryDto extends InstanceAuditQueryDto {
  @IsOptional()
  @IsString({ message: 'instance must be a string' })
  @MaxLength(100, { message: 'instance must be at most 100 characters' })
  instance?: string;
}
