import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';

import { type Observable, tap } from 'rxjs';
import type { AuditedRequest } from './audit-recorder';
import type { AuditedMetadata } from './audited.decorator';
import type { RequestInstance } from '../common/request-instance';

/** The metadata key `@Audited` sets on a handler. */
export const AUDITED = 'gw:audited';

/**
 * Marks a request of an `@Audited` route for AuditRecorder's hook, which records it when it is answered
 * (a refused one too: a 400 is an attempted change). Runs after the guards, so the token is known: an
 * instance's (the instance it authenticated) or else the admin's. Requests a guard refused are not marked.
 */
@Injectable()
export class AuditInterceptor implements NestInterceptor {
  constructor(private readonly reflector: Reflector) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const metadata = this.reflector.get<AuditedMetadata | undefined>(AUDITED, context.getHandler());
    if (!metadata) return next.handle();
    const request = context.switchToHttp().getRequest<AuditedRequest & { instance?: RequestInstance }>();
    const body = request.body && typeof request.body === 'object' ? (request.body as Record<string, unknown>) : {};
    const instance = request.instance;
    const mark = {
      action: metadata.action,
      actor: instance ? instance.id : 'admin',
      instanceId: instance ? instance.id : (safely(() => metadata.target?.(body, undefined)) ?? null),
    };
    request.audit = mark;
    if (instance || !metadata.target) return next.handle();
    return next.handle().pipe(
      tap((result) => {
        mark.instanceId = safely(() => metadata.target?.(body, result)) ?? mark.instanceId;
      }),
    );
  }
}

function safely(read: () => string | null | undefined): string | null {
  try {
    const value = read();
    return typeof value === 'string' && value ? value : null;
  } catch {
    return null;
  }
}
