/**
 * Request cases for the HTTP fuzzer, drawn from our own OpenAPI document with a seeded generator, so a
 * seed always gives the same requests. Each operation gets a schema-valid body first (the baseline), then
 * bodies broken by one family of hostile input at a time.
 */

export type Family =
  | 'valid'
  | 'deep-nesting'
  | 'nul-byte'
  | 'lone-surrogate'
  | 'null-field'
  | 'huge-number'
  | 'wrong-type'
  | 'huge-body'
  | 'wrong-content-type'
  | 'malformed-json'
  | 'header-abuse'
  | 'extra-fields'
  | 'top-level-shape'
  | 'query-abuse'
  | 'path-abuse'
  | 'method';

export const FAMILIES: Family[] = [
  'valid',
  'deep-nesting',
  'nul-byte',
  'lone-surrogate',
  'null-field',
  'huge-number',
  'wrong-type',
  'huge-body',
  'wrong-content-type',
  'malformed-json',
  'header-abuse',
  'extra-fields',
  'top-level-shape',
  'query-abuse',
  'path-abuse',
  'method',
];

export interface Operation {
  method: string;
  path: string;
  auth: 'token' | 'admintoken' | 'none';
  bodySchema?: Schema;
  queryParameters: Array<{ name: string; schema: Schema }>;
  /** The names of the path's `{parameters}`. */
  pathParameters: string[];
  /** The document marks the route deprecated (its documented answer may be a 504). */
  deprecated?: boolean;
}

export interface FuzzCase {
  family: Family;
  operation: Operation;
  method: string;
  /** Path and query string. */
  url: string;
  headers: Record<string, string>;
  /** The raw bytes sent (undefined: no body). */
  body?: string | Buffer;
}

export interface Schema {
  type?: string | string[];
  $ref?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
  format?: string;
  oneOf?: Schema[];
  anyOf?: Schema[];
  allOf?: Schema[];
  additionalProperties?: boolean | Schema;
}

interface OpenApiDocument {
  paths: Record<string, Record<string, { security?: Array<Record<string, string[]>>; requestBody?: any; parameters?: any[]; deprecated?: boolean }>>;
  components?: { schemas?: Record<string, Schema> };
}

/** A small seeded generator (mulberry32): the same seed gives the same cases on every machine. */
export class Random {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }
}

const HTTP_METHODS = ['get', 'post', 'put', 'delete', 'patch'];

/** The operations of the document, with their body schema resolved and their auth scheme. */
export function operationsOf(document: OpenApiDocument): Operation[] {
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!HTTP_METHODS.includes(method)) continue;
      const schemes = (operation.security ?? []).flatMap((requirement) => Object.keys(requirement));
      const auth = schemes.includes('admintoken') ? 'admintoken' : schemes.includes('token') ? 'token' : 'none';
      const bodySchema = operation.requestBody?.content?.['application/json']?.schema;
      const queryParameters = (operation.parameters ?? [])
        .filter((parameter: { in?: string }) => parameter.in === 'query')
        .map((parameter: { name: string; schema?: Schema }) => ({ name: parameter.name, schema: parameter.schema ?? { type: 'string' } }));
      operations.push({
        method: method.toUpperCase(),
        path,
        auth,
        bodySchema: bodySchema ? resolve(bodySchema, document) : undefined,
        queryParameters,
        pathParameters: [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]),
        ...(operation.deprecated === true ? { deprecated: true } : {}),
      });
    }
  }
  return operations;
}

/** Inlines `$ref`s (one level of cycles is cut to a plain object). */
function resolve(schema: Schema, document: OpenApiDocument, seen: Set<string> = new Set()): Schema {
  if (schema.$ref) {
    const name = schema.$ref.split('/').pop() as string;
    if (seen.has(name)) return { type: 'object' };
    const target = document.components?.schemas?.[name];
    return target ? resolve(target, document, new Set([...seen, name])) : { type: 'object' };
  }
  const out: Schema = { ...schema };
  if (schema.properties) out.properties = Object.fromEntries(Object.entries(schema.properties).map(([key, value]) => [key, resolve(value, document, seen)]));
  if (schema.items) out.items = resolve(schema.items, document, seen);
  for (const key of ['oneOf', 'anyOf', 'allOf'] as const) if (schema[key]) out[key] = schema[key]!.map((item) => resolve(item, document, seen));
  return out;
}

