import { Controller, Get, Query, UseGuards } from '@nestjs/common';

import { ApiOperation, ApiQuery } from '@nestjs/swagger';
import { AdminGuard, CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { ApiArea } from '../openapi/api-areas';
import { ApiReply } from '../openapi/api-reply.decorator';
import { AuditService } from './audit.service';
import { AUDIT_PAGE_DEFAULT, AUDIT_PAGE_MAX, AdminAuditQueryDto, InstanceAuditQueryDto } from './dto/audit-query.dto';
import { AUDIT_PAGE_EXAMPLE } from './dto/audit.examples';
import { AuditPageResponse } from './dto/audit.response';
import type { RequestInstance } from '../common/request-instance';

/** The filters both routes take; `@ApiQuery` per parameter, each described. */
function AuditFilters(): MethodDecorator {
  const decorators = [
    ApiQuery({
      name: 'action',
      required: false,
      description: 'Only this action (`instance.create`, `webhook.configure`, `chatwoot.configure`…)',
      schema: { type: 'string', maxLength: 100 },
    }),
    ApiQuery({
      name: 'route',
      required: false,
      description: 'Only this route, as its pattern (`/webhook`, `/instance/proxy`)',
      schema: { type: 'string', maxLength: 200 },
    }),
    ApiQuery({
      name: 'from',
      required: false,
      description: 'Only entries at or after this time: ISO 8601 date-time or Unix milliseconds',
      schema: { type: 'string' },
    }),
    ApiQuery({
      name: 'to',
      required: false,
      description: 'Only entries at or before this time: ISO 8601 date-time or Unix milliseconds',
      schema: { type: 'string' },
    }),
    ApiQuery({
      name: 'limit',
      required: false,
      description: `Entries per page (default ${AUDIT_PAGE_DEFAULT}, at most ${AUDIT_PAGE_MAX})`,
      schema: { type: 'integer', minimum: 1, maximum: AUDIT_PAGE_MAX },
    }),
    ApiQuery({ name: 'offset', required: false, description: 'Entries to skip (default 0)', schema: { type: 'integer', minimum: 0 } }),
    ApiQuery({
      name: 'cursor',
      required: false,
      description: "The previous page's `next_cursor`: the entries older than its last one (steadier than `offset` while entries are added)",
      schema: { type: 'string', pattern: '^[1-9][0-9]*$' },
    }),
  ];
  return (target, key, descriptor) => {
    for (const decorate of decorators) decorate(target, key, descriptor);
  };
}

@ApiArea('Admin')
@Controller('admin/audit')
@UseGuards(AdminGuard)
export class AdminAuditController {
  constructor(private readonly audit: AuditService) {}

  @Get()
  @AuditFilters()
  @ApiQuery({
    name: 'instance',
    required: false,
    description: 'Only the entries about this instance (its id); global changes have none',
    schema: { type: 'string' },
  })
  @ApiReply(AuditPageResponse, { example: AUDIT_PAGE_EXAMPLE, errors: ['invalid_request', 'invalid_admin_token', 'rate_limited', 'internal'] })
  @ApiOperation({
    summary: 'Read the audit log',
    description:
      'Every admin and configuration change, newest first: when (`at`), which token (`actor`: the instance id for an instance token, `admin` for the admin token; never its value), from which address, the route and its `action`, the request fields (`changes`, tokens, passwords, API keys and URL credentials masked) and the answer `status` (a refused change is recorded too). Filter by `instance`, `action`, `route` and time; page with `limit`/`offset` or `cursor`. Entries are kept AUDIT_RETENTION_DAYS days (default 90). Not in uazapiGO.',
  })
  list(@Query() query: AdminAuditQueryDto): Promise<AuditPageResponse> {
    return this.audit.forAdmin(query);
  }
}

@ApiArea('Instance')
@Controller('instance/audit')
@UseGuards(InstanceGuard)
export class InstanceAuditController {
  constructor(private readonly audit: AuditService) {}

  @Get()
  @AuditFilters()
  @ApiReply(AuditPageResponse, { example: AUDIT_PAGE_EXAMPLE, errors: ['invalid_request', 'invalid_token', 'rate_limited', 'internal'] })
  @ApiOperation({
    summary: "Read the instance's audit log",
    description:
      "The configuration changes of this instance, newest first (its webhook, sinks, proxy, privacy, chatbot, Chatwoot, delays, name, and the admin's changes to it): when, which token (`actor`), from which address, the route and `action`, the request fields with their secrets masked, and the answer `status`. Never another instance's. Filters and paging as `GET /admin/audit`. Not in uazapiGO.",
  })
  list(@CurrentInstance() instance: RequestInstance, @Query() query: InstanceAuditQueryDto): Promise<AuditPageResponse> {
    return this.audit.forInstance(instance.id, query);
  }
}
