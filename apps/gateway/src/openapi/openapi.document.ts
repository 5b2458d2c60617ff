import type { INestApplication, Type } from '@nestjs/common';
import { GUARDS_METADATA, PARAMTYPES_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import {
  DocumentBuilder,
  getSchemaPath,
  type OpenAPIObject,
  type OperationObject,
  type ResponseObject,
  type SchemaObject,
  SwaggerModule,
} from '@nestjs/swagger';
import { targetConstructorToSchema, validationMetadatasToSchemas } from 'class-validator-jsonschema';
import { API_ERRORS, ApiError, type ApiErrorKind } from '../common/api-error';
import { AdminGuard, InstanceGuard } from '../common/auth.guards';
import { API_AREAS } from './api-areas';
import { type ApiReplyMetadata, apiReplyOf } from './api-reply.decorator';
import { type NamedSchema, SCHEMAS } from './schemas';
import { ChatPageResponse, ChatResponse } from '../common/dto/chat.response';
import { InstanceResponse, InstanceWrappedResponse } from '../common/dto/instance.response';
import { MessageResponse, SentMessageResponse, StatusSentResponse } from '../common/dto/message.response';
import { CodedErrorResponse, ReplyResponse, ReplyWithInfoResponse } from '../common/dto/reply.response';
import { WebhookErrorResponse } from '../common/dto/webhook-error.response';

// class-transformer's own metadata (`@Type` of nested arrays, `@Expose` names): its entry point does not export it.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { defaultMetadataStorage } = require('class-transformer/cjs/storage') as typeof import('class-transformer/types/storage');

/** The answers several areas share (common/dto), written under components.schemas whichever routes use them. */
const SHARED_RESPONSES = [
  ReplyResponse,
  ReplyWithInfoResponse,
  CodedErrorResponse,
  MessageResponse,
  SentMessageResponse,
  StatusSentResponse,
  ChatResponse,
  ChatPageResponse,
  InstanceResponse,
  InstanceWrappedResponse,
  WebhookErrorResponse,
];

/** The security scheme names, as uazapiGO's reference names them. */
export const SECURITY_SCHEMES = { instance: 'token', admin: 'admintoken' } as const;
/** The same tokens as query parameters, an alternative each (the header wins when both are sent). */
const QUERY_SECURITY_SCHEMES = { instance: 'tokenQuery', admin: 'admintokenQuery' } as const;

/** Which scheme a route's guards ask for: the `token` header, the `admintoken` header, or none. */
type Audience = 'instance' | 'admin' | 'public';

/** The errors any route can answer (a path or query value no route takes is a 400 before any guard); the guard adds its own (401 / 403), a body adds 400. */
const ALWAYS: readonly ApiErrorKind[] = ['invalid_request', 'internal'];
/** What a route behind a token guard can answer besides: the token's request limit. */
const GUARDED: readonly ApiErrorKind[] = ['rate_limited'];
/** What an instance route can answer besides: its instance's state, the session worker, WhatsApp (a refusal, a role the account lacks). */
const INSTANCE_ERRORS: readonly ApiErrorKind[] = ['invalid_token', 'forbidden', 'not_found', 'conflict', 'whatsapp_refused', 'unavailable', 'timeout'];
/** What a send answers besides: WhatsApp's limits on the account (463 reach-out timelock, 475 new-chat cap). */
const SEND_ERRORS: readonly ApiErrorKind[] = ['whatsapp_limited'];
const ADMIN_ERRORS: readonly ApiErrorKind[] = ['invalid_admin_token', 'not_found', 'conflict'];
const BODY_ERRORS: readonly ApiErrorKind[] = ['invalid_request', 'payload_too_large', 'unsupported_media_type'];

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

interface ContainerLike {
  getModules(): Map<string, { controllers: Map<unknown, { metatype: unknown }> }>;
}

/**
 * The OpenAPI 3.1 document of the routes the app serves, generated from the code: paths and methods
 * from Nest's routing metadata (@nestjs/swagger's scanner); request bodies from the DTOs'
 * class-validator rules (class-validator-jsonschema: required fields, enums, ranges, lengths), so one
 * declaration validates and documents; the auth scheme from the guard each route uses; errors from the
 * closed catalogue (`API_ERRORS`); answers from `@ApiReply`, or a generic JSON object where a route has
 * declared none yet. Needs only the app's module graph (a `preview` app will do: nothing is instantiated).
 */
export function buildOpenApiDocument(app: INestApplication, version = '0.1.0'): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setOpenAPIVersion('3.1.0')
    .setTitle('wa-gateway (uazapiGO-compatible API)')
    .setDescription(
      'A multi-tenant WhatsApp gateway compatible with the uazapiGO API. Instance routes take the `token` header, ' +
        'administrative routes the `admintoken` header (or `?token=` / `?admintoken=` when the header is absent). Every error answers `{"error": "...", "code"?: "..."}`.',
    )
    .setVersion(version)
    .addApiKey({ type: 'apiKey', in: 'header', name: 'token', description: 'The token of one instance' }, SECURITY_SCHEMES.instance)
    .addApiKey({ type: 'apiKey', in: 'header', name: 'admintoken', description: "The operator's admin token" }, SECURITY_SCHEMES.admin)
    .addApiKey(
      { type: 'apiKey', in: 'query', name: 'token', description: 'The token of one instance as `?token=`, when the `token` header is absent' },
      QUERY_SECURITY_SCHEMES.instance,
    )
    .addApiKey(
      { type: 'apiKey', in: 'query', name: 'admintoken', description: 'The admin token as `?admintoken=`, when the `admintoken` header is absent' },
      QUERY_SECURITY_SCHEMES.admin,
    );
  // The closed list of areas, in the order the reference lists its tags; each operation carries one (`@ApiArea`).
  for (const [area, description] of Object.entries(API_AREAS)) builder.addTag(area, description);
  const config = builder.build();
  const document = SwaggerModule.createDocument(app, config, {
    operationIdFactory: (controller, method) => `${controller}_${method}`,
    // No class-name tag beside the area a controller or handler declares.
    autoTagControllers: false,
    // The shared answers other schemas refer to by name, and the coded error shape, whichever routes use them.
    extraModels: SHARED_RESPONSES,
  });
  const controllers = controllersByName(app);
  const components = (document.components ??= {});
  const schemas = (components.schemas ??= {}) as Record<string, SchemaObject>;
  const bodyClasses = new Map<string, Type>();
  for (const controller of controllers.values())
    for (const handlerName of Object.getOwnPropertyNames(controller.prototype)) {
      const body = argumentsOf(controller, handlerName).find((argument) => argument.kind === RouteParamtypes.BODY && !argument.name)?.type;
      if (body && body !== Object) bodyClasses.set(body.name, body);
    }
  replaceDtoSchemas(schemas, bodyClasses);
  // The response classes' schemas, as @nestjs/swagger wrote them, in OpenAPI 3.1's words.
  for (const schema of Object.values(schemas)) nullableAsTypeUnion(schema);
  // Every shared response schema, so one can refer to another (`$ref`) whichever routes use it; a response
  // class's generated schema wins over a hand-written stand-in of the same name.
  for (const { name, schema } of Object.values(SCHEMAS)) schemas[name] ??= schema;
  const seenOperationIds = new Set<string>();
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of HTTP_METHODS) {
      if (!item[method]) continue;
      // A handler serving several paths shares one operation object between them: each path gets its own.
      const operation: OperationObject = structuredClone(item[method]);
      item[method] = operation;
      const [controllerName, handlerName] = (operation.operationId ?? '').replace(/\[\d+\]$/, '').split('_');
      const controller = controllers.get(controllerName);
      const handler = controller?.prototype[handlerName as keyof object] as object | undefined;
      const audience = controller && handler ? audienceOf(controller, handler) : 'public';
      const reply = handler ? apiReplyOf(handler) : undefined;
      // One handler can serve several paths (e.g. instance/create and instance/init): ids stay unique.
      let operationId = handlerName ?? operation.operationId ?? `${method}${path}`;
      if (seenOperationIds.has(operationId)) operationId = `${operationId}_${method}${path.replace(/[^A-Za-z0-9]+/g, '_')}`;
      seenOperationIds.add(operationId);
      operation.operationId = operationId;
      operation.security = audience === 'public' ? [] : [{ [SECURITY_SCHEMES[audience]]: [] }, { [QUERY_SECURITY_SCHEMES[audience]]: [] }];
      documentPathParameters(operation, path);
      if (controller && handlerName) documentQuery(operation, path, argumentsOf(controller, handlerName));
      const bodySchema = requestSchemaOf(operation, schemas);
      if (bodySchema) exampleRequest(operation, bodySchema, schemas);
      // Any request that can carry a body goes through the JSON body parser (413, 415, malformed JSON), a DTO or not.
      const takesBody = Boolean(bodySchema) || method !== 'get';
      operation.responses = responsesOf(operation, path, audience, reply, takesBody, schemas);
    }
  }
  // The hand-written and inline schemas may say `nullable` too (OpenAPI 3.0): the document is 3.1 throughout.
  nullableAsTypeUnion(document.paths);
  nullableAsTypeUnion(schemas);
  return document;
}

