import fastifyStatic from '@fastify/static';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { OpenAPIObject } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { withSecurityHeaders } from '../console/console.routes';
import { buildOpenApiDocument } from './openapi.document';

export const OPENAPI_JSON_PATH = '/openapi.json';
export const DOCS_PATH = '/docs';

/** The files of swagger-ui-dist the page loads; nothing else of the package is served (its demo index.html, say). */
const SWAGGER_UI_FILES = ['swagger-ui.css', 'index.css', 'swagger-ui-bundle.js', 'swagger-ui-standalone-preset.js', 'favicon-32x32.png', 'favicon-16x16.png'];

/**
 * The page, with no inline script or style (the console's CSP allows neither): its assets relative to
 * `base` (`./docs/` from /docs, `./` from /docs/), so it also works under a proxy's path prefix.
 */
const docsPage = (base: string) => `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="UTF-8">
  <title>wa-gateway API reference</title>
  <link rel="stylesheet" type="text/css" href="${base}swagger-ui.css">
  <link rel="stylesheet" type="text/css" href="${base}index.css">
  <link rel="icon" type="image/png" href="${base}favicon-32x32.png" sizes="32x32">
  <link rel="icon" type="image/png" href="${base}favicon-16x16.png" sizes="16x16">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="${base}swagger-ui-bundle.js" charset="UTF-8"></script>
  <script src="${base}docs-init.js" charset="UTF-8"></script>
</body>
</html>
`;

/** Starts Swagger UI on /openapi.json (found from the script's own URL, proxy prefix and all). No validator badge: nothing leaves this origin. */
const DOCS_INIT = `'use strict';
(function () {
  var documentUrl = new URL('../openapi.json', document.currentScript.src).href;
  window.addEventListener('load', function () {
    window.ui = SwaggerUIBundle({
      url: documentUrl,
      dom_id: '#swagger-ui',
      presets: [SwaggerUIBundle.presets.apis],
      layout: 'BaseLayout',
      docExpansion: 'none',
      tagsSorter: 'alpha',
      persistAuthorization: false,
      validatorUrl: null,
    });
  });
})();
`;

/**
 * `GET /openapi.json` (the document) and `GET /docs` (Swagger UI, its assets served from the
 * swagger-ui-dist package, no CDN). Both are Fastify routes outside Nest's router, so no guard or
 * filter runs for them and they need no token. The document is built on the first request for either
 * and kept, with its JSON text: requests to the API never pay for it. The page and its assets carry the
 * console's security headers (CSP, nosniff, no framing). Call before the app listens.
 */
export function serveApiDocs(app: NestFastifyApplication): { document: () => OpenAPIObject } {
  let document: OpenAPIObject | undefined;
  let json: string | undefined;
  const getDocument = () => (document ??= buildOpenApiDocument(app));
  const fastify = app.getHttpAdapter().getInstance();
  fastify.get(OPENAPI_JSON_PATH, (_request, reply) => {
    json ??= JSON.stringify(getDocument());
    void reply.header('content-type', 'application/json; charset=utf-8').send(json);
  });
  const page = (base: string) => (_request: unknown, reply: FastifyReply) =>
    void withSecurityHeaders(reply).header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-cache').send(docsPage(base));
  fastify.get(DOCS_PATH, page(`.${DOCS_PATH}/`));
  fastify.get(`${DOCS_PATH}/`, page('./'));
  fastify.get(
    `${DOCS_PATH}/docs-init.js`,
    (_request, reply) =>
      void withSecurityHeaders(reply).header('content-type', 'application/javascript; charset=utf-8').header('cache-control', 'no-cache').send(DOCS_INIT),
  );
  void fastify.register(fastifyStatic, {
    // Through getBuiltinModule: webpack rewrites an imported createRequire(__filename) to undefined(…)
    // where ES imports reach it (bench/tsconfig.json's module: preserve), and every bench failed at startup.
    root: process.getBuiltinModule('node:module').createRequire(__filename)('swagger-ui-dist/absolute-path.js')() as string,
    prefix: `${DOCS_PATH}/`,
    decorateReply: false,
    index: false,
    allowedPath: (pathName) => SWAGGER_UI_FILES.includes(pathName.replace(/^\//, '')),
    setHeaders: (reply) => void withSecurityHeaders(reply),
  });
  return { document: getDocument };
}
