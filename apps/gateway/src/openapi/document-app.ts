import type { Database } from '@gw/persistence';
import type { Bus } from '@gw/bus';
import { createLogger } from '@gw/platform';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { OpenAPIObject } from '@nestjs/swagger';
import { GatewayModule } from '../app.module';
import type { GatewayConfig } from '../runtime/gateway-config';
import { buildOpenApiDocument } from './openapi.document';

/**
 * The gateway's OpenAPI document without Postgres or NATS: the module graph in Nest's preview mode,
 * where no provider or controller is instantiated, so the runtime's pieces are never touched.
 */
export async function buildDocumentWithoutServices(): Promise<OpenAPIObject> {
  const runtime = {
    config: {} as GatewayConfig,
    dataSource: {} as Database,
    bus: {} as Bus,
    logger: createLogger('openapi', 'silent'),
  };
  const app = await NestFactory.create<NestFastifyApplication>(GatewayModule.register(runtime), new FastifyAdapter(), {
    preview: true,
    logger: false,
    abortOnError: false,
  });
  try {
    return buildOpenApiDocument(app);
  } finally {
    await app.close();
  }
}
