import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { OpenAPIObject } from '@nestjs/swagger';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { buildOpenApiDocument } from '../../src/openapi/openapi.document';

/** A response that the document does not describe: an undocumented status, media type or body. */
export interface ContractViolation {
  requestId: string;
  method: string;
  url: string;
  status: number;
  problem: string;
}

interface Operation {
  method: string;
  pattern: RegExp;
  template: string;
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
}

/** The header a harness call sets so that the violations of its own request are told to it (not X-Request-ID: routes echo that). */
export const CONTRACT_REQUEST_HEADER = 'x-contract-check';

/**
 * The contract check of the e2e suites (issue #37): every answer the gateway gives to an operation of
 * its own `/openapi.json` is checked against that operation's documented responses (the status is
 * documented, the media type is, and a JSON body validates against the schema). Routes outside the
 * document (the console's assets, /docs, /metrics, the sandbox relay) are not checked. The document is
 * the one the app serves, built from the same code, so a route that answers something its document
 * does not say fails the suite that saw it.
 */
export class ResponseContract {
  private operations?: Operation[];
  private ajv?: Ajv2020;
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly violations: ContractViolation[] = [];
  private checked = 0;
  private verified = 0;

  /** The check of `app`'s answers, against the document `app` serves (or `document`, for answers from another process). */
  constructor(
    private readonly app?: NestFastifyApplication,
    private readonly document?: OpenAPIObject,
  ) {}

  /** A check of answers a gateway in another process gave (a child running main.ts), against `document`. */
  static ofDocument(document: OpenAPIObject): ResponseContract {
    return new ResponseContract(undefined, document);
  }

  /** Registers the check on the app's Fastify instance; call before the app listens. */
  install(): void {
    if (!this.app) throw new Error('ResponseContract.install needs the app');
    const fastify = this.app.getHttpAdapter().getInstance();
    fastify.addHook('onSend', (request, reply, payload, done) => {
      const header = request.headers[CONTRACT_REQUEST_HEADER];
      const requestId = typeof header === 'string' ? header : request.id;
      try {
        this.check(request.method, request.url, requestId, reply.statusCode, String(reply.getHeader('content-type') ?? ''), payload);
      } catch (error) {
        this.violations.push({ requestId, method: request.method, url: request.url, status: reply.statusCode, problem: `check failed: ${String(error)}` });
      }
      done(null, payload);
    });
  }

  /** How many answers were checked (so a suite can see the check ran). */
  get count(): number {
    return this.checked;
  }

  /** The violations of one request (by its CONTRACT_REQUEST_HEADER), removed from the list. */
  take(requestId: string): ContractViolation[] {
    const mine = this.violations.filter((violation) => violation.requestId === requestId);
    if (mine.length) this.violations.splice(0, this.violations.length, ...this.violations.filter((violation) => violation.requestId !== requestId));
    return mine;
  }

  /** Checks one answer received over the wire (`body` as its text) and returns what it broke. */
  verify(method: string, url: string, status: number, contentType: string, body: string): ContractViolation[] {
    const requestId = `verify-${++this.verified}`;
    this.check(method, url, requestId, status, contentType, body);
    return this.take(requestId);
  }

  /** Every violation not yet told to the request's caller, removed from the list. */
  drain(): ContractViolation[] {
    return this.violations.splice(0, this.violations.length);
  }