function controllersByName(app: INestApplication): Map<string, Type> {
  const container = (app as unknown as { container: ContainerLike }).container;
  const found = new Map<string, Type>();
  for (const module of container.getModules().values()) {
    for (const wrapper of module.controllers.values()) {
      const type = wrapper.metatype as Type | undefined;
      if (typeof type === 'function') found.set(type.name, type);
    }
  }
  return found;
}

/** The guard a route runs (its own, else its controller's) as the security scheme it checks. */
function audienceOf(controller: Type, handler: object): Audience {
  const guards = [
    ...((Reflect.getMetadata(GUARDS_METADATA, handler) as unknown[]) ?? []),
    ...((Reflect.getMetadata(GUARDS_METADATA, controller) as unknown[]) ?? []),
  ];
  if (guards.includes(AdminGuard)) return 'admin';
  if (guards.includes(InstanceGuard)) return 'instance';
  return 'public';
}

interface RouteArgument {
  kind: RouteParamtypes | undefined;
  name: string | undefined;
  type: Type | undefined;
}

/** A handler's arguments as Nest routes them: where each comes from (body, query…), its key, its declared type. */
function argumentsOf(controller: Type, handlerName: string): RouteArgument[] {
  const routeArgs = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, handlerName) ?? {}) as Record<string, { index: number; data?: unknown }>;
  const types = (Reflect.getMetadata(PARAMTYPES_METADATA, controller.prototype, handlerName) ?? []) as (Type | undefined)[];
  return Object.entries(routeArgs).map(([key, { index, data }]) => {
    const kind = /^\d+:/.test(key) ? (Number(key.split(':')[0]) as RouteParamtypes) : undefined;
    return { kind, name: typeof data === 'string' ? data : undefined, type: types[index] };
  });
}

