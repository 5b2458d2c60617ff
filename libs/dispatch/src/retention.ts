import { type DynamicModule, Inject, Injectable, Module, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { FileRepository, MessageRepository } from '@gw/persistence';
import type { EnvReader, Logger } from '@gw/platform';
import type { DataSource } from 'typeorm';

export interface RetentionConfig {
  /** Messages, their events and delivery logs older than this are purged (MESSAGE_RETENTION_DAYS, default 7). */
  retentionDays: number;
  /** How often the purge runs (RETENTION_INTERVAL_MS, default hourly). */
  intervalMs: number;
}

export function readRetentionConfig(env: EnvReader): RetentionConfig {
  return {
    retentionDays: env.integer('MESSAGE_RETENTION_DAYS', 7, { min: 1, max: 3650 }),
    intervalMs: env.integer('RETENTION_INTERVAL_MS', 3_600_000, { min: 1_000, max: 86_400_000 }),
  };
}

const LOCK = 727_002;

/**
 * The scheduled purge: messages past the retention, expired files, and the outbox rows, deliveries and
 * delivery errors that are done and as old. Any number of dispatchers may run it; an advisory lock lets
 * one at a time do the work.
 */
export class RetentionJob {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;

  constructor(
    private readonly dataSource: DataSource,
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

  async runOnce(now = new Date()): Promise<Record<string, number>> {
    const runner = this.dataSource.createQueryRunner();
    await runner.connect();
    try {
      const [{ locked }]: Array<{ locked: boolean }> = await runner.query(`SELECT pg_try_advisory_lock($1) AS locked`, [LOCK]);
      if (!locked) return {};
      try {
        const cutoff = new Date(now.getTime() - this.config.retentionDays * 86_400_000);
        const count = async (sql: string) => Number((await runner.query(sql, [cutoff]))[0].n);
        return {
          messages: await new MessageRepository(this.dataSource).purgeOlderThan(cutoff),
          files: await new FileRepository(this.dataSource).purgeExpired(),
          deliveries: await count(
            `WITH gone AS (DELETE FROM webhook_deliveries WHERE status <> 'pending' AND created_at < $1 RETURNING 1) SELECT count(*) AS n FROM gone`,
          ),
          // An event is kept while a delivery of it is still pending.
          events: await count(
            `WITH gone AS (DELETE FROM outbox_events o WHERE o.dispatched_at IS NOT NULL AND o.created_at < $1
               AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = o.id AND d.status = 'pending') RETURNING 1)
             SELECT count(*) AS n FROM gone`,
          ),
          errors: await count(`WITH gone AS (DELETE FROM webhook_errors WHERE created < $1 RETURNING 1) SELECT count(*) AS n FROM gone`),
        };
      } finally {
        await runner.query(`SELECT pg_advisory_unlock($1)`, [LOCK]);
      }
    } finally {
      await runner.release();
    }
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
  static register(options: { dataSource: DataSource; config: RetentionConfig; logger: Logger }): DynamicModule {
    return {
      module: RetentionModule,
      providers: [
        { provide: JOB, useFactory: () => new RetentionJob(options.dataSource, options.config, options.logger.child({ component: 'retention' })) },
        RetentionLifecycle,
      ],
    };
  }
}
