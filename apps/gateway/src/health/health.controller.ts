import { Controller, Get, HttpStatus, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ApiReply } from '../openapi/api-reply.decorator';
import { SCHEMAS } from '../openapi/schemas';
import { HealthService } from './health.service';
import { ApiArea } from '../openapi/api-areas';
import { ApiOperation } from '@nestjs/swagger';

@ApiArea('Service')
@Controller()
export class HealthController {
  constructor(private readonly service: HealthService) {}

  /** Liveness: the process answers, with its version (package version and git commit). */
  @Get('health')
  @ApiReply(SCHEMAS.Liveness, { example: { status: 'ok', version: '0.1.0', commit: '7ca3580f1e2d' }, errors: [] })
  @ApiOperation({ summary: 'Liveness', description: 'Answers as soon as the process runs, with its version (package version and git commit). No token.' })
  health() {
    return this.service.liveness();
  }

  /** Readiness: Postgres, and NATS unless the bus is the in-process one (503 when a check fails). */
  @Get('ready')
  @ApiReply(SCHEMAS.Readiness, {
    description: 'Ready (503 with the same shape, naming the failed check, when not)',
    example: { status: 'ok', checks: { postgres: 'ok', bus: 'in-process' } },
    errors: [],
  })
  @ApiOperation({ summary: 'Readiness', description: 'Checks Postgres and, unless the bus is the in-process one, NATS; 503 when a check fails. No token.' })
  ready(@Res() reply: FastifyReply) {
    return this.service.readiness().then((report) => reply.status(report.status === 'ok' ? HttpStatus.OK : HttpStatus.SERVICE_UNAVAILABLE).send(report));
  }
}