/**
 * Path parameters: every `{name}` of the path, required (OpenAPI requires each to be declared). The
 * scanner declares only those a handler reads with `@Param('name')`; a guard reads the others (the
 * Chatwoot webhook's `{secret}`).
 */
function documentPathParameters(operation: OperationObject, path: string): void {
  const parameters = (operation.parameters ??= []) as { name: string; in: string; required?: boolean; schema?: SchemaObject; description?: string }[];
  for (const [, name] of path.matchAll(/\{([^}]+)\}/g))
    if (!parameters.some((parameter) => parameter.in === 'path' && parameter.name === name))
      parameters.push({ name, in: 'path', required: true, schema: { type: 'string' } });
}

/**
 * Query parameters: every `@Query('name')` of the handler, optional (the handlers treat an absent one
 * as its default); @nestjs/swagger leaves out those whose declared type is a union. Every route takes
 * its token as `?token=` / `?admintoken=` too (a security scheme); `/sse` also lists it as a parameter,
 * as the reference does (browsers' EventSource sends no headers).
 */
function documentQuery(operation: OperationObject, path: string, routeArguments: RouteArgument[]): void {
  const parameters = (operation.parameters ??= []) as { name: string; in: string; required?: boolean; schema?: SchemaObject; description?: string }[];
  for (const parameter of parameters) if (parameter.in === 'query') parameter.required = false;
  const names = routeArguments.filter((argument) => argument.kind === RouteParamtypes.QUERY && argument.name).map((argument) => argument.name as string);
  if (path === '/sse') names.push('token');
  for (const name of names)
    if (!parameters.some((parameter) => parameter.in === 'query' && parameter.name === name))
      parameters.push({
        name,
        in: 'query',
        required: false,
        schema: { type: 'string' },
        ...(name === 'token' ? { description: 'The instance token, for clients that cannot send headers (EventSource)' } : {}),
      });
}

/**
 * The schemas @nestjs/swagger wrote for the body classes hold only what `@ApiProperty` declares (here
 * nothing); each is replaced by the one derived from the class's class-validator rules, and the classes
 * they nest are added.
 */
