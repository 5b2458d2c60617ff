import { Inject, Injectable } from '@nestjs/common';
import { Bus, InProcessBus } from '@gw/bus';
import { checkReadiness, livenessReport } from '@gw/platform';
import { HealthRepository } from '@gw/persistence';
import { BUS } from '../runtime/tokens';
import type { LivenessResponse, ReadinessResponse } from './dto/health.response';

/** What the in-process bus is reported as: nothing to reach, it lives in this process. */
export const IN_PROCESS_BUS = 'in-process';

/** The readiness report of a gateway that is stopping: it finishes what it has, takes nothing new. */
export const DRAINING: ReadinessResponse = { status: 'unavailable', checks: { shutdown: 'draining: finishing the requests in flight' } };

@Injectable()
export class HealthService {
  constructor(
    private readonly database: HealthRepository,
    @Inject(BUS) private readonly bus: Bus,
  ) {}

  private stopping = false;

  /** From now on `/ready` answers 503 (DRAINING), whatever Postgres and NATS say: the process is stopping. */
  startDraining(): void {
    this.stopping = true;
  }

  /** Since SIGTERM: every answer closes its connection (http-app.ts), so none is left idle for the close. */
  get draining(): boolean {
    return this.stopping;
  }

  /** Liveness: the process answers, and which build it runs. */
  liveness(): LivenessResponse {
    return livenessReport();
  }

  /**
   * Readiness: Postgres answers, and NATS when the gateway talks to the other services over it. The
   * embedded default's bus is in this process: there is no server to ping, and `/ready` says so
   * (`bus: in-process`) instead of claiming NATS was checked.
   */
  async readiness(): Promise<ReadinessResponse> {
    if (this.stopping) return DRAINING;
    const postgres = () => this.database.ping();
    if (this.bus instanceof InProcessBus) {
      const report = await checkReadiness({ postgres });
      return { ...report, checks: { ...report.checks, bus: IN_PROCESS_BUS } };
    }
    return checkReadiness({ postgres, nats: () => this.bus.ping() });
  }
}
