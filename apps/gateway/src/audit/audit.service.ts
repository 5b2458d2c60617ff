import { Injectable } from '@nestjs/common';
import { AuditRepository, type AuditRow } from '@gw/persistence';
import { ApiError } from '../common/api-error';
import { AuditRecorder } from './audit-recorder';
import { AUDIT_PAGE_DEFAULT, type AdminAuditQueryDto, type InstanceAuditQueryDto } from './dto/audit-query.dto';
import type { AuditEntryResponse, AuditPageResponse } from './dto/audit.response';

/** Reads the audit log: every entry for the admin, an instance's own for its token. */
@Injectable()
export class AuditService {
  constructor(
    private readonly audit: AuditRepository,
    private readonly recorder: AuditRecorder,
  ) {}

  async forAdmin(filter: AdminAuditQueryDto): Promise<AuditPageResponse> {
    return this.page(filter, filter.instance, false);
  }

  /**
   * Only the entries about `instanceId`: no filter reaches another instance's. The operator's changes to it
   * (creation, admin fields) are listed without the operator's address, which is not the tenant's to see.
   */
  async forInstance(instanceId: string, filter: InstanceAuditQueryDto): Promise<AuditPageResponse> {
    return this.page(filter, instanceId, true);
  }

  private async page(filter: InstanceAuditQueryDto, instanceId: string | undefined, forTenant: boolean): Promise<AuditPageResponse> {
    if (filter.from && filter.to && filter.from > filter.to) throw ApiError.badRequest('from must not be after to');
    const limit = filter.limit ?? AUDIT_PAGE_DEFAULT;
    const offset = filter.offset ?? 0;
    // This process's writes still under way (the change the client just made) are read back too.
    await this.recorder.settled();
    const { rows, total } = await this.audit.find({
      instanceId,
      action: filter.action,
      route: filter.route,
      from: filter.from,
      to: filter.to,
      before: filter.cursor,
      limit,
      offset,
    });
    return {
      entries: rows.map((row) => toView(row, forTenant && row.actor === 'admin')),
      pagination: { totalRecords: total, limit, offset },
      next_cursor: rows.length === limit ? rows[rows.length - 1].id : null,
    };
  }
}

function toView(row: AuditRow, hideAddress: boolean): AuditEntryResponse {
  return {
    id: row.id,
    at: row.at.toISOString(),
    actor: row.actor,
    instance_id: row.instanceId,
    address: hideAddress ? '' : row.address,
    method: row.method,
    route: row.route,
    action: row.action,
    changes: row.changes,
    status: row.status,
  };
}
