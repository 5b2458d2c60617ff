import { applyDecorators, SetMetadata, UseInterceptors } from '@nestjs/common';
import { AUDITED, AuditInterceptor } from './audit.interceptor';

export interface AuditedOptions {
  /**
   * The instance an admin route changes, from its request body or its answer (`instance.create`: the
   * new instance). An instance token's routes are about its own instance; other admin routes are global.
   */
  target?: (body: Record<string, unknown>, result: unknown) => string | null | undefined;
}

export interface AuditedMetadata extends AuditedOptions {
  action: string;
}

/**
 * Records every call of the route in the audit log under `action` (`instance.create`, `webhook.configure`):
 * who (the instance's id or `admin`), from where, the masked request fields and the answer's status.
 * A route opts in with this one line; `grep -r "@Audited("` lists every audited route.
 */
export function Audited(action: string, options: AuditedOptions = {}): MethodDecorator {
  return applyDecorators(SetMetadata(AUDITED, { action, ...options } satisfies AuditedMetadata), UseInterceptors(AuditInterceptor));
}
