import { ApiProperty, ApiSchema } from '@nestjs/swagger';

/** `GET /health`: the process answers, and which build it runs. */
@ApiSchema({ name: 'Liveness', description: 'The process answers, with its version' })
export class LivenessResponse {
  @ApiProperty({ enum: ['ok'], description: 'Always `ok`: the process answers' })
  status!: 'ok';
  @ApiProperty({ description: "The gateway's package version", example: '0.1.0' })
  version!: string;
  @ApiProperty({ description: 'The git commit it was built from (`unknown` when not known)', example: '7ca3580f1e2d' })
  commit!: string;
}

/** `GET /ready`: each check by name, `ok` or why it failed; the in-process bus is named as such (`bus: in-process`), not checked. */
@ApiSchema({ name: 'Readiness', description: 'Whether the gateway takes requests, check by check' })
export class ReadinessResponse {
  @ApiProperty({ enum: ['ok', 'unavailable'], description: '`ok` when every check passed (200), else `unavailable` (503)' })
  status!: 'ok' | 'unavailable';
  @ApiProperty({
    type: 'object',
    properties: {
      postgres: { type: 'string', description: 'Postgres answers (`ok`) or why not (`failed: <reason>`)' },
      nats: { type: 'string', description: 'NATS answers (`ok`) or why not (absent with the in-process bus)' },
      bus: { type: 'string', enum: ['in-process'], description: 'The bus lives in this process: nothing to check' },
    },
    additionalProperties: { type: 'string' },
    description: 'Each check by name: `ok`, or why it failed; a stopping gateway answers `shutdown` instead',
  })
  checks!: Record<string, string>;
}