function replaceDtoSchemas(schemas: Record<string, SchemaObject>, bodyClasses: Map<string, Type>): void {
  const options = { refPointerPrefix: '#/components/schemas/', classTransformerMetadataStorage: defaultMetadataStorage };
  const derived = validationMetadatasToSchemas(options) as Record<string, SchemaObject>;
  // A body class's own schema includes the rules it inherits (a subclass that adds none has no entry above).
  for (const [name, type] of bodyClasses) derived[name] = targetConstructorToSchema(type, options) as SchemaObject;
  for (const schema of Object.values(derived)) dropObjectRefs(schema);
  const pending = Object.keys(schemas).filter((name) => derived[name]);
  const done = new Set<string>();
  while (pending.length) {
    const name = pending.pop() as string;
    if (done.has(name)) continue;
    done.add(name);
    schemas[name] = derived[name];
    for (const match of JSON.stringify(derived[name]).matchAll(/"#\/components\/schemas\/([^"]+)"/g)) if (derived[match[1]]) pending.push(match[1]);
  }
}

/**
 * A field typed as a union or `unknown` (its design type is `Object`) comes out as a `$ref` to an `Object`
 * schema no document holds; it is any JSON value: the `$ref` goes, its description and rules stay.
 */
function dropObjectRefs(schema: unknown): void {
  if (Array.isArray(schema)) return schema.forEach(dropObjectRefs);
  if (!schema || typeof schema !== 'object') return;
  const record = schema as Record<string, unknown>;
  if (record.$ref === '#/components/schemas/Object') delete record.$ref;
  for (const value of Object.values(record)) dropObjectRefs(value);
}

/**
 * @nestjs/swagger writes a nullable field as OpenAPI 3.0 did (`nullable: true`, and a nullable `$ref`
 * as `{type: 'object', nullable: true, allOf: [$ref]}`); the document is 3.1, where JSON Schema says
 * it: `type: [t, 'null']`, `null` among an `enum`'s values, `anyOf: [$ref, {type: 'null'}]`.
 */
export function nullableAsTypeUnion(schema: unknown): void {
  if (Array.isArray(schema)) return schema.forEach(nullableAsTypeUnion);
  if (!schema || typeof schema !== 'object') return;
  const record = schema as Record<string, unknown>;
  for (const value of Object.values(record)) nullableAsTypeUnion(value);
  if (record.nullable !== true) return;
  delete record.nullable;
  if (Array.isArray(record.allOf) && record.allOf.length === 1) {
    record.anyOf = [record.allOf[0], { type: 'null' }];
    delete record.allOf;
    delete record.type;
    return;
  }
  if (typeof record.type === 'string') record.type = [record.type, 'null'];
  else if (Array.isArray(record.type) && !record.type.includes('null')) record.type = [...(record.type as string[]), 'null'];
  if (Array.isArray(record.enum) && !record.enum.includes(null)) record.enum = [...(record.enum as unknown[]), null];
}

function resolve(schema: SchemaObject | { $ref: string } | undefined, schemas: Record<string, SchemaObject>): SchemaObject | undefined {
  if (schema && '$ref' in schema) return schemas[schema.$ref.split('/').pop() as string];
  return schema;
}

function requestSchemaOf(operation: OperationObject, schemas: Record<string, SchemaObject>): SchemaObject | undefined {
  const body = operation.requestBody as { content?: Record<string, { schema?: SchemaObject }> } | undefined;
  const json = body?.content?.['application/json'];
  return json ? resolve(json.schema, schemas) : undefined;
}

/** A request example from the schema: the required fields and the first few others, with plausible values. */
function exampleRequest(operation: OperationObject, schema: SchemaObject, schemas: Record<string, SchemaObject>): void {
  const body = operation.requestBody as { required?: boolean; content: Record<string, { schema?: SchemaObject; example?: unknown }> };
  // uazapi bodies are objects whose fields are mostly optional: an absent body is validated as `{}`.
  body.required = Boolean(schema.required?.length);
  body.content['application/json'].example = exampleOf(schema, schemas, 0);
}