function typeOf(schema: Schema): string {
  if (schema.enum?.length) return 'enum';
  const type = Array.isArray(schema.type) ? schema.type.find((entry) => entry !== 'null') : schema.type;
  if (type) return type;
  if (schema.properties) return 'object';
  const variant = schema.oneOf?.[0] ?? schema.anyOf?.[0] ?? schema.allOf?.[0];
  return variant ? typeOf(variant) : 'string';
}

const SAMPLE_STRINGS = ['5511999990001', 'hello', 'r1a2b3c4', 'https://127.0.0.1:9/x.png', 'Active', '120363000000000000@g.us', ''];

/** A value that satisfies the schema, small where the schema allows (a delay stays short). */
export function validValue(schema: Schema, random: Random, depth = 0, everyField = false): unknown {
  const variant = schema.oneOf ?? schema.anyOf;
  if (variant?.length) return validValue(random.pick(variant), random, depth, everyField);
  switch (typeOf(schema)) {
    case 'enum':
      return random.pick(schema.enum!);
    case 'boolean':
      return random.chance(0.5);
    case 'integer': {
      const min = schema.minimum ?? 0;
      return random.int(min, Math.min(schema.maximum ?? min + 10, min + 10));
    }
    case 'number': {
      const min = schema.minimum ?? 0;
      return min + random.next() * Math.min((schema.maximum ?? min + 10) - min, 10);
    }
    case 'array': {
      if (depth > 4) return [];
      const count = Math.max(schema.minItems ?? 0, random.int(0, 2));
      const length = Math.min(everyField ? Math.max(count, 1) : count, schema.maxItems ?? count + 1);
      return Array.from({ length }, () => validValue(schema.items ?? { type: 'string' }, random, depth + 1, everyField));
    }
    case 'object': {
      if (depth > 4) return {};
      const out: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(schema.properties ?? {})) {
        if (everyField || schema.required?.includes(key) || random.chance(0.5)) out[key] = validValue(value, random, depth + 1, everyField);
      }
      return out;
    }
    default: {
      if (schema.format === 'uri' || schema.format === 'url') return 'https://127.0.0.1:9/file.png';
      let text = random.pick(SAMPLE_STRINGS);
      if (schema.minLength && text.length < schema.minLength) text = text.padEnd(schema.minLength, 'a');
      if (schema.maxLength !== undefined && text.length > schema.maxLength) text = text.slice(0, schema.maxLength);
      return text;
    }
  }
}

/** Paths to every field of a body (`['options', 0, 'text']`), to break one at a time. */
function fieldPaths(value: unknown, prefix: Array<string | number> = []): Array<Array<string | number>> {
  if (Array.isArray(value)) return value.flatMap((item, index) => [[...prefix, index], ...fieldPaths(item, [...prefix, index])]);
  if (value && typeof value === 'object') {
    return Object.entries(value).flatMap(([key, item]) => [[...prefix, key], ...fieldPaths(item, [...prefix, key])]);
  }
  return [];
}

function setAt(value: unknown, path: Array<string | number>, replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const copy: any = Array.isArray(value) ? [...value] : { ...(value as object) };
  copy[path[0]] = setAt(copy[path[0]], path.slice(1), replacement);
  return copy;
}

function deepNest(levels: number, asArray: boolean): string {
  return asArray ? '['.repeat(levels) + ']'.repeat(levels) : '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);
}

/** Replaces one random field (or adds one when the body has none) by what `make` gives. */
function breakOneField(body: Record<string, unknown>, schema: Schema | undefined, random: Random, make: () => unknown): unknown {
  const paths = fieldPaths(body);
  const candidates = paths.length ? paths : Object.keys(schema?.properties ?? {}).map((key) => [key]);
  if (!candidates.length) return { ...body, field: make() };
  return setAt(body, random.pick(candidates), make());
}

const PATH_VALUES = ['r1a2b3c4', 'r0123456789abcd', '3EB0C431C26A1916E4F1', '1'];

