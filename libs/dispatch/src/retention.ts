import { type DynamicModule, Inject, Injectable, Module, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { FileRepository, MessageRepository, RetentionRepository } from '@gw/persistence';
import type { EnvReader, Logger } from '@gw/platform';

export interface RetentionConfig {
  /** Messages, their events and delivery logs older than this are purged (MESSAGE_RETENTION_DAYS, default 7). */
  retentionDays: number;
  /** How often the purge runs (RETENTION_INTERVAL_MS, default hourly). */
  intervalMs: number;
  /** Audit log entries older than this are purged (AUDIT_RETENTION_DAYS, default 90). */
  auditRetentionDays?: number;
  /**
   * Finished deliveries (the delivery log, GET /webhook/deliveries) and delivery errors older than this
   * are purged (DELIVERY_LOG_RETENTION_DAYS, default MESSAGE_RETENTION_DAYS). A replay needs the event
   * too, which the outbox keeps MESSAGE_RETENTION_DAYS.
   */
  deliveryLogRetentionDays?: number;
}

/**
 * A received message's plaintext that a socket kept when it closed (its receipt may not have reached
 * WhatsApp) is needed only if WhatsApp delivers that message again, which it does while the message is
 * undelivered, up to 30 days (its privacy policy: "If a message cannot be delivered immediately, we may
 * keep it on our servers for up to 30 days"). A day more, then the purge deletes it (ADR 0035).
 */
export const RECEIVED_PLAINTEXT_RETENTION_DAYS = 31;

export function readRetentionConfig(env: EnvReader): RetentionConfig {
  const retentionDays = env.integer('MESSAGE_RETENTION_DAYS', 7, { min: 1, max: 3650 });
  return {
    retentionDays,
    intervalMs: env.integer('RETENTION_INTERVAL_MS', 3_600_000, { min: 1_000, max: 86_400_000 }),
    auditRetentionDays: env.integer('AUDIT_RETENTION_DAYS', 90, { min: 1, max: 3650 }),
    deliveryLogRetentionDays: env.integer('DELIVERY_LOG_RETENTION_DAYS', retentionDays, { min: 1, max: 3650 }),
  };
}

/**
 * The scheduled purge: messages past the retention, expired files, the outbox rows that are done and
 * as old, and the delivery log (deliveries done, delivery errors) and the audit log past their own
 * retentions. Any number of dispatchers may run it; an advisory lock lets one at a time do the work.
 */
export class RetentionJob {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;

  constructor(
    private readonly retention: RetentionRepository,
    private readonly messages: MessageRepository,
    private readonly files: FileRepository,
    private readonly config: RetentionConfig,
    private readonly logger: Logger,
  ) {}

  start(): void {
    const tick = () => {
      this.running = this.runOnce()
        .then((removed) => {
          if (Object.values(removed).some((n) => n > 0)) this.logger.info({ removed }, 'retention purge');
        })
        .catch((error: unknown) => this.logger.error({ err: error }, 'retention purge failed'));
    };
    this.timer = setInterval(tick, this.config.intervalMs);
    this.timer.unref();
    tick();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** One purge; {} when another process is purging right now. */
  async runOnce(now = new Date()): Promise<Record<string, number>> {
    const cutoff = new Date(now.getTime() - this.config.retentionDays * 86_400_000);
    const auditCutoff = new Date(now.getTime() - (this.config.auditRetentionDays ?? 90) * 86_400_000);
    const deliveryLogCutoff = new Date(now.getTime() - (this.config.deliveryLogRetentionDays ?? this.config.retentionDays) * 86_400_000);
    const removed = await this.retention.whileLocked(async (purge) => ({
      messages: await this.messages.purgeOlderThan(cutoff),
      files: await this.files.purgeExpired(),
      deliveries: await purge.deliveries(deliveryLogCutoff),
      events: await purge.events(cutoff),
      errors: await purge.errors(deliveryLogCutoff),
      audit: await purge.audit(auditCutoff),
      plaintexts: await purge.plaintexts(new Date(now.getTime() - RECEIVED_PLAINTEXT_RETENTION_DAYS * 86_400_000)),
    }));
    return removed ?? {};
  }
}

const JOB = Symbol('RETENTION_JOB');

@Injectable()
class RetentionLifecycle implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(@Inject(JOB) private readonly job: RetentionJob) {}

  onApplicationBootstrap(): void {
    this.job.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.job.stop();
  }
}

@Module({})
export class RetentionModule {
  /** The repositories come from PersistenceModule (global), registered once by the process. */
  static register(options: { config: RetentionConfig; logger: Logger }): DynamicModule {
    return {
      module: RetentionModule,
      providers: [
        {
          provide: JOB,
          useFactory: (retention: RetentionRepository, messages: MessageRepository, files: FileRepository) =>
            new RetentionJob(retention, messages, files, options.config, options.logger.child({ component: 'retention' })),
          inject: [RetentionRepository, MessageRepository, FileRepository],
        },
        RetentionLifecycle,
      ],
    };
  }
}
