import { resolve } from 'node:path';
import { startGateway, type GatewayHarness } from './support/gateway-harness';
import { CONSOLE_CSP } from '../src/console/console.routes';
import { API_AREAS } from '../src/openapi/api-areas';
import { compareWithReference, describeGap, loadReference, operationKey, operationsOf } from '../src/openapi/reference-compare';
import { SCHEMAS } from '../src/openapi/schemas';

const REPO_ROOT = resolve(__dirname, '../../..');

/**
 * Request fields of the reference that served operations lack today, each with why. The test fails on
 * any gap not listed here (and on a listed one that has closed, so the list only shrinks).
 */
const KNOWN_GAPS: Record<string, string> = {};

/**
 * Operations that do not declare their answer yet (`@ApiReply`), so the document says "some JSON object".
 * The test fails on any other (and on a listed one that now declares it, so the list only shrinks).
 */
const UNDECLARED_ANSWERS: Record<string, string> = {};

describe('OpenAPI document', () => {
  let gateway: GatewayHarness;
  let document: Record<string, unknown>;

  beforeAll(async () => {
    gateway = await startGateway();
    const response = await fetch(`${gateway.baseUrl}/openapi.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('application/json');
    document = (await response.json()) as Record<string, unknown>;
  });

  // Closing waited for /docs fetches' connections while their bodies were unread (now read below);
  // the generous limit stays for a loaded machine.
  afterAll(async () => {
    await gateway?.close();
  }, 30_000);

  it('is OpenAPI 3.1 with the reference security schemes, and every operation says which one it takes', () => {
    expect(document.openapi).toBe('3.1.0');
    const components = document.components as { securitySchemes: Record<string, unknown> };
    expect(components.securitySchemes).toEqual({
      token: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'token' }),
      admintoken: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'admintoken' }),
      // The query forms, an alternative each (published clients send them so).
      tokenQuery: expect.objectContaining({ type: 'apiKey', in: 'query', name: 'token' }),
      admintokenQuery: expect.objectContaining({ type: 'apiKey', in: 'query', name: 'admintoken' }),
    });
    const paths = document.paths as Record<string, Record<string, { security: unknown; responses: Record<string, unknown> }>>;
    expect(paths['/send/text'].post.security).toEqual([{ token: [] }, { tokenQuery: [] }]);
    expect(paths['/instance/all'].get.security).toEqual([{ admintoken: [] }, { admintokenQuery: [] }]);
    expect(paths['/instance/create'].post.security).toEqual([{ admintoken: [] }, { admintokenQuery: [] }]);
    expect(paths['/health'].get.security).toEqual([]);
    expect(paths['/send/text'].post.responses).toHaveProperty('401');
    expect(paths['/instance/all'].get.responses).toHaveProperty('403');
    for (const operation of operationsOf(document)) {
      const served = paths[operation.path][operation.method.toLowerCase()];
      expect({ key: operation.key, security: Array.isArray(served.security) }).toEqual({ key: operation.key, security: true });
      expect(Object.keys(served.responses).some((status) => /^2\d\d$/.test(status))).toBe(true);
    }
  });

  it('derives request schemas from the DTOs’ class-validator rules (required fields, enums, ranges)', () => {
    const schemas = (document.components as { schemas: Record<string, { required?: string[]; properties: Record<string, Record<string, unknown>> }> }).schemas;
    expect(schemas.CreateInstanceDto.required).toContain('name');
    expect(schemas.SendCommonDto ?? schemas.SendTextDto).toBeDefined();
    expect(schemas.SendTextDto.properties.delay).toMatchObject({ type: 'integer', minimum: 0, maximum: 300_000 });
    expect(schemas.WebhookDto.properties.action).toMatchObject({ enum: ['add', 'update', 'delete'] });
    // A subclass that adds no rule of its own documents its parent's.
    expect(Object.keys(schemas.GlobalWebhookDto.properties)).toEqual(expect.arrayContaining(['url', 'events']));
  });

  it('names every request field of each served uazapi operation as the reference does', () => {
    const comparison = compareWithReference(document, loadReference(REPO_ROOT));
    expect(comparison.served.length).toBeGreaterThan(0);
    const gaps = comparison.gaps.map(describeGap);
    const newGaps = gaps.filter((gap) => !(gap in KNOWN_GAPS));
    const closed = Object.keys(KNOWN_GAPS).filter((gap) => !gaps.includes(gap));
    // Listed in full, so one run shows every field to add or rename (and every allow-list entry to drop).
    expect({ newGaps, closedButStillListed: closed }).toEqual({ newGaps: [], closedButStillListed: [] });
  });

  it('documents what each route answers: a named schema and an example body', () => {
    const paths = document.paths as Record<
      string,
      Record<string, { responses: Record<string, { content?: Record<string, { schema?: unknown; example?: unknown; examples?: unknown }> }> }>
    >;
    const undeclared: string[] = [];
    for (const operation of operationsOf(document)) {
      const { responses } = paths[operation.path][operation.method.toLowerCase()];
      const success = Object.keys(responses).find((status) => /^2\d\d$/.test(status)) as string;
      const [media] = Object.values(responses[success].content ?? {});
      if (JSON.stringify(media?.schema).includes('GenericObject')) undeclared.push(operation.key);
      // A file's bytes have no example body; a route with several answers names each (examples).
      else if ((media?.schema as { format?: string } | undefined)?.format !== 'binary')
        expect({ key: operation.key, example: media?.example !== undefined || media?.examples !== undefined }).toEqual({ key: operation.key, example: true });
    }
    const closed = Object.keys(UNDECLARED_ANSWERS).filter((key) => !undeclared.includes(key));
    expect({ undeclared: undeclared.filter((key) => !(key in UNDECLARED_ANSWERS)), closedButStillListed: closed }).toEqual({
      undeclared: [],
      closedButStillListed: [],
    });
    const schemas = (document.components as { schemas: Record<string, { properties?: Record<string, unknown> }> }).schemas;
    // Shared shapes are named as the reference names them, and refer to each other.
    expect(Object.keys(schemas)).toEqual(expect.arrayContaining(['Instance', 'Message', 'Webhook', 'Label', 'MessageQueueFolder', 'Response']));
    // A described field refers to the shared shape through allOf (@nestjs/swagger keeps the description beside the $ref).
    expect(schemas.InstanceStatus.properties?.instance).toMatchObject({ allOf: [{ $ref: '#/components/schemas/Instance' }] });
    expect(paths['/ready'].get.responses['200'].content?.['application/json'].example).toEqual({ status: 'ok', checks: { postgres: 'ok', bus: 'in-process' } });
    // A send answers its Message record and `response`, sent now or queued (`async: true`).
    const sendText = paths['/send/text'].post.responses['200'].content?.['application/json'];
    expect(sendText?.schema).toEqual({ $ref: '#/components/schemas/SentMessage' });
    expect(sendText?.examples).toMatchObject({
      sent: { value: { status: 'Sent', response: { status: 'success', message: 'Message sent successfully' } } },
      queued: { value: { status: 'Queued', response: { status: 'success', message: 'Message queued successfully' } } },
    });
    // A file is its own bytes (whatever type it was stored with), else the catalogue's 404.
    const file = paths['/files/{id}'].get.responses;
    expect(file['200'].content?.['*/*'].schema).toMatchObject({ type: 'string', format: 'binary' });
    expect(file).toHaveProperty('404');
  });

  it('documents hibernation (uazapi 2.1.1): the hibernated status, /instance/hibernate with its 200 and 409, the 503 with Retry-After, and rotated', () => {
    type Media = { schema?: { $ref?: string }; example?: Record<string, unknown>; examples?: Record<string, { value: Record<string, unknown> }> };
    type Answer = { headers?: Record<string, { schema?: { type?: string } }>; content?: Record<string, Media> };
    const paths = document.paths as Record<string, Record<string, { responses: Record<string, Answer> }>>;
    const schemas = (document.components as { schemas: Record<string, { properties?: Record<string, { enum?: string[]; type?: string }> }> }).schemas;
    expect(schemas.Instance.properties?.status?.enum).toEqual(['disconnected', 'connecting', 'connected', 'hibernated']);
    const hibernate = paths['/instance/hibernate'].post.responses;
    expect(hibernate['200'].content?.['application/json'].example).toMatchObject({ instance: { status: 'hibernated' } });
    expect(hibernate).toHaveProperty('409');
    // No worker has room: 503, and when to try again.
    const connect = paths['/instance/connect'].post.responses;
    expect(connect['503'].headers?.['Retry-After']?.schema).toMatchObject({ type: 'integer' });
    expect(paths['/send/text'].post.responses['409'].headers).toBeUndefined();
    // rotate_now's answer says whether the proxy was changed.
    expect(schemas.ProxyChanged.properties?.rotated).toMatchObject({ type: 'boolean' });
    const proxy = paths['/instance/proxy'].post.responses['200'].content?.['application/json'];
    expect(proxy?.examples?.rotated?.value).toMatchObject({ rotated: true });
  });

  it('gives every operation a summary, a description and exactly one area of the closed list, which the document lists', () => {
    expect(document.tags).toEqual(Object.entries(API_AREAS).map(([name, description]) => ({ name, description })));
    const paths = document.paths as Record<string, Record<string, { summary?: string; description?: string; tags?: string[] }>>;
    const wrong: string[] = [];
    for (const operation of operationsOf(document)) {
      const { summary, description, tags } = paths[operation.path][operation.method.toLowerCase()];
      if (!summary?.trim()) wrong.push(`${operation.key}: no summary`);
      if (!description?.trim()) wrong.push(`${operation.key}: no description`);
      if (tags?.length !== 1 || !(tags[0] in API_AREAS)) wrong.push(`${operation.key}: tags ${JSON.stringify(tags)}`);
    }
    expect(wrong).toEqual([]);
    expect(paths['/send/text'].post.tags).toEqual(['Send']);
    expect(paths['/instance/proxy'].post.tags).toEqual(['Proxy']);
  });

  it('describes every request field and parameter', () => {
    type Schema = {
      $ref?: string;
      description?: string;
      properties?: Record<string, Schema>;
      items?: Schema;
      oneOf?: Schema[];
      anyOf?: Schema[];
      allOf?: Schema[];
    };
    type Operation = { parameters?: { name: string; in: string; description?: string }[]; requestBody?: { content?: Record<string, { schema?: Schema }> } };
    const schemas = (document.components as { schemas: Record<string, Schema> }).schemas;
    const paths = document.paths as Record<string, Record<string, Operation>>;
    const undescribed = new Set<string>();
    const seen = new Set<string>();
    const walk = (schema: Schema | undefined, where: string): void => {
      if (!schema) return;
      if (schema.$ref) {
        const name = schema.$ref.split('/').pop() as string;
        if (seen.has(name)) return;
        seen.add(name);
        walk(schemas[name], name);
        return;
      }
      for (const [field, property] of Object.entries(schema.properties ?? {})) {
        if (!property.description?.trim()) undescribed.add(`${where}.${field}`);
        walk(property, `${where}.${field}`);
      }
      walk(schema.items, `${where}[]`);
      for (const alternative of [...(schema.oneOf ?? []), ...(schema.anyOf ?? []), ...(schema.allOf ?? [])]) walk(alternative, where);
    };
    let fields = 0;
    for (const operation of operationsOf(document)) {
      const served = paths[operation.path][operation.method.toLowerCase()];
      walk(served.requestBody?.content?.['application/json']?.schema, operation.key);
      for (const parameter of served.parameters ?? []) {
        fields++;
        if (!parameter.description?.trim()) undescribed.add(`${operation.key}: ${parameter.in} ${parameter.name}`);
      }
    }
    expect(seen.size + fields).toBeGreaterThan(100);
    expect([...undescribed]).toEqual([]);
  });

  it("says a field may be null in OpenAPI 3.1 words everywhere (a type with null), never 3.0's `nullable`, which the contract check ignores", () => {
    const leftovers: string[] = [];
    const walk = (value: unknown, where: string): void => {
      if (!value || typeof value !== 'object') return;
      for (const [key, child] of Object.entries(value)) {
        if (key === 'nullable') leftovers.push(where);
        walk(child, `${where}/${key}`);
      }
    };
    walk(document, '#');
    expect(leftovers).toEqual([]);
  });

  it('describes every field of the answers generated from response classes, in 3.1 words (no `nullable`)', () => {
    type Schema = {
      $ref?: string;
      description?: string;
      nullable?: boolean;
      properties?: Record<string, Schema>;
      items?: Schema;
      anyOf?: Schema[];
      allOf?: Schema[];
      oneOf?: Schema[];
    };
    const schemas = (document.components as { schemas: Record<string, Schema> }).schemas;
    const paths = document.paths as Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema?: Schema }> }> }>>;
    // The hand-written schemas of the areas not converted yet (ADR 0033): this list only shrinks.
    const handWritten = new Set(Object.values(SCHEMAS).map((named) => named.name));
    const problems = new Set<string>();
    const seen = new Set<string>();
    // Only what a response class generates is checked (a route's inline schema is not a class's).
    const walk = (schema: Schema | undefined, where: string, generated: boolean): void => {
      if (!schema) return;
      if (schema.$ref) {
        const name = schema.$ref.split('/').pop() as string;
        if (seen.has(name) || handWritten.has(name)) return;
        seen.add(name);
        if (!schemas[name]?.description?.trim()) problems.add(`${name}: no description`);
        walk(schemas[name], name, true);
        return;
      }
      if (generated && schema.nullable !== undefined) problems.add(`${where}: nullable (OpenAPI 3.0) instead of a type with null`);
      for (const [field, property] of Object.entries(schema.properties ?? {})) {
        if (generated && !property.description?.trim()) problems.add(`${where}.${field}: no description`);
        walk(property, `${where}.${field}`, generated);
      }
      walk(schema.items, `${where}[]`, generated);
      for (const alternative of [...(schema.oneOf ?? []), ...(schema.anyOf ?? []), ...(schema.allOf ?? [])]) walk(alternative, where, generated);
    };
    for (const operation of operationsOf(document)) {
      const { responses } = paths[operation.path][operation.method.toLowerCase()];
      for (const [status, response] of Object.entries(responses))
        if (/^2\d\d$/.test(status)) for (const media of Object.values(response.content ?? {})) walk(media.schema, `${operation.key} ${status}`, false);
    }
    // The converted areas' answers are generated (<area>/dto/<area>.response.ts), with the reference's component names.
    expect([...seen]).toEqual(
      expect.arrayContaining([
        'Label',
        'LabelRefresh',
        'LabelEdited',
        'CallMade',
        'CallRejected',
        'ProfileNameUpdated',
        'ProfileImageUpdated',
        'ChatwootConfig',
        'ChatwootConfigUpdated',
        'ChatwootWebhookAccepted',
      ]),
    );
    expect([...problems]).toEqual([]);
  });

  it('holds no bare "string" placeholder in any example (a JSON schema\'s own `type: "string"` aside)', () => {
    const placeholders: string[] = [];
    const scan = (value: unknown, where: string): void => {
      if (value === 'string' && !where.endsWith('.type')) placeholders.push(where);
      else if (value && typeof value === 'object') for (const [key, inner] of Object.entries(value)) scan(inner, `${where}.${key}`);
    };
    const visit = (node: unknown, where: string): void => {
      if (!node || typeof node !== 'object') return;
      for (const [key, inner] of Object.entries(node)) {
        if (key === 'example') scan(inner, `${where}.example`);
        else if (key === 'examples' && inner && typeof inner === 'object')
          for (const [name, entry] of Object.entries(inner)) scan((entry as { value?: unknown }).value ?? entry, `${where}.examples.${name}`);
        else visit(inner, `${where}.${key}`);
      }
    };
    visit(document, '');
    expect(placeholders).toEqual([]);
  });

  it("declares every {parameter} of every path as a required path parameter (the Chatwoot webhook's {secret} too)", () => {
    const undeclared: string[] = [];
    let seen = 0;
    for (const [path, item] of Object.entries(
      document.paths as Record<string, Record<string, { parameters?: { name: string; in: string; required?: boolean }[] }>>,
    ))
      for (const [method, operation] of Object.entries(item)) {
        if (!operation || typeof operation !== 'object' || !('responses' in operation)) continue;
        for (const [, name] of path.matchAll(/\{([^}]+)\}/g)) {
          seen++;
          const declared = [...(operation.parameters ?? []), ...((item.parameters as unknown as { name: string; in: string; required?: boolean }[]) ?? [])];
          if (!declared.some((parameter) => parameter.in === 'path' && parameter.name === name && parameter.required === true))
            undeclared.push(`${method.toUpperCase()} ${path}: {${name}}`);
        }
      }
    expect(seen).toBeGreaterThan(0);
    expect(Object.keys(document.paths as object)).toContain('/chatwoot/webhook/{instance}/{secret}');
    expect(undeclared).toEqual([]);
  });

  it('fails clearly when the reference is missing', () => {
    expect(() => loadReference('/nonexistent/repo')).toThrow(/uazapiGO reference is missing/);
  });

  it('compares operations by method and path, whatever the path parameters are called', () => {
    expect(operationKey('get', '/files/{id}')).toBe(operationKey('GET', '/files/{fileId}'));
    const ours = { paths: { '/send/text': { post: { requestBody: { content: { 'application/json': { schema: { properties: { readchat: {} } } } } } } } } };
    const reference = {
      paths: {
        '/send/text': { post: { requestBody: { content: { 'application/json': { schema: { properties: { readChat: {}, delay: {} } } } } } } },
        '/chat/find': { post: {} },
      },
    };
    const comparison = compareWithReference(ours, reference);
    expect(comparison.missing.map((operation) => operation.key)).toEqual(['POST /chat/find']);
    expect(comparison.gaps.map(describeGap)).toEqual(['POST /send/text: lacks "delay"', 'POST /send/text: "readChat" is named "readchat" here']);
  });

  it("serves /openapi.json and /docs without a token, /docs loading its assets from this server under the console's security headers", async () => {
    const json = await fetch(`${gateway.baseUrl}/openapi.json`);
    expect(json.status).toBe(200);
    // Every body is read to its end: a body left unread keeps its connection busy, and closing the
    // gateway then waited for it (up to 30 s and more on a loaded machine).
    expect((await json.arrayBuffer()).byteLength).toBeGreaterThan(0);
    const docs = await fetch(`${gateway.baseUrl}/docs`);
    expect(docs.status).toBe(200);
    const html = await docs.text();
    expect(html).toContain('swagger-ui');
    // No CDN: every script and stylesheet is a relative URL this server answers.
    const assets = [...html.matchAll(/(?:src|href)=['"]([^'"]+)['"]/g)].map((match) => match[1]).filter((url) => !url.startsWith('data:'));
    expect(assets.length).toBeGreaterThan(0);
    for (const asset of assets) {
      expect(asset).not.toMatch(/^(https?:)?\/\//);
      const response = await fetch(new URL(asset, `${gateway.baseUrl}/docs`));
      const bytes = (await response.arrayBuffer()).byteLength;
      expect({ asset, status: response.status, empty: bytes === 0 }).toEqual({ asset, status: 200, empty: false });
    }
    // The page and every asset carry the console's security headers; none of the package's other files is served.
    for (const path of ['/docs', '/docs/', ...assets.map((asset) => new URL(asset, `${gateway.baseUrl}/docs`).pathname)]) {
      const response = await fetch(`${gateway.baseUrl}${path}`);
      await response.arrayBuffer();
      expect({ path, csp: response.headers.get('content-security-policy'), nosniff: response.headers.get('x-content-type-options') }).toEqual({
        path,
        csp: CONSOLE_CSP,
        nosniff: 'nosniff',
      });
      expect(response.headers.get('x-frame-options')).toBe('DENY');
    }
    expect(CONSOLE_CSP).toContain("frame-ancestors 'none'");
    // No inline script or style the CSP would block.
    expect(html).not.toMatch(/<style|style=|<script(?![^>]*\ssrc=)/i);
    for (const other of ['/docs/index.html', '/docs/swagger-initializer.js', '/docs/LICENSE']) {
      const response = await fetch(`${gateway.baseUrl}${other}`);
      expect({ other, status: response.status }).toEqual({ other, status: 404 });
      await response.arrayBuffer();
    }
    // The rest of the API still asks for its token, and unknown routes still answer the catalogue's 404.
    expect((await gateway.call('GET', '/instance/status')).status).toBe(401);
    expect(await gateway.call('GET', '/nope')).toEqual({ status: 404, body: { error: 'Route GET /nope not found' } });
  });
});