const HUGE_NUMBERS = [2 ** 31, 2 ** 31 - 1 + 1, 2 ** 32, 2 ** 53 + 2, -(2 ** 63), 1e308, -1, 1.5, Number.MAX_SAFE_INTEGER];
const WRONG_TYPES = [[], {}, true, false, 0, -7, 'text', [1, 2], { nested: { x: 1 } }, '2024-01-01'];

/** The cases of one operation for one family. */
export function caseFor(operation: Operation, family: Family, random: Random, tokens: { token: string; admintoken: string }): FuzzCase {
  const baseHeaders: Record<string, string> = {};
  if (operation.auth === 'token') baseHeaders.token = tokens.token;
  if (operation.auth === 'admintoken') baseHeaders.admintoken = tokens.admintoken;
  const hasBody = operation.method !== 'GET' && operation.method !== 'DELETE' ? true : Boolean(operation.bodySchema);
  const valid = (operation.bodySchema ? validValue(operation.bodySchema, random) : {}) as Record<string, unknown>;
  const query = operation.queryParameters.length
    ? '?' +
      operation.queryParameters
        .map((parameter) => `${encodeURIComponent(parameter.name)}=${encodeURIComponent(String(validValue(parameter.schema, random)))}`)
        .join('&')
    : '';
  const json = (value: unknown) => ({ headers: { ...baseHeaders, 'content-type': 'application/json' }, body: JSON.stringify(value) });
  // Path parameters get a plausible id (the record may not exist: a 404 is an answer too).
  const path = operation.path.replace(/\{[^}]+\}/g, () => random.pick(PATH_VALUES));
  const base = { family, operation, method: operation.method, url: path + query };
  const withBody = (value: unknown): FuzzCase => (hasBody ? { ...base, ...json(value) } : { ...base, headers: baseHeaders });

  switch (family) {
    case 'valid':
      return withBody(valid);
    case 'deep-nesting': {
      const raw = random.chance(0.5) ? deepNest(random.pick([64, 600, 5000]), random.chance(0.3)) : deepNest(5000, false);
      const body = random.chance(0.5) ? raw : JSON.stringify(valid).replace(/^\{/, `{"deep":${raw},`).replace(',}', '}');
      return { ...base, headers: { ...baseHeaders, 'content-type': 'application/json' }, body };
    }
    case 'nul-byte':
      return withBody(breakOneField(valid, operation.bodySchema, random, () => random.pick(['a\u0000b', '\u0000', '5511\u000099990001'])));
    case 'lone-surrogate':
      return withBody(breakOneField(valid, operation.bodySchema, random, () => random.pick(['\ud800x', 'x\udfff', '\ud83d'])));
    case 'null-field':
      return withBody(breakOneField(valid, operation.bodySchema, random, () => null));
    case 'huge-number':
      return withBody(breakOneField(valid, operation.bodySchema, random, () => random.pick(HUGE_NUMBERS)));
    case 'wrong-type':
      return withBody(breakOneField(valid, operation.bodySchema, random, () => random.pick(WRONG_TYPES)));
    case 'huge-body': {
      const size = random.pick([64 * 1024, 1024 * 1024, 8 * 1024 * 1024]);
      return withBody(breakOneField(valid, operation.bodySchema, random, () => 'x'.repeat(size)));
    }
    case 'wrong-content-type': {
      const type = random.pick([
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/xml',
        'application/json; charset=latin1',
        '',
      ]);
      const headers: Record<string, string> = { ...baseHeaders };
      if (type) headers['content-type'] = type;
      return { ...base, headers, body: random.chance(0.5) ? JSON.stringify(valid) : 'a=1&b=2' };
    }
    case 'malformed-json': {
      const text = JSON.stringify(valid);
      const body = random.pick([text.slice(0, Math.max(1, text.length - 2)), text + '}', '\ufeff' + text, '{"a":1,}', "{'a':1}", 'nul', '{"a":1e999999}', '']);
      return { ...base, headers: { ...baseHeaders, 'content-type': 'application/json' }, body };
    }
    case 'header-abuse': {
      const headers: Record<string, string> = { ...baseHeaders, 'content-type': 'application/json' };
      const abuse = random.int(0, 4);
      if (abuse === 0) headers.token = 't'.repeat(random.pick([101, 8 * 1024]));
      if (abuse === 1) headers.admintoken = 'a'.repeat(random.pick([0, 64, 8 * 1024]));
      if (abuse === 2) headers['x-request-id'] = random.pick(['', 'x'.repeat(5000), '../../etc/passwd', '"><script>']);
      if (abuse === 3) for (let i = 0; i < 80; i++) headers[`x-junk-${i}`] = 'y'.repeat(64);
      if (abuse === 4) headers['content-length'] = '0';
      return { ...base, headers, body: hasBody && abuse !== 4 ? JSON.stringify(valid) : undefined };
    }
    case 'extra-fields': {
      // Written as text: an object literal's __proto__ would set the prototype, not a key that is sent.
      const rest = JSON.stringify({ ...valid, unknownField: random.pick(WRONG_TYPES) }).slice(1);
      const body = `{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},${rest}`;
      return hasBody ? { ...base, headers: { ...baseHeaders, 'content-type': 'application/json' }, body } : { ...base, headers: baseHeaders };
    }
    case 'top-level-shape':
      return {
        ...base,
        headers: { ...baseHeaders, 'content-type': 'application/json' },
        body: JSON.stringify(random.pick([[valid], 'text', 42, null, true, []])),
      };
    case 'query-abuse': {
      const names = operation.queryParameters.map((parameter) => parameter.name);
      const name = names.length ? random.pick(names) : 'limit';
      const value = random.pick(['%00', '%ud800', 'x'.repeat(4000), '-1', '99999999999999999999', '[]', '{}', '%E0%A4%A']);
      return { ...base, url: `${path}?${name}=${value}&${name}=2`, headers: baseHeaders, body: hasBody ? json(valid).body : undefined };
    }
    case 'path-abuse': {
      // One path parameter broken (or, on a path without any, a broken segment added): NUL, a lone
      // surrogate, bad percent-encoding, over-long, traversal; every one a 400 or 404, before any query.
      const hostile = random.pick(['a%00b', '%00', 'a%ED%A0%80b', '%E0%A4%A', 'x'.repeat(random.pick([101, 5000])), '..%2F..%2Fetc', '%2e%2e', '%FF']);
      const names = operation.pathParameters;
      const broken = names.length ? random.pick(names) : undefined;
      const url = broken
        ? operation.path.replace(/\{([^}]+)\}/g, (_match, name: string) => (name === broken ? hostile : random.pick(PATH_VALUES)))
        : `${path.replace(/\/$/, '')}/${hostile}`;
      return { ...base, url: url + query, ...(hasBody ? json(valid) : { headers: baseHeaders }) };
    }
    case 'method': {
      const method = random.pick(['HEAD', 'OPTIONS', 'PATCH', 'PUT']);
      return { ...base, method, headers: baseHeaders };
    }
  }
}

