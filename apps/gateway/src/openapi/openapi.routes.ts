import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { buildOpenApiDocument } from './openapi.document';

export const OPENAPI_JSON_PATH = '/openapi.json';
export const DOCS_PATH = '/docs';

/**
 * `GET /openapi.json` (the document) and `GET /docs` (Swagger UI, its assets served from the
 * swagger-ui-dist package, no CDN). Both are Fastify routes outside Nest's router, so no guard or
 * filter runs for them and they need no token. The document is built on the first request for either
 * and kept, with its JSON text: requests to the API never pay for it. Call before the app listens.
 */
export function serveApiDocs(app: NestFastifyApplication): { document: () => OpenAPIObject } {
  let document: OpenAPIObject | undefined;
  let json: string | undefined;
  const getDocument = () => (document ??= buildOpenApiDocument(app));
  app
    .getHttpAdapter()
    .getInstance()
    .get(OPENAPI_JSON_PATH, (_request, reply) => {
      json ??= JSON.stringify(getDocument());
      void reply.header('content-type', 'application/json; charset=utf-8').send(json);
    });
  SwaggerModule.setup(DOCS_PATH, app, getDocument, {
    raw: false,
    customSiteTitle: 'wa-gateway API reference',
    swaggerOptions: { docExpansion: 'none', tagsSorter: 'alpha', persistAuthorization: false },
  });
  return { document: getDocument };
}
