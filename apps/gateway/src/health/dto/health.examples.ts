/** Example bodies of `/health` and `/ready`. */
import type { LivenessResponse, ReadinessResponse } from './health.response';

export const LIVENESS_EXAMPLE: LivenessResponse = { status: 'ok', version: '0.1.0', commit: '7ca3580f1e2d' };

export const READINESS_EXAMPLE: ReadinessResponse = { status: 'ok', checks: { postgres: 'ok', bus: 'in-process' } };
