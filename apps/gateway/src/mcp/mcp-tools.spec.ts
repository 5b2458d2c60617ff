import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { OpenAPIObject, OperationObject } from '@nestjs/swagger';
import { ApiError } from '../common/api-error';
import { buildDocumentWithoutServices } from '../openapi/document-app';
import { SECURITY_SCHEMES } from '../openapi/openapi.document';
import { toolRequest } from './mcp-tool-call';
import { buildMcpCatalogue, EXCLUDED_OPERATIONS, type McpTool, toolName } from './mcp-tools';

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

function operationsOf(document: OpenAPIObject): { key: string; operation: OperationObject }[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    METHODS.filter((method) => (item as Record<string, unknown>)[method]).map((method) => ({
      key: `${method.toUpperCase()} ${path}`,
      operation: (item as Record<string, OperationObject>)[method],
    })),
  );
}

describe('buildMcpCatalogue', () => {
  let document: OpenAPIObject;
  let tools: McpTool[];
  const tool = (name: string) => tools.find((candidate) => candidate.name === name) as McpTool;

  beforeAll(async () => {
    document = await buildDocumentWithoutServices();
    const catalogue = buildMcpCatalogue(document);
    expect(catalogue.unfit).toEqual([]);
    tools = catalogue.tools;
  }, 120_000);

  it('should make every operation of the document a tool, or list it as excluded with a reason', () => {
    const operations = operationsOf(document);
    const routes = new Set(tools.map((candidate) => `${candidate.route.method} ${candidate.route.path}`));
    for (const { key } of operations)
      expect({ key, tool: routes.has(key), excluded: key in EXCLUDED_OPERATIONS }).toEqual({
        key,
        tool: !(key in EXCLUDED_OPERATIONS),
        excluded: !routes.has(key),
      });
    // No stale exclusion: each names an operation the document has.
    for (const key of Object.keys(EXCLUDED_OPERATIONS)) expect(operations.map((operation) => operation.key)).toContain(key);
    expect(tools).toHaveLength(operations.length - Object.keys(EXCLUDED_OPERATIONS).length);
  });

  it('should list every excluded operation in docs/mcp.md, for agent hosts', () => {
    const doc = readFileSync(join(__dirname, '../../../../docs/mcp.md'), 'utf8');
    for (const key of Object.keys(EXCLUDED_OPERATIONS)) expect(doc).toContain(`| \`${key}\` |`);
  });

  it('should give each tool the audience of its security scheme, never an admin route to instance tokens', () => {
    const byKey = new Map(operationsOf(document).map(({ key, operation }) => [key, operation]));
    for (const candidate of tools) {
      const schemes = (byKey.get(`${candidate.route.method} ${candidate.route.path}`)?.security ?? []).flatMap((requirement) => Object.keys(requirement));
      expect({ name: candidate.name, audience: candidate.audience }).toEqual({
        name: candidate.name,
        audience: schemes.includes(SECURITY_SCHEMES.admin) ? 'admin' : 'instance',
      });
    }
    expect(tool('instance_create').audience).toBe('admin');
    expect(tool('send_text').audience).toBe('instance');
  });

  it('should name tools uniquely, within what MCP hosts accept', () => {
    const names = tools.map((candidate) => candidate.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    expect(toolName('post', '/send/text', false)).toBe('send_text');
    expect(toolName('delete', '/instance', false)).toBe('instance_delete');
    expect(toolName('get', '/instance/proxy', true)).toBe('instance_proxy_get');
    expect(toolName('get', '/group/invitelink/{groupJid}', false)).toBe('group_invitelink');
  });

  it("should take the body DTO's fields and the parameters as the input schema, self-contained", () => {
    const sendText = tool('send_text');
    expect(sendText.inputSchema.properties).toHaveProperty('number');
    expect(sendText.inputSchema.properties).toHaveProperty('text');
    expect(sendText.description).toContain('Route: POST /send/text');
    expect(sendText.route).toMatchObject({ method: 'POST', hasBody: true, pathParameters: [] });
    const invite = tool('group_invitelink');
    expect(invite.inputSchema.required).toContain('groupJid');
    expect(invite.route.pathParameters).toEqual(['groupJid']);
    const audit = tool('admin_audit');
    expect(audit.route.queryParameters).toEqual(expect.arrayContaining(['limit', 'cursor']));
    expect(audit.annotations.readOnlyHint).toBe(true);
    for (const candidate of tools) {
      const text = JSON.stringify(candidate.inputSchema);
      expect(text).not.toContain('#/components/');
      for (const [, name] of text.matchAll(/"#\/\$defs\/([^"]+)"/g))
        expect({ tool: candidate.name, def: name, found: Boolean(candidate.inputSchema.$defs?.[name]) }).toEqual({
          tool: candidate.name,
          def: name,
          found: true,
        });
      // Credentials are the MCP request's, never an argument.
      expect(Object.keys(candidate.inputSchema.properties)).not.toEqual(expect.arrayContaining(['token']));
      expect(candidate.description.length).toBeGreaterThan(0);
    }
  });
});

describe('toolRequest', () => {
  const route = (overrides: Partial<McpTool['route']>): McpTool =>
    ({ route: { method: 'POST', path: '/x', pathParameters: [], queryParameters: [], headerParameters: [], hasBody: true, ...overrides } }) as McpTool;

  it('should put path parameters in the path, encoded, and the rest in the body', () => {
    const request = toolRequest(route({ path: '/group/invitelink/{groupJid}', pathParameters: ['groupJid'] }), { groupJid: 'a/b@g.us', reset: true });
    expect(request).toEqual({ method: 'POST', url: '/group/invitelink/a%2Fb%40g.us', headers: {}, body: { reset: true } });
  });

  it('should put query parameters and, on a route without a body, every other argument in the query', () => {
    const request = toolRequest(route({ method: 'GET', path: '/admin/audit', queryParameters: ['limit'], hasBody: false }), {
      limit: 5,
      action: 'a',
      token: 'other',
    });
    expect(request).toEqual({ method: 'GET', url: '/admin/audit?limit=5&action=a', headers: {} });
  });

  it('should answer a missing path parameter with the 400 of the catalogue', () => {
    const request = toolRequest(route({ path: '/x/{id}', pathParameters: ['id'] }), {});
    expect(request).toBeInstanceOf(ApiError);
    expect((request as ApiError).body()).toEqual({ error: 'id is required' });
  });
});