function exampleOf(schema: SchemaObject | undefined, schemas: Record<string, SchemaObject>, depth: number, name = ''): unknown {
  const resolved = resolve(schema, schemas) ?? {};
  if (resolved.example !== undefined) return resolved.example;
  if (resolved.enum?.length) return resolved.enum[0];
  const type = Array.isArray(resolved.type) ? resolved.type[0] : resolved.type;
  switch (type) {
    case 'object': {
      if (depth > 3) return {};
      const properties = Object.entries(resolved.properties ?? {});
      const required = new Set(resolved.required ?? []);
      const chosen = [...properties.filter(([key]) => required.has(key)), ...properties.filter(([key]) => !required.has(key)).slice(0, 3)];
      return Object.fromEntries(chosen.map(([key, value]) => [key, exampleOf(value as SchemaObject, schemas, depth + 1, key)]));
    }
    case 'array':
      return depth > 3 ? [] : [exampleOf(resolved.items as SchemaObject, schemas, depth + 1, name)];
    case 'boolean':
      return false;
    case 'integer':
    case 'number':
      return typeof resolved.minimum === 'number' ? resolved.minimum : 0;
    case 'string':
      return exampleString(name);
    default: {
      // No declared type (a field taking a number or its string, a custom validator): the first
      // alternative, else a value the field's name suggests.
      const alternative = resolved.oneOf?.[0] ?? resolved.anyOf?.[0];
      if (alternative) return exampleOf(alternative as SchemaObject, schemas, depth, name);
      return name in NUMERIC_EXAMPLES ? NUMERIC_EXAMPLES[name] : exampleString(name);
    }
  }
}

/** Fields without a declared type whose values are numbers. */
const NUMERIC_EXAMPLES: Record<string, number> = {
  latitude: -23.5505,
  longitude: -46.6333,
  duration: 7,
  count: 50,
  amount: 19.9,
  max_recipients: 100,
  background_color: 1,
  font: 1,
};

/** Plausible values for the request fields whose name says what they hold, instead of a bare "string". */
const STRING_EXAMPLES: Record<string, string> = {
  jid: '5511999999999@s.whatsapp.net',
  groupjid: '120363012345678901@g.us',
  community: '120363012345678902@g.us',
  description: 'A short description',
  invitecode: 'IAoAb6CXXXXXX0Xcm2qNd4',
  email: 'contact@example.com',
  address: 'Av. Paulista, 1000 - São Paulo',
  systemName: 'my-crm',
  adminfield01: 'customer-42',
  adminfield02: 'plan-pro',
  topic: 'wa.events',
  subjectprefix: 'wa.events',
  stream: 'WA_EVENTS',
  routingkey: 'wa.events',
  exchange: 'wa-events',
  pixtype: 'EVP',
  pixkey: '123e4567-e89b-12d3-a456-426614174000',
  pixname: 'My Store',
  footertext: 'Choose an option',
  listbutton: 'See options',
  linkpreviewtitle: 'Example page',
  linkpreviewdescription: 'What the linked page is about',
  folder_id: 'r1a2b3c4d5',
  search: 'news',
  reaction: '👍',
  key: 'lead_field01',
  notes: 'Called back on Monday',
  mode: 'all',
  caption: 'Look at this',
  message: 'Hello!',
  fullname: 'Maria Silva',
  organization: 'Example Ltd',
  docname: 'invoice.pdf',
  countrycodes: 'BR',
  after: '2026-01-01T00:00:00Z',
  access_token: 'chatwoot-access-token',
  openai_apikey: 'sk-...',
  view: 'RECOMMENDED',
  track_source: 'crm',
};

function exampleString(name: string): string {
  const key = name.toLowerCase();
  if (/^(number|chatid|phone|phonenumber|numbers|participants)$/.test(key)) return '5511999999999';
  if (/^(groupjids?)$/.test(key)) return STRING_EXAMPLES.groupjid;
  if (/url$/.test(key) || /^(file|image|picture|thumbnail)$/.test(key)) return 'https://example.com/file.jpg';
  if (/^(id|messageid|replyid|reactionmessageid|ordermessageid)$/.test(key)) return '3EB0C767D71D2B5C';
  if (/^(labelid|labelids|add_labelid|remove_labelid)$/.test(key)) return '10';
  if (/^lead_field\d+$/.test(key)) return 'VIP';
  if (key === 'text') return 'Hello!';
  if (key === 'name') return 'my-instance';
  if (key === 'choices' || key === 'carousel') return 'Option 1';
  return STRING_EXAMPLES[key] ?? STRING_EXAMPLES[name] ?? `${name} value`;
}

