import type { OpenAPIObject, OperationObject, ParameterObject, SchemaObject } from '@nestjs/swagger';
import { SECURITY_SCHEMES } from '../openapi/openapi.document';

/** Who may list and call a tool: the token its route's guard takes. */
export type McpAudience = 'instance' | 'admin';

/** How a tool's arguments become its route's request. */
export interface McpRoute {
  method: string;
  /** The path template as the document has it (`/group/invitelink/{groupJid}`). */
  path: string;
  /** Arguments put in the path, in the template's order. */
  pathParameters: string[];
  /** Arguments sent as query parameters. */
  queryParameters: string[];
  /** Arguments sent as request headers (`x-request-id`). */
  headerParameters: string[];
  /** Whether the route takes a JSON body: then every other argument is a body field. */
  hasBody: boolean;
}

/** One MCP tool: the fields `tools/list` answers, plus who sees it and the route it calls. */
export interface McpTool {
  name: string;
  title: string;
  description: string;
  inputSchema: { type: 'object'; properties: Record<string, unknown>; required?: string[]; $defs?: Record<string, unknown> };
  annotations: { title: string; readOnlyHint?: boolean; destructiveHint?: boolean; idempotentHint?: boolean };
  audience: McpAudience;
  /** The operation's area (its tag, one of API_AREAS): `?areas=` on /mcp keeps a host's list to some. */
  area: string;
  route: McpRoute;
}

/**
 * The operations of /openapi.json that are not tools, each with its reason (docs/mcp.md lists them).
 * A tool's result is its route's JSON answer as text: a stream or bytes cannot be one, and a route
 * without a token has no caller to act for.
 */
export const EXCLUDED_OPERATIONS: Readonly<Record<string, string>> = {
  'GET /sse': 'a server-sent event stream that never ends: a tool call needs one answer (read events with a webhook, or /sse itself)',
  'GET /files/{id}': "a stored file's bytes (or a redirect to them), not JSON; and public: the id is the capability, no token is checked",
  'GET /health': 'public (no token): a liveness probe for the orchestrator, not an action on an instance',
  'GET /ready': 'public (no token): a readiness probe for the orchestrator, not an action on an instance',
  'POST /chatwoot/webhook/{instance}/{secret}': "public (no token): the callback Chatwoot calls with the instance's secret in the path, not an agent's action",
  'POST /instance/export':
    "its answer is the session's credentials (sealed by a passphrase the agent would also hold) and it wipes them here: a move between servers is an operator's act, never an agent's, and the bundle must not pass through a model's context",
  'POST /instance/import': "takes such a bundle and its passphrase: the other half of a move between servers, an operator's act (see POST /instance/export)",
};

/** Parameters no tool takes: the credentials are the MCP request's own, never an argument. */
const CREDENTIAL_PARAMETERS = new Set(['token', 'admintoken', 'authorization']);

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
const COMPONENT_REF = '#/components/schemas/';

/** The document's tools, and the operations that can be none yet are not in EXCLUDED_OPERATIONS (a test keeps this empty). */
export interface McpCatalogue {
  tools: McpTool[];
  unfit: { operation: string; reason: string }[];
}

/**
 * One tool per operation of the OpenAPI document, generated (nothing about a route is written twice):
 * its name from the route (see `toolName`), its description from the summary and description, its
 * input schema from the request body's schema (the DTO's class-validator rules) with the path, query
 * and header parameters beside the body's fields, and its audience from the operation's security scheme.
 */
export function buildMcpCatalogue(document: OpenAPIObject): McpCatalogue {
  const tools: McpTool[] = [];
  const unfit: McpCatalogue['unfit'] = [];
  const schemas = (document.components?.schemas ?? {}) as Record<string, SchemaObject>;
  const methodsOfPath = new Map<string, number>();
  for (const [path, item] of Object.entries(document.paths))
    methodsOfPath.set(path, HTTP_METHODS.filter((method) => (item as Record<string, unknown>)[method]).length);
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of HTTP_METHODS) {
      const operation = (item as Record<string, OperationObject | undefined>)[method];
      if (!operation) continue;
      const key = `${method.toUpperCase()} ${path}`;
      if (EXCLUDED_OPERATIONS[key]) continue;
      const reason = unfitReason(operation);
      if (reason) {
        unfit.push({ operation: key, reason });
        continue;
      }
      tools.push(toolOf(method, path, operation, schemas, (methodsOfPath.get(path) ?? 1) > 1));
    }
  }
  return { tools, unfit };
}

/** Why an operation cannot be a tool: no token, a body that is not JSON, an answer that is not JSON. */
function unfitReason(operation: OperationObject): string | undefined {
  if (!audienceOf(operation)) return 'takes no token';
  const body = operation.requestBody as { content?: Record<string, unknown> } | undefined;
  if (body && !body.content?.['application/json']) return `its body is ${Object.keys(body.content ?? {}).join(', ')}`;
  const success = Object.entries(operation.responses ?? {}).find(([status]) => /^2\d\d$/.test(status))?.[1] as
    { content?: Record<string, unknown> } | undefined;
  const types = Object.keys(success?.content ?? {});
  if (types.length && !types.includes('application/json')) return `it answers ${types.join(', ')}`;
  return undefined;
}

