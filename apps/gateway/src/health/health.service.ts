import { Inject, Injectable } from '@nestjs/common';
import { Bus, InProcessBus } from '@gw/bus';
import { checkReadiness, type HealthReport, livenessReport } from '@gw/platform';
import { HealthRepository } from '@gw/persistence';
import { BUS } from '../runtime/tokens';

/** What the in-process bus is reported as: nothing to reach, it lives in this process. */
export const IN_PROCESS_BUS = 'in-process';

@Injectable()
export class HealthService {
  constructor(
    private readonly database: HealthRepository,
    @Inject(BUS) private readonly bus: Bus,
  ) {}

  /** Liveness: the process answers, and which build it runs. */
  liveness() {
    return livenessReport();
  }

  /**
   * Readiness: Postgres answers, and NATS when the gateway talks to the other services over it. The
   * embedded default's bus is in this process: there is no server to ping, and `/ready` says so
   * (`bus: in-process`) instead of claiming NATS was checked.
   */
  async readiness(): Promise<HealthReport> {
    const postgres = () => this.database.ping();
    if (this.bus instanceof InProcessBus) {
      const report = await checkReadiness({ postgres });
      return { ...report, checks: { ...report.checks, bus: IN_PROCESS_BUS } };
    }
    return checkReadiness({ postgres, nats: () => this.bus.ping() });
  }
}
