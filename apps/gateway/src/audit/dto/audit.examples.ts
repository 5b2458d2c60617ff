/** Example bodies of `GET /admin/audit` and `GET /instance/audit`. */
import { AUDIT_PAGE_DEFAULT } from './audit-query.dto';
import type { AuditEntryResponse, AuditPageResponse } from './audit.response';

const ENTRY_EXAMPLE: AuditEntryResponse = {
  id: '1842',
  at: '2026-01-01T12:00:00.000Z',
  actor: 'r183e2ef9597845',
  instance_id: 'r183e2ef9597845',
  address: '203.0.113.7',
  method: 'POST',
  route: '/webhook',
  action: 'webhook.configure',
  changes: { url: 'https://example.com/hook?token=[masked]', events: ['messages'], enabled: true },
  status: 200,
};

export const AUDIT_PAGE_EXAMPLE: AuditPageResponse = {
  entries: [ENTRY_EXAMPLE],
  pagination: { totalRecords: 1, limit: AUDIT_PAGE_DEFAULT, offset: 0 },
  next_cursor: null,
};
