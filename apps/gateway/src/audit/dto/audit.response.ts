import { ApiProperty, ApiSchema } from '@nestjs/swagger';

/** One entry of the audit log, as `GET /admin/audit` and `GET /instance/audit` answer it. */
@ApiSchema({ name: 'AuditEntry', description: 'An admin or configuration change, as the audit log recorded it' })
export class AuditEntryResponse {
  @ApiProperty({ description: 'The entry id; entries are numbered in the order they were recorded', example: '1842' })
  id!: string;
  @ApiProperty({ format: 'date-time', description: 'When the change was answered' })
  at!: string;
  @ApiProperty({ description: 'Which token: the instance id for an instance token, `admin` for the admin token (never the token itself)' })
  actor!: string;
  @ApiProperty({
    type: 'string',
    nullable: true,
    description: 'The instance the change is about; null for a global change (global webhook or sink, restart, admin token)',
  })
  instance_id!: string | null;
  @ApiProperty({ description: "The client's IP address" })
  address!: string;
  @ApiProperty({ enum: ['POST', 'PUT', 'DELETE'], description: 'The HTTP method of the change' })
  method!: string;
  @ApiProperty({ description: 'The route, as its pattern (`/webhook`, `/instance/proxy`)' })
  route!: string;
  @ApiProperty({ description: 'What kind of change (`instance.create`, `webhook.configure`, `admin.token.rotate`…)' })
  action!: string;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'The request fields; tokens, passwords, API keys and URL credentials masked (`[masked]`)',
  })
  changes!: Record<string, unknown>;
  @ApiProperty({ type: 'integer', description: "The answer's HTTP status (4xx for a refused change)" })
  status!: number;
}

/** Where a page of the audit log sits. */
@ApiSchema({ name: 'AuditPagination', description: 'Where a page of the audit log sits' })
export class AuditPagination {
  @ApiProperty({ type: 'integer', description: 'How many entries match the filters, in all pages' })
  totalRecords!: number;
  @ApiProperty({ type: 'integer', description: 'The most entries a page holds' })
  limit!: number;
  @ApiProperty({ type: 'integer', description: 'How many matching entries come before this page' })
  offset!: number;
}

/** `GET /admin/audit`, `GET /instance/audit`: a page of the audit log, newest first. */
@ApiSchema({ name: 'AuditPage', description: 'A page of the audit log, newest first' })
export class AuditPageResponse {
  @ApiProperty({ type: () => AuditEntryResponse, isArray: true, description: 'The entries of this page, newest first' })
  entries!: AuditEntryResponse[];
  @ApiProperty({ type: () => AuditPagination, description: 'Where the page sits' })
  pagination!: AuditPagination;
  @ApiProperty({ type: 'string', nullable: true, description: 'Pass as `cursor` for the next, older page; null on the last page' })
  next_cursor!: string | null;
}
