import { Controller, Get, Inject, Res } from '@nestjs/common';
import { Bus } from '@gw/bus';
import { checkReadiness } from '@gw/platform';
import type { FastifyReply } from 'fastify';
import type { DataSource } from 'typeorm';
import { BUS, DATA_SOURCE } from '../runtime/tokens';

@Controller()
export class HealthController {
  constructor(
    @Inject(DATA_SOURCE) private readonly dataSource: DataSource,
    @Inject(BUS) private readonly bus: Bus,
  ) {}

  /** Liveness: the process answers. */
  @Get('health')
  health() {
    return { status: 'ok' };
  }

  /** Readiness: Postgres and the bus (NATS, or the in-process one) reachable. */
  @Get('ready')
  async ready(@Res() reply: FastifyReply) {
    const report = await checkReadiness({
      postgres: async () => void (await this.dataSource.query('SELECT 1')),
      nats: () => this.bus.ping(),
    });
    void reply.status(report.status === 'ok' ? 200 : 503).send(report);
  }
}
