import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { AuditRepository, type NewAuditEntry } from '@gw/persistence';
import type { Logger } from '@gw/platform';
import type { FastifyReply, FastifyRequest, onSendHookHandler } from 'fastify';
import { LOGGER } from '../runtime/tokens';
import { maskedChanges } from './audit-changes';

/** What AuditInterceptor learnt of an audited request, for the answer's hook to record. */
export interface AuditMark {
  action: string;
  actor: string;
  instanceId: string | null;
}

export type AuditedRequest = FastifyRequest & { audit?: AuditMark };

/**
 * Writes the audit log off the request path: the entry goes to the database as the answer is sent
 * (its status known), the request never waits for it. A failed write is logged with the entry, never
 * dropped silently. Reads of the log first wait for the writes still under way in this process, so a
 * client reads back the change it just made.
 */
@Injectable()
export class AuditRecorder implements OnApplicationShutdown {
  /** The last write: each waits for the one before, so ids (the log's order) follow the order of the answers. */
  private last: Promise<void> = Promise.resolve();

  constructor(
    private readonly audit: AuditRepository,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** A Fastify `onSend` hook: records the request AuditInterceptor marked, with the status it is answered. */
  readonly onSend: onSendHookHandler = (request, reply, payload, done) => {
    const mark = (request as AuditedRequest).audit;
    if (mark) this.record(entryOf(mark, request, reply));
    done(null, payload);
  };

  record(entry: NewAuditEntry): void {
    // One after another: two inserts on two pooled connections could take their ids in either order.
    this.last = this.last.then(() =>
      this.audit.insert(entry).catch((error: unknown) => {
        // The entry without its changes (masked already, but a log line is no place for a request's fields).
        const { changes: _changes, ...entryWithoutChanges } = entry;
        this.logger.error({ err: error, audit: entryWithoutChanges }, 'audit log write failed: this change is not in the audit log');
      }),
    );
  }

  /** Resolves once the writes started before this call are done. */
  async settled(): Promise<void> {
    await this.last;
  }

  /** The last answers' entries are written before the database is closed. */
  async onApplicationShutdown(): Promise<void> {
    await this.settled();
  }
}

function entryOf(mark: AuditMark, request: FastifyRequest, reply: FastifyReply): NewAuditEntry {
  return {
    actor: mark.actor,
    instanceId: mark.instanceId,
    address: request.ip ?? '',
    method: request.method,
    route: request.routeOptions.url ?? request.url.split('?')[0],
    action: mark.action,
    changes: maskedChanges(request.body),
    status: reply.statusCode,
  };
}