function audienceOf(operation: OperationObject): McpAudience | undefined {
  const schemes = (operation.security ?? []).flatMap((requirement) => Object.keys(requirement));
  if (schemes.includes(SECURITY_SCHEMES.admin)) return 'admin';
  if (schemes.includes(SECURITY_SCHEMES.instance)) return 'instance';
  return undefined;
}

/**
 * The route as a name: its path's segments joined by `_` (`/send/text` → `send_text`, path parameters
 * left out), with the method after it where the path serves several methods or the method is DELETE
 * (`instance_proxy_get`, `instance_delete`). The document's operationIds are its handlers' names
 * (`text`, `find`, `delete`, suffixed where two clash): they do not say what they act on, and an agent
 * chooses a tool by its name first.
 */
export function toolName(method: string, path: string, pathHasSeveralMethods: boolean): string {
  const segments = path
    .split('/')
    .filter((segment) => segment && !segment.startsWith('{'))
    .map((segment) => segment.replace(/[^A-Za-z0-9]+/g, '_'));
  const suffix = pathHasSeveralMethods || method === 'delete' ? [method] : [];
  return [...segments, ...suffix].join('_');
}

function toolOf(method: string, path: string, operation: OperationObject, schemas: Record<string, SchemaObject>, severalMethods: boolean): McpTool {
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  const route: McpRoute = { method: method.toUpperCase(), path, pathParameters: [], queryParameters: [], headerParameters: [], hasBody: false };
  for (const parameter of (operation.parameters ?? []) as ParameterObject[]) {
    if (CREDENTIAL_PARAMETERS.has(parameter.name.toLowerCase()) || parameter.in === 'cookie') continue;
    const where = parameter.in === 'path' ? 'path' : parameter.in === 'query' ? 'query' : 'header';
    properties[parameter.name] = {
      ...(parameter.schema ?? { type: 'string' }),
      description: parameter.description ?? `The {${parameter.name}} of the route's path`,
    };
    if (parameter.required || where === 'path') required.push(parameter.name);
    (where === 'path' ? route.pathParameters : where === 'query' ? route.queryParameters : route.headerParameters).push(parameter.name);
  }
  const body = operation.requestBody as { required?: boolean; content: Record<string, { schema?: SchemaObject | { $ref: string } }> } | undefined;
  const bodySchema = resolve(body?.content['application/json']?.schema, schemas);
  if (body) {
    route.hasBody = true;
    for (const [name, schema] of Object.entries(bodySchema?.properties ?? {})) {
      if (name in properties) throw new Error(`${route.method} ${path}: body field ${name} has the name of a parameter`);
      properties[name] = schema;
    }
    required.push(...(bodySchema?.required ?? []));
  }
  const summary = operation.summary?.trim() || `${route.method} ${path}`;
  const inputSchema: McpTool['inputSchema'] = { type: 'object', properties, ...(required.length ? { required } : {}) };
  const defs = referencedSchemas(properties, schemas);
  if (Object.keys(defs).length) inputSchema.$defs = defs;
  return {
    name: toolName(method, path, severalMethods),
    title: summary,
    description: [summary, operation.description?.trim(), `Route: ${route.method} ${path} (operation \`${operation.operationId}\` of /openapi.json).`]
      .filter(Boolean)
      .join('\n\n'),
    inputSchema: rewriteRefs(inputSchema),
    annotations: {
      title: summary,
      ...(method === 'get' ? { readOnlyHint: true } : {}),
      ...(method === 'delete' ? { destructiveHint: true, idempotentHint: true } : {}),
    },
    audience: audienceOf(operation) as McpAudience,
    area: operation.tags?.[0] ?? '',
    route,
  };
}

function resolve(schema: SchemaObject | { $ref: string } | undefined, schemas: Record<string, SchemaObject>): SchemaObject | undefined {
  if (schema && '$ref' in schema) return schemas[schema.$ref.slice(COMPONENT_REF.length)];
  return schema as SchemaObject | undefined;
}

/** The document's schemas a value refers to, and those they refer to: a tool's schema must stand alone. */
function referencedSchemas(value: unknown, schemas: Record<string, SchemaObject>): Record<string, unknown> {
  const found: Record<string, unknown> = {};
  const pending = [...refsIn(value)];
  while (pending.length) {
    const name = pending.pop() as string;
    if (name in found || !schemas[name]) continue;
    found[name] = schemas[name];
    pending.push(...refsIn(schemas[name]));
  }
  return found;
}

function refsIn(value: unknown): string[] {
  return [...JSON.stringify(value).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((match) => match[1]);
}

/** A copy with every `#/components/schemas/X` as `#/$defs/X` (JSON Schema 2020-12, MCP's dialect). */
function rewriteRefs<T>(value: T): T {
  return JSON.parse(JSON.stringify(value).replaceAll(`"${COMPONENT_REF}`, '"#/$defs/')) as T;
}
