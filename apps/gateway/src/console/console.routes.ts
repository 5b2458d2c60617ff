import fastifyStatic from '@fastify/static';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Logger } from '@gw/platform';
import type { FastifyReply } from 'fastify';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const CONSOLE_PATH = '/manager';

/**
 * What the console's pages may load: only this origin (scripts, styles, the API, /sse), plus images
 * from data: URLs (the QR code) and https (WhatsApp's profile pictures). No inline script or style.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: https:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

/**
 * Where the console's build is: CONSOLE_DIR, else beside the gateway's bundle (dist/apps/manager next to
 * dist/apps/gateway), else dist/apps/manager under the working directory. Undefined when none holds an index.html.
 */
export function findConsoleDir(configured: string | undefined, bundleDir: string = __dirname, cwd = process.cwd()): string | undefined {
  const candidates = configured ? [configured] : [join(bundleDir, '..', 'manager'), join(cwd, 'dist', 'apps', 'manager')];
  return candidates.map((dir) => resolve(dir)).find((dir) => existsSync(join(dir, 'index.html')));
}

/** The console's security headers (CSP, nosniff, no referrer, no framing), also on /docs. */
export function withSecurityHeaders(reply: FastifyReply): FastifyReply {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) void reply.header(name, value);
  return reply;
}

/**
 * The operator console (apps/manager, a Preact single-page app built by Vite) at /manager: its hashed
 * assets with @fastify/static (cached for good), every other /manager path answered with its index.html
 * (never cached, so a new build is picked up at once). `/` and `/dashboard` lead there. Plain Fastify
 * routes, like /openapi.json: no token is needed to load the page; the page asks for one and calls the
 * API with it. Call before the app listens.
 */
export async function serveConsole(app: NestFastifyApplication, options: { dir?: string; logger: Logger }): Promise<void> {
  const fastify = app.getHttpAdapter().getInstance();
  const dir = findConsoleDir(options.dir);
  const redirect = (_request: unknown, reply: FastifyReply) => void reply.redirect(`${CONSOLE_PATH}/`, 302);
  fastify.get('/', redirect);
  fastify.get('/dashboard', redirect);
  fastify.get(CONSOLE_PATH, redirect);

  if (!dir) {
    if (options.dir) options.logger.warn({ consoleDir: options.dir }, 'CONSOLE_DIR holds no index.html: /manager answers 503');
    const missing = (_request: unknown, reply: FastifyReply) =>
      void withSecurityHeaders(reply)
        .status(503)
        .header('content-type', 'text/plain; charset=utf-8')
        .header('cache-control', 'no-store')
        .send('The console is not built: run `npm run build` (or `npx nx run manager:build`), or set CONSOLE_DIR to its build.\n');
    fastify.get(`${CONSOLE_PATH}/`, missing);
    fastify.get(`${CONSOLE_PATH}/*`, missing);
    return;
  }

  const index = readFileSync(join(dir, 'index.html'));
  const page = (_request: unknown, reply: FastifyReply) =>
    void withSecurityHeaders(reply).header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-cache').send(index);
  // Hashed file names: a new build has new names, so the browser may keep these for good. Not awaited: awaiting
  // a plugin builds every route declared so far at once, before Nest sets its error handler, and those routes
  // (/metrics, /openapi.json…) then answered an onRequest hook's refusal with Fastify's own error body.
  void fastify.register(fastifyStatic, {
    root: join(dir, 'assets'),
    prefix: `${CONSOLE_PATH}/assets/`,
    decorateReply: false,
    index: false,
    dotfiles: 'deny',
    immutable: true,
    maxAge: '365d',
    setHeaders: (reply) => void withSecurityHeaders(reply),
  });
  // The single-page app's own paths (and a reload on any of them) get the page.
  fastify.get(`${CONSOLE_PATH}/`, page);
  fastify.get(`${CONSOLE_PATH}/*`, page);
}
