#!/usr/bin/env node
// Writes docs/reference/uazapi-openapi-2.1.0.requests.json, the part of uazapiGO's OpenAPI reference that
// `npm run api:coverage` and the OpenAPI conformance spec compare against: every operation (method and
// path) with the request fields it names (query parameters, and the top-level properties of its body
// through local $refs and allOf / oneOf / anyOf). Kept in the repository so a fresh clone (and CI) needs
// nothing beside it. Run again when the reference changes:
//   node tools/api-coverage/vendor-reference.js [path/to/uazapi-openapi.yaml]
const { readFileSync, writeFileSync } = require('node:fs');
const path = require('node:path');
const { parse } = require('yaml');

const workspaceRoot = path.join(__dirname, '../..');
const source = process.argv[2] ?? path.join(workspaceRoot, '../shared/reference/uazapi-openapi-2.1.0.yaml');
const target = path.join(workspaceRoot, 'docs/reference/uazapi-openapi-2.1.0.requests.json');
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

const reference = parse(readFileSync(source, 'utf8'));

function propertiesOf(schema, depth) {
  if (!schema || depth > 8) return [];
  if (typeof schema.$ref === 'string') {
    if (!schema.$ref.startsWith('#/')) return [];
    const target = schema.$ref
      .slice(2)
      .split('/')
      .reduce((node, part) => node?.[part], reference);
    return propertiesOf(target, depth + 1);
  }
  const names = Object.keys(schema.properties ?? {});
  for (const combinator of ['allOf', 'oneOf', 'anyOf']) for (const part of schema[combinator] ?? []) names.push(...propertiesOf(part, depth + 1));
  return names;
}

const paths = {};
for (const [route, item] of Object.entries(reference.paths ?? {})) {
  for (const method of METHODS) {
    const operation = item[method];
    if (!operation) continue;
    const query = [...(item.parameters ?? []), ...(operation.parameters ?? [])]
      .filter((parameter) => parameter.in === 'query' && typeof parameter.name === 'string')
      .map((parameter) => parameter.name);
    const body = new Set();
    for (const media of Object.values(operation.requestBody?.content ?? {})) for (const name of propertiesOf(media.schema, 0)) body.add(name);
    const entry = {};
    if (query.length) entry.parameters = [...new Set(query)].sort().map((name) => ({ name, in: 'query' }));
    if (body.size)
      entry.requestBody = {
        content: { 'application/json': { schema: { type: 'object', properties: Object.fromEntries([...body].sort().map((name) => [name, {}])) } } },
      };
    (paths[route] ??= {})[method] = entry;
  }
}

const document = {
  openapi: reference.openapi,
  info: {
    title: reference.info?.title,
    version: reference.info?.version,
    description:
      'The operations of the uazapiGO OpenAPI reference and the request fields each names; written by tools/api-coverage/vendor-reference.js from the full reference.',
  },
  paths,
};
writeFileSync(target, `${JSON.stringify(document, null, 2)}\n`);
const count = Object.values(paths).reduce((sum, item) => sum + Object.keys(item).length, 0);
process.stdout.write(`${path.relative(workspaceRoot, target)}: ${count} operations\n`);
