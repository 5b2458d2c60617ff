import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * What we compare against of uazapiGO's OpenAPI reference (its operations and the request fields each
 * names), kept in the repository so a fresh clone and CI need nothing beside it; relative to the
 * repository's root. `node tools/api-coverage/vendor-reference.js` writes it again from the full reference.
 */
export const REFERENCE_RELATIVE_PATH = 'docs/reference/uazapi-openapi-2.1.0.requests.json';

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

type Json = Record<string, unknown>;

/** One operation of a document, with the request fields (body properties and query parameters) it names. */
export interface DocumentOperation {
  method: string;
  path: string;
  /** `METHOD /path` with path parameters unnamed (`/files/{}`), the key both documents are matched on. */
  key: string;
  fields: string[];
}

/** The reference, parsed; a clear error when it is not where the repository expects it. */
export function loadReference(repoRoot: string): Json {
  const file = resolve(repoRoot, REFERENCE_RELATIVE_PATH);
  if (!existsSync(file)) throw new Error(`The uazapiGO reference is missing: expected ${file} (${REFERENCE_RELATIVE_PATH} from the repository root)`);
  return JSON.parse(readFileSync(file, 'utf8')) as Json;
}

export function operationKey(method: string, path: string): string {
  return `${method.toUpperCase()} ${path.replace(/\{[^}]*\}/g, '{}').replace(/\/+$/, '') || '/'}`;
}

/** Every operation of an OpenAPI document with the fields its request takes. */
export function operationsOf(document: Json): DocumentOperation[] {
  const found: DocumentOperation[] = [];
  for (const [path, item] of Object.entries((document.paths ?? {}) as Record<string, Json>)) {
    for (const method of METHODS) {
      const operation = item[method] as Json | undefined;
      if (!operation) continue;
      const fields = new Set<string>();
      const body = operation.requestBody as { content?: Record<string, { schema?: Json }> } | undefined;
      for (const media of Object.values(body?.content ?? {})) for (const name of propertiesOf(media.schema, document, 0)) fields.add(name);
      const parameters = [...((item.parameters as Json[] | undefined) ?? []), ...((operation.parameters as Json[] | undefined) ?? [])];
      for (const parameter of parameters) if (parameter.in === 'query' && typeof parameter.name === 'string') fields.add(parameter.name);
      found.push({ method: method.toUpperCase(), path, key: operationKey(method, path), fields: [...fields].sort() });
    }
  }
  return found;
}

/** The top-level property names of a schema: through local `$ref`s and allOf / oneOf / anyOf. */
function propertiesOf(schema: Json | undefined, document: Json, depth: number): string[] {
  if (!schema || depth > 8) return [];
  if (typeof schema.$ref === 'string') {
    // Only references inside the document are followed (the reference also points at files it does not ship).
    if (!schema.$ref.startsWith('#/')) return [];
    const target = schema.$ref
      .slice(2)
      .split('/')
      .reduce<unknown>((node, part) => (node as Json | undefined)?.[part], document) as Json | undefined;
    return propertiesOf(target, document, depth + 1);
  }
  const names = Object.keys((schema.properties as Json | undefined) ?? {});
  for (const combinator of ['allOf', 'oneOf', 'anyOf'] as const)
    for (const part of (schema[combinator] as Json[] | undefined) ?? []) names.push(...propertiesOf(part, document, depth + 1));
  return names;
}

/** A request field of the reference that a served operation lacks, or spells differently. */
export interface FieldGap {
  key: string;
  field: string;
  /** Our spelling when only the case (or `_`/`-`) differs. */
  ourSpelling?: string;
}

export function describeGap(gap: FieldGap): string {
  return gap.ourSpelling ? `${gap.key}: "${gap.field}" is named "${gap.ourSpelling}" here` : `${gap.key}: lacks "${gap.field}"`;
}

export interface Comparison {
  /** Reference operations we serve (same method and path). */
  served: DocumentOperation[];
  /** Reference operations we do not serve. */
  missing: DocumentOperation[];
  /** Request fields of served operations that we lack or name differently. */
  gaps: FieldGap[];
}

const loose = (name: string) => name.toLowerCase().replace(/[_-]/g, '');

/** Our document against the reference: which operations we serve, and each served one's field gaps. */
export function compareWithReference(ours: Json, reference: Json): Comparison {
  const byKey = new Map(operationsOf(ours).map((operation) => [operation.key, operation]));
  const served: DocumentOperation[] = [];
  const missing: DocumentOperation[] = [];
  const gaps: FieldGap[] = [];
  for (const wanted of operationsOf(reference)) {
    const mine = byKey.get(wanted.key);
    if (!mine) {
      missing.push(wanted);
      continue;
    }
    served.push(wanted);
    const exact = new Set(mine.fields);
    for (const field of wanted.fields) {
      if (exact.has(field)) continue;
      const ourSpelling = mine.fields.find((candidate) => loose(candidate) === loose(field));
      gaps.push({ key: wanted.key, field, ...(ourSpelling ? { ourSpelling } : {}) });
    }
  }
  return { served, missing, gaps };
}
