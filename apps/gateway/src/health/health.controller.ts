import { Controller, Get, HttpStatus, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ApiReply } from '../openapi/api-reply.decorator';
import { LIVENESS_EXAMPLE, READINESS_EXAMPLE } from './dto/health.examples';
import { LivenessResponse, ReadinessResponse } from './dto/health.response';
import { HealthService } from './health.service';
import { ApiArea } from '../openapi/api-areas';
import { ApiOperation } from '@nestjs/swagger';

@ApiArea('Service')
@Controller()
export class HealthController {
  constructor(private readonly service: HealthService) {}

  /** Liveness: the process answers, with its version (package version and git commit). */
  @Get('health')
  @ApiReply(LivenessResponse, { example: LIVENESS_EXAMPLE, errors: [] })
  @ApiOperation({ summary: 'Liveness', description: 'Answers as soon as the process runs, with its version (package version and git commit). No token.' })
  health(): LivenessResponse {
    return this.service.liveness();
  }

  /** Readiness: Postgres, and NATS unless the bus is the in-process one (503 when a check fails). */
  @Get('ready')
  @ApiReply(ReadinessResponse, {
    description: 'Ready: every check passed',
    otherStatuses: { 503: 'Not ready: a check failed, or the gateway is stopping (SIGTERM); `checks` says which' },
    example: READINESS_EXAMPLE,
    errors: [],
  })
  @ApiOperation({ summary: 'Readiness', description: 'Checks Postgres and, unless the bus is the in-process one, NATS; 503 when a check fails. No token.' })
  async ready(@Res({ passthrough: true }) reply: FastifyReply): Promise<ReadinessResponse> {
    const report = await this.service.readiness();
    void reply.status(report.status === 'ok' ? HttpStatus.OK : HttpStatus.SERVICE_UNAVAILABLE);
    return report;
  }
}
