import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { MessageRepository } from '@gw/persistence';
import { newMessageFixture } from '@gw/testing';
import { buildMcpCatalogue } from '../src/mcp/mcp-tools';
import { buildOpenApiDocument } from '../src/openapi/openapi.document';
import { startGateway, type GatewayHarness } from './support/gateway-harness';
import { nextPhone, Stack } from './support/stack';

/** An MCP client of the SDK over streamable HTTP, sending `headers` on every request (as an agent host configured with a token). */
async function mcpClient(baseUrl: string, headers: Record<string, string>, path = '/mcp'): Promise<Client> {
  const client = new Client({ name: 'e2e-agent', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}${path}`), { requestInit: { headers } }));
  return client;
}

/** A tool's result as the route's JSON answer, and whether it is a tool error. */
async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<{ isError: boolean; body: any }> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const text = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
  return { isError: Boolean(result.isError), body: JSON.parse(text) };
}

/**
 * /mcp end to end (issue #40) with the SDK's own client: the tools each token lists, a message sent
 * through the stack (worker, Baileys, simulated phone) and read back, a route's error as a tool error,
 * and a tenant kept to its own instance.
 */
describe('MCP server (POST /mcp) with real Baileys against the simulator', () => {
  const stack = new Stack();
  let own: { id: string; token: string };
  let other: { id: string; token: string };
  let contact: string;
  let agent: Client;
  let expected: { instance: string[]; admin: string[]; sendAndMessages: string[] };

  beforeAll(async () => {
    await stack.start();
    own = await stack.connectedInstance('mcp-agent');
    other = await stack.gw.createInstance('mcp-other');
    contact = nextPhone('5541');
    await stack.control('POST', '/sim/accounts', { phone: contact, name: 'Cliente' });
    const tools = buildMcpCatalogue(buildOpenApiDocument(stack.gw.app)).tools;
    expected = {
      instance: tools.filter((tool) => tool.audience === 'instance').map((tool) => tool.name),
      admin: tools.filter((tool) => tool.audience === 'admin').map((tool) => tool.name),
      sendAndMessages: tools.filter((tool) => tool.audience === 'instance' && ['Send', 'Messages'].includes(tool.area)).map((tool) => tool.name),
    };
    agent = await mcpClient(stack.gw.baseUrl, { token: own.token });
  }, 90_000);

  afterAll(async () => {
    await agent?.close();
    await stack.stop();
  });

  it('should answer 401 {error} without a token, and 403 for a wrong admin token', async () => {
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    };
    const post = (headers: Record<string, string>) =>
      fetch(`${stack.gw.baseUrl}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: JSON.stringify(initialize),
      });
    const none = await post({});
    expect(none.status).toBe(401);
    expect(await none.json()).toEqual({ error: 'Invalid token' });
    expect((await post({ authorization: 'Bearer not-a-token' })).status).toBe(401);
    const wrongAdmin = await post({ admintoken: 'not-the-admin-token' });
    expect(wrongAdmin.status).toBe(403);
    expect(await wrongAdmin.json()).toEqual({ error: 'Invalid AdminToken Header' });
    await expect(mcpClient(stack.gw.baseUrl, {})).rejects.toMatchObject({ code: 401 });
    // Stateless: no session stream to open.
    expect((await fetch(`${stack.gw.baseUrl}/mcp`, { headers: { token: own.token } })).status).toBe(405);
  });

  it('should list an instance token every instance tool and no admin tool, and the admin token the admin tools', async () => {
    const listed = (await agent.listTools()).tools.map((tool) => tool.name);
    expect(listed.sort()).toEqual([...expected.instance].sort());
    expect(listed.length).toBeGreaterThan(100);
    expect(listed).toEqual(expect.arrayContaining(['send_text', 'message_find']));
    for (const admin of ['instance_create', 'instance_all', 'admin_audit']) expect(listed).not.toContain(admin);
    const sendText = (await agent.listTools()).tools.find((tool) => tool.name === 'send_text');
    expect(sendText?.inputSchema.properties).toHaveProperty('number');
    expect(sendText?.description).toContain('POST /send/text');

    const operator = await mcpClient(stack.gw.baseUrl, { admintoken: stack.gw.adminToken });
    const adminTools = (await operator.listTools()).tools.map((tool) => tool.name);
    expect(adminTools.sort()).toEqual([...expected.admin].sort());
    expect(adminTools).toEqual(expect.arrayContaining(['instance_create', 'instance_all']));
    expect(adminTools).not.toContain('send_text');
    const all = await call(operator, 'instance_all');
    expect(all.isError).toBe(false);
    expect(all.body.map((instance: { id: string }) => instance.id)).toEqual(expect.arrayContaining([own.id, other.id]));
    await operator.close();

    // The same tokens as `Authorization: Bearer`, as most agent hosts send a secret.
    const bearer = await mcpClient(stack.gw.baseUrl, { authorization: `Bearer ${own.token}` });
    expect((await bearer.listTools()).tools).toHaveLength(expected.instance.length);
    await bearer.close();
    const bearerAdmin = await mcpClient(stack.gw.baseUrl, { authorization: `Bearer ${stack.gw.adminToken}` });
    expect((await bearerAdmin.listTools()).tools).toHaveLength(expected.admin.length);
    await bearerAdmin.close();
  });

  it('should keep the tools to the areas of ?areas=, and refuse an unknown area', async () => {
    const some = await mcpClient(stack.gw.baseUrl, { token: own.token }, '/mcp?areas=Send,messages');
    const listed = (await some.listTools()).tools.map((tool) => tool.name);
    expect(listed.sort()).toEqual([...expected.sendAndMessages].sort());
    expect(listed).toEqual(expect.arrayContaining(['send_text', 'message_find']));
    expect(listed).not.toContain('instance_status');
    await expect(some.callTool({ name: 'instance_status', arguments: {} })).rejects.toThrow(/Unknown tool/);
    await some.close();
    await expect(mcpClient(stack.gw.baseUrl, { token: own.token }, '/mcp?areas=Send,Nope')).rejects.toMatchObject({
      code: 400,
      message: expect.stringContaining('Unknown area: Nope'),
    });
  });

  it('should send a message that reaches the phone, and read it back with message_find', async () => {
    const sent = await call(agent, 'send_text', { number: contact, text: 'Olá from an agent', track_id: 'mcp-1' });
    expect(sent.isError).toBe(false);
    expect(sent.body).toMatchObject({ chatid: `${contact}@s.whatsapp.net`, fromMe: true, status: 'Sent', text: 'Olá from an agent', track_id: 'mcp-1' });
    const received = await stack.received(contact, sent.body.messageid);
    expect(received.message.extendedTextMessage?.text ?? received.message.conversation).toBe('Olá from an agent');

    const found = await call(agent, 'message_find', { track_id: 'mcp-1' });
    expect(found.isError).toBe(false);
    expect(found.body.messages.map((message: { messageid: string }) => message.messageid)).toEqual([sent.body.messageid]);
  });

  it("should answer a bad input with a tool error carrying the route's {error}", async () => {
    expect(await call(agent, 'send_text', { number: contact })).toEqual({ isError: true, body: { error: 'missing number or text' } });
    const badPaging = await call(agent, 'message_find', { limit: 0 });
    expect(badPaging.isError).toBe(true);
    expect(badPaging.body).toEqual({ error: expect.any(String) });
  });

  it("should refuse another instance's records and the admin tools to an instance token", async () => {
    await stack.db.dataSource.transaction((manager) =>
      new MessageRepository(stack.db.dataSource).within(manager).upsert(newMessageFixture(other.id, { messageId: 'OTHER-INSTANCE-1', sendPayload: {} })),
    );
    // Its token as an argument changes nothing: the caller's token is the request's.
    const found = await call(agent, 'message_find', { id: 'OTHER-INSTANCE-1', token: other.token });
    expect(found.body).toMatchObject({ returnedMessages: 0, messages: [] });
    // The row exists, but for the other instance: this one's route does not find it.
    expect(await call(agent, 'message_react', { number: contact, id: 'OTHER-INSTANCE-1', text: '👍' })).toEqual({
      isError: true,
      body: { error: 'Message not found' },
    });
    await expect(agent.callTool({ name: 'instance_all', arguments: {} })).rejects.toThrow(/Unknown tool: instance_all/);
    await expect(agent.callTool({ name: 'instance_create', arguments: { name: 'sneaky' } })).rejects.toThrow(/Unknown tool/);
  });

  it("should audit a change made through a tool as the route's, by the instance's id", async () => {
    const renamed = await call(agent, 'instance_updateInstanceName', { name: 'renamed-by-agent' });
    expect(renamed.isError).toBe(false);
    const audit = await call(agent, 'instance_audit', { action: 'instance.rename' });
    expect(audit.body.entries[0]).toMatchObject({ actor: own.id, instance_id: own.id, route: '/instance/updateInstanceName', status: 200 });
    expect(JSON.stringify(audit.body)).not.toContain(own.token);
  });
});

describe('MCP server rate limits', () => {
  let gw: GatewayHarness;

  beforeAll(async () => {
    // A bucket that refills one request a minute: within the test, what is spent is counted exactly.
    gw = await startGateway({ env: { RATE_LIMIT_INSTANCE: '1/m,burst=6' } });
  }, 30_000);
  afterAll(() => gw?.close());

  it("should charge a tool call once, as its route, and refuse it with the route's 429 once the token is out", async () => {
    const { token } = await gw.createInstance('mcp-limited');
    // initialize and notifications/initialized: two requests of the budget.
    const client = await mcpClient(gw.baseUrl, { token });
    const results = [];
    for (let n = 0; n < 5; n++) results.push(await call(client, 'instance_status'));
    expect(results.map((result) => result.isError)).toEqual([false, false, false, false, true]);
    expect(results[4].body).toEqual({ error: 'Too many requests' });
    // A request that calls no tool is charged as the /mcp request: over the limit, the HTTP 429.
    await expect(client.listTools()).rejects.toMatchObject({ code: 429, message: expect.stringContaining('Too many requests') });
    await client.close();
  });
});