  private check(method: string, url: string, requestId: string, status: number, contentType: string, payload: unknown): void {
    const path = url.split('?')[0];
    const operation = this.operationOf(method, path);
    if (!operation) return;
    this.checked++;
    const fail = (problem: string): void => {
      this.violations.push({ requestId, method, url: path, status, problem: `${method} ${operation.template} → ${status}: ${problem}` });
    };
    const response = operation.responses[String(status)] ?? operation.responses[`${String(status)[0]}XX`] ?? operation.responses.default;
    if (!response) return fail(`status ${status} is not documented (documented: ${Object.keys(operation.responses).join(', ')})`);
    // No body to check: a 204, a HEAD, a stream (payload is a stream object, e.g. /sse or a file).
    if (!response.content || payload === undefined || payload === null || (typeof payload !== 'string' && !Buffer.isBuffer(payload))) return;
    const mediaType = contentType.split(';')[0].trim();
    const documented = response.content[mediaType] ?? response.content[`${mediaType.split('/')[0]}/*`] ?? response.content['*/*'];
    if (!documented) return fail(`media type ${mediaType || '(none)'} is not documented (documented: ${Object.keys(response.content).join(', ')})`);
    if (mediaType !== 'application/json' || !documented.schema) return;
    const text = Buffer.isBuffer(payload) ? payload.toString('utf8') : payload;
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return fail(`the body is not JSON: ${text.slice(0, 120)}`);
    }
    const validate = this.validatorOf(`${method} ${operation.template} ${status}`, documented.schema);
    if (!validate(body)) {
      const errors = (validate.errors ?? [])
        .slice(0, 5)
        .map(
          (error) =>
            `${error.instancePath || '(body)'} ${error.message}${error.params && 'additionalProperty' in error.params ? ` (${String(error.params.additionalProperty)})` : ''}`,
        );
      fail(`the body does not match the document: ${errors.join('; ')} — body: ${text.slice(0, 300)}`);
    }
  }

  /** The document answers are checked against: the one given, else the one the app serves. */
  private documentToCheck(): OpenAPIObject {
    if (this.document) return this.document;
    if (!this.app) throw new Error('ResponseContract needs an app or a document');
    return documentOf(this.app);
  }

  private operationOf(method: string, path: string): Operation | undefined {
    this.operations ??= operationsOf(this.documentToCheck());
    const lower = method.toLowerCase();
    // A literal path wins over a template (`/message/find` over `/message/{id}`).
    const matches = this.operations.filter((operation) => operation.method === lower && operation.pattern.test(path));
    return matches.find((operation) => !operation.template.includes('{')) ?? matches[0];
  }

  private validatorOf(key: string, schema: unknown): ValidateFunction {
    let validate = this.validators.get(key);
    if (!validate) {
      const ajv = (this.ajv ??= ajvFor(this.documentToCheck()));
      validate = ajv.compile(rewriteRefs(schema) as object);
      this.validators.set(key, validate);
    }
    return validate;
  }
}

// One document per test process: every harness serves the same operations.
let cachedDocument: OpenAPIObject | undefined;
function documentOf(app: NestFastifyApplication): OpenAPIObject {
  return (cachedDocument ??= buildOpenApiDocument(app));
}

function operationsOf(document: OpenAPIObject): Operation[] {
  const operations: Operation[] = [];
  for (const [template, item] of Object.entries(document.paths)) {
    const pattern = new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}/?$`);
    for (const [method, operation] of Object.entries(item as Record<string, { responses?: Operation['responses'] }>)) {
      if (!operation || typeof operation !== 'object' || !operation.responses) continue;
      operations.push({ method, pattern, template, responses: operation.responses });
    }
  }
  return operations;
}

const DOCUMENT_ID = 'openapi.json';

function ajvFor(document: OpenAPIObject): Ajv2020 {
  // Not strict: OpenAPI keeps `example`, `discriminator`, `xml` beside JSON Schema's keywords.
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  ajv.addSchema({ $id: DOCUMENT_ID, components: rewriteRefs(document.components ?? {}) });
  return ajv;
}

/** `#/components/…` refers to the document, wherever the schema is compiled. */
function rewriteRefs(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(rewriteRefs);
  if (!schema || typeof schema !== 'object') return schema;
  return Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [
      key,
      key === '$ref' && typeof value === 'string' && value.startsWith('#/') ? `${DOCUMENT_ID}${value}` : rewriteRefs(value),
    ]),
  );
}