/** The success answer (`@ApiReply`, or a generic object) and the catalogue's errors the route can answer. */
function responsesOf(
  operation: OperationObject,
  path: string,
  audience: Audience,
  reply: ApiReplyMetadata | undefined,
  hasBody: boolean,
  schemas: Record<string, SchemaObject>,
): Record<string, ResponseObject> {
  const generated = Object.keys(operation.responses ?? {});
  const successStatus = generated.find((status) => /^2\d\d$/.test(status)) ?? '200';
  const named = reply && isNamed(reply.schema) ? reply.schema : reply ? undefined : SCHEMAS.Object;
  if (named) schemas[named.name] ??= named.schema;
  const single: SchemaObject | { $ref: string } =
    typeof reply?.schema === 'function'
      ? { $ref: getSchemaPath(reply.schema) }
      : named
        ? { $ref: `#/components/schemas/${named.name}` }
        : (reply?.schema as SchemaObject);
  const schema = reply?.isArray ? { type: 'array' as const, items: single } : single;
  // Bytes (a file) have no example body.
  const examples = reply?.examples
    ? { examples: reply.examples }
    : (schema as SchemaObject).format === 'binary'
      ? {}
      : { example: reply?.example ?? exampleOf(schema as SchemaObject, schemas, 0) };
  const responses: Record<string, ResponseObject> = {
    [successStatus]: { description: reply?.description ?? 'Success', content: { [reply?.contentType ?? 'application/json']: { schema, ...examples } } },
  };
  // Other statuses answering the same body (a partial success's 207, say).
  const sameBody = Object.entries(reply?.otherStatuses ?? {});
  for (const [status, description] of sameBody) responses[status] = { description, content: { 'application/json': { schema } } };
  if (reply?.redirect)
    responses['302'] = {
      description: reply.redirect,
      headers: { Location: { description: 'Where the answer is', schema: { type: 'string', format: 'uri' } } },
    };
  const kinds = new Set<ApiErrorKind>([
    ...(reply?.errors ?? [
      ...(audience === 'instance' ? INSTANCE_ERRORS : audience === 'admin' ? ADMIN_ERRORS : ['not_found' as const]),
      ...(audience === 'instance' && path.startsWith('/send/') ? SEND_ERRORS : []),
    ]),
    // Whatever a route declares, these answer before it runs: the body parser's, the token limit's.
    ...(hasBody ? BODY_ERRORS : []),
    ...(audience === 'public' ? [] : GUARDED),
    ...ALWAYS,
  ]);
  const byStatus = new Map<number, ApiErrorKind[]>();
  for (const kind of kinds) byStatus.set(API_ERRORS[kind].status, [...(byStatus.get(API_ERRORS[kind].status) ?? []), kind]);
  for (const [status, group] of [...byStatus].sort(([a], [b]) => a - b)) {
    const retryAfter = group.map((kind) => (API_ERRORS[kind] as { retryAfterSeconds?: number }).retryAfterSeconds).find((seconds) => seconds !== undefined);
    const coded = group.every((kind) => 'shape' in API_ERRORS[kind]);
    const errorSchema = { $ref: coded ? getSchemaPath(CodedErrorResponse) : `#/components/schemas/${SCHEMAS.Error.name}` };
    const alsoBody = responses[String(status)];
    responses[String(status)] = {
      description: [...(alsoBody ? [alsoBody.description] : []), ...group.map((kind) => API_ERRORS[kind].message)].join(' / '),
      // A 503 says when to try again (uazapi 2.1.1's /instance/connect when no session worker has room).
      ...(retryAfter !== undefined
        ? { headers: { 'Retry-After': { description: 'Seconds to wait before trying again', schema: { type: 'integer', example: retryAfter } } } }
        : {}),
      content: {
        'application/json': {
          // A kind of the `{code, message, data}` shape (GET /quick-replies/{id}'s 401) has its own schema; a status that
          // also answers the route's own body (uazapi's 500 of a profile update where no field changed) takes either.
          schema: alsoBody ? { oneOf: [schema, errorSchema] } : errorSchema,
          examples: Object.fromEntries(group.map((kind) => [kind, { summary: kind, value: errorBody(kind) }])),
        },
      },
    };
  }
  return responses;
}

function errorBody(kind: ApiErrorKind): Record<string, unknown> {
  return new ApiError(kind).body();
}

function isNamed(schema: NamedSchema | SchemaObject | Type): schema is NamedSchema {
  return typeof schema === 'object' && typeof (schema as NamedSchema).name === 'string' && typeof (schema as NamedSchema).schema === 'object';
}
