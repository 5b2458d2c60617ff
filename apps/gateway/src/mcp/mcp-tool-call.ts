import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../common/api-error';
import type { McpCaller } from './mcp-caller';
import type { McpTool } from './mcp-tools';

const CREDENTIALS = ['token', 'admintoken'];

/** The route's request for a tool's arguments: path and query from the parameters, the rest as the JSON body. */
export interface ToolRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: Record<string, unknown>;
}

/**
 * Where each argument goes: a path parameter into the path, a query parameter into the query, a header
 * parameter into the headers, every other one into the JSON body (into the query for a route without
 * one), unchecked: the route validates them as it validates any client's. A missing path parameter is
 * the route's 400, not a request to another path.
 */
export function toolRequest(tool: McpTool, args: Record<string, unknown>): ToolRequest | ApiError {
  const { route } = tool;
  const rest: Record<string, unknown> = { ...args };
  let path = route.path;
  for (const name of route.pathParameters) {
    const value = rest[name];
    delete rest[name];
    if (value === undefined || value === null || value === '') return ApiError.badRequest(`${name} is required`);
    if (typeof value === 'object') return ApiError.badRequest(`${name} must be a string`);
    path = path.replace(`{${name}}`, encodeURIComponent(String(value)));
  }
  const query = new URLSearchParams();
  const headers: Record<string, string> = {};
  const put = (name: string, value: unknown, into: (text: string) => void) => {
    delete rest[name];
    if (value === undefined || value === null) return;
    for (const item of Array.isArray(value) ? value : [value]) into(typeof item === 'object' ? JSON.stringify(item) : String(item));
  };
  for (const name of route.queryParameters) put(name, rest[name], (text) => query.append(name, text));
  for (const name of route.headerParameters) put(name, rest[name], (text) => (headers[name.toLowerCase()] = text));
  // Never a credential: the caller's own token is the request's, in the header that wins over the query.
  for (const name of CREDENTIALS) delete rest[name];
  if (!route.hasBody) for (const [name, value] of Object.entries(rest)) put(name, value, (text) => query.append(name, text));
  const search = query.toString();
  return { method: route.method, url: search ? `${path}?${search}` : path, headers, ...(route.hasBody ? { body: rest } : {}) };
}

/**
 * Calls a tool's route through the gateway's own HTTP pipeline (Fastify's `inject`: no socket), with
 * the caller's token in the header the route's guard reads: the same hooks, guard, rate limit,
 * validation, audit and error bodies as any client's request, nothing implemented twice. The answer,
 * whatever its status, is the tool's result as the route's JSON text; a status of 400 or more is a tool
 * error (`isError`), so the agent reads the route's `{error}`.
 */
export async function callTool(
  fastify: FastifyInstance,
  origin: FastifyRequest,
  caller: McpCaller,
  tool: McpTool,
  args: Record<string, unknown>,
): Promise<CallToolResult> {
  const request = toolRequest(tool, args);
  if (request instanceof ApiError) return { content: [{ type: 'text', text: JSON.stringify(request.body()) }], isError: true };
  const headers: Record<string, string> = {
    // The /mcp request's id, so its access line and the route's share it (unless the tool takes its own).
    'x-request-id': origin.id,
    ...request.headers,
    [caller.audience === 'admin' ? 'admintoken' : 'token']: caller.token,
  };
  const userAgent = origin.headers['user-agent'];
  if (userAgent) headers['user-agent'] = userAgent;
  if (request.body) headers['content-type'] = 'application/json';
  const response = await fastify.inject({
    method: request.method as 'GET',
    url: request.url,
    headers,
    ...(request.body ? { payload: JSON.stringify(request.body) } : {}),
    // The caller's address: the per-address limit and the audit log's `address` are the client's, not loopback's.
    remoteAddress: origin.ip,
  });
  return { content: [{ type: 'text', text: response.body }], isError: response.statusCode >= 400 };
}
