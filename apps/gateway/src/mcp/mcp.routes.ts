import { InstanceRepository } from '@gw/persistence';
import { buildInfo, type Logger } from '@gw/platform';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { OpenAPIObject } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AdminTokenService } from '../admin/admin-token.service';
import { API_ERRORS, ApiError } from '../common/api-error';
import { toApiError } from '../common/error.filter';
import { RateLimitService } from '../common/rate-limit.service';
import { API_AREAS } from '../openapi/api-areas';
import { LOGGER } from '../runtime/tokens';
import { McpAuthenticator } from './mcp-caller';
import { MCP_PATH } from '../common/mcp-path';
import { callTool } from './mcp-tool-call';
import { type McpAudience, type McpTool, buildMcpCatalogue } from './mcp-tools';

/** What an agent host shows the model about this server, per audience. */
const INSTRUCTIONS: Record<McpAudience, string> = {
  instance:
    "A WhatsApp gateway, acting for one WhatsApp instance (the token's): send messages, read them back (message_find), " +
    'manage chats, contacts, groups, labels, webhooks. Each tool is one route of the HTTP API; its errors are the route\'s `{"error": "..."}`.',
  admin:
    'A WhatsApp gateway, as its operator (the admin token): create, list and configure instances, the global webhook and sinks, ' +
    "restarts, token rotation, the audit log. An instance's own tools need that instance's token.",
};

/** Each audience's tools, with what `tools/list` answers of each (the tool less its audience, area and route). */
type Catalogue = Record<McpAudience, { tool: McpTool; listed: Tool }[]>;

/**
 * `POST /mcp`: the Model Context Protocol over streamable HTTP (the official SDK's transport), its tools
 * generated from the OpenAPI document (mcp-tools.ts) and called through the gateway's own HTTP pipeline
 * (mcp-tool-call.ts). Stateless (docs/adr/0028): every POST is answered whole, as JSON, by a server made
 * for it, so any replica answers any request and nothing is kept between requests; GET and DELETE (a
 * session's stream and end) are 405. A plain Fastify route, like /openapi.json: it is the API's other
 * door, not an operation of the document (nor a tool of itself). Its credentials are the routes' tokens
 * (mcp-caller.ts): an instance token lists and calls the instance's tools, the admin token the admin ones.
 */
export function serveMcp(app: NestFastifyApplication, document: () => OpenAPIObject): void {
  const fastify = app.getHttpAdapter().getInstance();
  const logger = app.get<symbol, Logger>(LOGGER);
  const authenticator = new McpAuthenticator(app.get(AdminTokenService), app.get(InstanceRepository), app.get(RateLimitService));
  // The server validates nothing on its own here (elicitation); one validator instead of one per request's server.
  const validator = new AjvJsonSchemaValidator();
  let catalogue: Catalogue | undefined;
  const tools = (): Catalogue => (catalogue ??= catalogueOf(document()));

  fastify.route({
    method: 'POST',
    url: MCP_PATH,
    // Malformed JSON, a body over the limit, a wrong token: the API's `{error}`, as on every route.
    errorHandler: (error, request, reply) => {
      const answer = toApiError(error, request);
      if (answer.status >= 500) logger.error({ err: error, requestId: request.id }, 'mcp request failed');
      return answerError(reply, answer);
    },
    handler: async (request, reply) => {
      const messages: unknown[] = Array.isArray(request.body) ? request.body : [request.body];
      const callsTools = messages.some((message) => (message as { method?: unknown } | null)?.method === 'tools/call');
      const caller = await authenticator.authenticate(request, reply, { charge: !callsTools });
      const areas = areasOf(request);
      // Another audience's tool, or one outside `?areas=`, is as unknown as a made-up name: an instance token never learns the admin tools.
      const available = tools()[caller.audience].filter(({ tool }) => !areas || areas.has(tool.area));
      const server = new Server(
        { name: 'wa-gateway', version: buildInfo().version },
        { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS[caller.audience], jsonSchemaValidator: validator },
      );
      server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: available.map(({ listed }) => listed) }));
      server.setRequestHandler(CallToolRequestSchema, (call) => {
        const tool = available.find((candidate) => candidate.tool.name === call.params.name)?.tool;
        if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${call.params.name}`);
        return callTool(fastify, request, caller, tool, call.params.arguments ?? {});
      });
      const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      try {
        await server.connect(transport);
        const response = await transport.handleRequest(webRequestOf(request), { parsedBody: request.body });
        void reply.status(response.status);
        response.headers.forEach((value, name) => void reply.header(name, value));
        return reply.send(await response.text());
      } finally {
        await server.close();
      }
    },
  });
  // Stateless: no session's event stream to open (GET), none to end (DELETE).
  fastify.route({
    method: ['GET', 'DELETE'],
    url: MCP_PATH,
    handler: (_request, reply) =>
      answerError(reply.header('allow', 'POST'), new ApiError('method_not_allowed', 'Method not allowed: this MCP server is stateless, send POST requests')),
  });
}

function catalogueOf(document: OpenAPIObject): Catalogue {
  const catalogue: Catalogue = { instance: [], admin: [] };
  for (const tool of buildMcpCatalogue(document).tools) {
    const { audience, area: _area, route: _route, ...listed } = tool;
    catalogue[audience].push({ tool, listed: listed as Tool });
  }
  return catalogue;
}

const AREAS_BY_NAME = new Map(Object.keys(API_AREAS).map((area) => [area.toLowerCase(), area]));

/**
 * `?areas=Send,Messages`: only the tools of these API areas (the document's tags, any case), for hosts
 * that cap the number of tools or the context an agent spends on their schemas. Absent: every area.
 */
function areasOf(request: FastifyRequest): Set<string> | undefined {
  const given = (request.query as Record<string, unknown> | undefined)?.areas;
  if (given === undefined) return undefined;
  const names = (Array.isArray(given) ? given : [given])
    .flatMap((value) => String(value).split(','))
    .map((name) => name.trim())
    .filter(Boolean);
  const areas = new Set<string>();
  for (const name of names) {
    const area = AREAS_BY_NAME.get(name.toLowerCase());
    if (!area) throw ApiError.badRequest(`Unknown area: ${name} (areas: ${Object.keys(API_AREAS).join(', ')})`);
    areas.add(area);
  }
  return areas;
}

/** The request as the SDK's web-standard transport reads it: method, URL and headers (the body is given parsed). */
function webRequestOf(request: FastifyRequest): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  return new Request(`http://${request.host || 'localhost'}${request.url}`, { method: request.method, headers });
}

function answerError(reply: FastifyReply, error: ApiError): FastifyReply {
  const retryAfter = (API_ERRORS[error.kind] as { retryAfterSeconds?: number }).retryAfterSeconds;
  if (retryAfter !== undefined) void reply.header('retry-after', String(retryAfter));
  return reply.status(error.status).header('content-type', 'application/json; charset=utf-8').send(error.body());
}