/** About `count` cases (at least every family once for every operation), in a seeded order. */
export function* generateCases(
  operations: Operation[],
  count: number,
  seed: number,
  tokens: { token: string; admintoken: string },
  destructive: (operation: Operation) => boolean,
): Generator<FuzzCase> {
  const random = new Random(seed);
  // Operations that end the instance or the admin token run last, so they don't cut the others short.
  const ordered = [...operations.filter((operation) => !destructive(operation)), ...operations.filter(destructive)];
  const perOperation = Math.max(FAMILIES.length, Math.ceil(count / Math.max(1, ordered.length)));
  for (const operation of ordered) {
    for (let index = 0; index < perOperation; index++) {
      // Every family at least once per operation, then families drawn at random.
      const family = index < FAMILIES.length ? FAMILIES[index] : random.pick(FAMILIES);
      yield caseFor(operation, family, random, tokens);
    }
    yield* nullInEveryField(operation, random, tokens);
  }
}

/** `null` in each field of a body that has every field of the schema (nested ones too), one request per field. */
export function* nullInEveryField(operation: Operation, random: Random, tokens: { token: string; admintoken: string }): Generator<FuzzCase> {
  if (!operation.bodySchema) return;
  const full = validValue(operation.bodySchema, random, 0, true);
  const base = caseFor(operation, 'null-field', random, tokens);
  for (const field of fieldPaths(full)) {
    yield { ...base, headers: { ...base.headers, 'content-type': 'application/json' }, body: JSON.stringify(setAt(full, field, null)) };
  }
}
