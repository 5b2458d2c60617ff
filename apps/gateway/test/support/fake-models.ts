import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type FakeProvider = 'openai' | 'anthropic' | 'gemini' | 'deepseek' | 'custom';

/** What a fake model answers one request with. */
export interface FakeReply {
  text?: string;
  toolCalls?: Array<{ name: string; args: Record<string, unknown> }>;
  /** Answer after this long. */
  delayMs?: number;
  /** An HTTP error instead (with `error` as its message). */
  status?: number;
  error?: string;
}

/** One request a fake model received. */
export interface FakeRequest {
  provider: FakeProvider | 'embeddings';
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  /** The conversation as plain {role, text} (tool results included as role 'tool'), whatever the provider's wire format. */
  turns: Array<{ role: string; text: string }>;
  at: number;
}

export type FakeHandler = (request: FakeRequest) => FakeReply | Promise<FakeReply>;

/** The last thing the contact said, in any provider's format. */
export function lastUserText(request: FakeRequest): string {
  return [...request.turns].reverse().find((turn) => turn.role === 'user')?.text ?? '';
}

/** Whether the conversation already holds a tool's result (the model is asked again after its tool call). */
export function hasToolResult(request: FakeRequest): boolean {
  return request.turns.some((turn) => turn.role === 'tool');
}

function flatten(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .map((part: any) =>
        typeof part === 'string'
          ? part
          : (part?.text ??
            (part?.type === 'tool_result' ? flatten(part.content) : part?.functionResponse ? JSON.stringify(part.functionResponse.response) : '')),
      )
      .join('');
  return '';
}

function turnsOf(provider: FakeRequest['provider'], body: any): FakeRequest['turns'] {
  if (provider === 'anthropic') {
    const system = body.system ? [{ role: 'system', text: flatten(body.system) }] : [];
    return [
      ...system,
      ...(body.messages ?? []).map((message: any) => ({
        role: Array.isArray(message.content) && message.content.some((part: any) => part.type === 'tool_result') ? 'tool' : message.role,
        text: flatten(message.content),
      })),
    ];
  }
  if (provider === 'gemini') {
    const system = body.systemInstruction ? [{ role: 'system', text: flatten(body.systemInstruction.parts) }] : [];
    return [
      ...system,
      ...(body.contents ?? []).map((content: any) => ({
        role: content.parts?.some((part: any) => part.functionResponse) ? 'tool' : content.role === 'model' ? 'assistant' : content.role,
        text: flatten(content.parts),
      })),
    ];
  }
  return (body.messages ?? []).map((message: any) => ({ role: message.role, text: flatten(message.content) }));
}

let callCounter = 0;

/** The wire answer of each provider for a reply. */
function wireAnswer(provider: FakeRequest['provider'], body: any, reply: FakeReply): unknown {
  const calls = (reply.toolCalls ?? []).map((call) => ({ ...call, id: `call_${++callCounter}` }));
  if (provider === 'anthropic')
    return {
      id: `msg_${++callCounter}`,
      type: 'message',
      role: 'assistant',
      model: body.model,
      content: [
        ...(reply.text ? [{ type: 'text', text: reply.text }] : []),
        ...calls.map((call) => ({ type: 'tool_use', id: call.id, name: call.name, input: call.args })),
      ],
      stop_reason: calls.length ? 'tool_use' : 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 5 },
    };
  if (provider === 'gemini')
    return {
      candidates: [
        {
          content: {
            role: 'model',
            parts: [...(reply.text ? [{ text: reply.text }] : []), ...calls.map((call) => ({ functionCall: { name: call.name, args: call.args } }))],
          },
          finishReason: 'STOP',
          index: 0,
        },
      ],
      usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
    };
  return {
    id: `chatcmpl-${++callCounter}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: body.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: reply.text ?? null,
          ...(calls.length
            ? { tool_calls: calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.args) } })) }
            : {}),
        },
        finish_reason: calls.length ? 'tool_calls' : 'stop',
      },
    ],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  };
}

function errorAnswer(provider: FakeRequest['provider'], reply: FakeReply): unknown {
  const message = reply.error ?? 'fake provider error';
  if (provider === 'anthropic') return { type: 'error', error: { type: 'api_error', message } };
  if (provider === 'gemini') return { error: { code: reply.status, message, status: 'INTERNAL' } };
  return { error: { message, type: 'server_error', code: null } };
}

/** A deterministic embedding of a text (64 dims), so similarity tests do not depend on a real model. */
export function fakeEmbedding(text: string): number[] {
  const vector = new Array<number>(64).fill(0);
  for (const word of text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean)) {
    let hash = 0;
    for (const char of word) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
    vector[hash % 64] += 1;
  }
  return vector;
}

/**
 * Loopback servers that speak each provider's wire protocol as the AI SDK calls it: OpenAI chat
 * completions (with tool calls) and embeddings, Anthropic messages, Gemini generateContent, and
 * DeepSeek / any OpenAI-compatible server (chat completions at the base URL). Every request is recorded.
 */
export class FakeModels {
  readonly requests: FakeRequest[] = [];
  handler: FakeHandler = (request) => ({ text: `echo: ${lastUserText(request)}` });
  private server!: Server;
  baseUrl = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.serve(req, res));
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** The env that points every provider here. */
  env(): Record<string, string> {
    return {
      OPENAI_BASE_URL: `${this.baseUrl}/openai/v1`,
      ANTHROPIC_BASE_URL: `${this.baseUrl}/anthropic/v1`,
      GEMINI_BASE_URL: `${this.baseUrl}/gemini/v1beta`,
      DEEPSEEK_BASE_URL: `${this.baseUrl}/deepseek`,
    };
  }

  /** Requests to the chat models (not embeddings). */
  chats(): FakeRequest[] {
    return this.requests.filter((request) => request.provider !== 'embeddings');
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let body: any = {};
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
    } catch {
      body = {};
    }
    const path = req.url ?? '';
    const provider: FakeRequest['provider'] = path.endsWith('/embeddings')
      ? 'embeddings'
      : path.startsWith('/anthropic')
        ? 'anthropic'
        : path.startsWith('/gemini')
          ? 'gemini'
          : path.startsWith('/deepseek')
            ? 'deepseek'
            : path.startsWith('/custom')
              ? 'custom'
              : 'openai';
    const request: FakeRequest = {
      provider,
      path,
      headers: req.headers,
      body,
      turns: provider === 'embeddings' ? [] : turnsOf(provider, body),
      at: Date.now(),
    };
    this.requests.push(request);
    res.setHeader('content-type', 'application/json');
    if (provider === 'embeddings') {
      const inputs: string[] = Array.isArray(body.input) ? body.input : [body.input];
      res.end(
        JSON.stringify({
          object: 'list',
          data: inputs.map((input, index) => ({ object: 'embedding', index, embedding: fakeEmbedding(String(input)) })),
          model: body.model,
          usage: { prompt_tokens: 1, total_tokens: 1 },
        }),
      );
      return;
    }
    let reply: FakeReply;
    try {
      reply = await this.handler(request);
    } catch (error) {
      reply = { status: 500, error: (error as Error).message };
    }
    if (reply.delayMs) await new Promise((resolve) => setTimeout(resolve, reply.delayMs));
    if (res.destroyed) return;
    if (reply.status && reply.status >= 400) {
      res.statusCode = reply.status;
      res.end(JSON.stringify(errorAnswer(provider, reply)));
      return;
    }
    res.end(JSON.stringify(wireAnswer(provider, body, reply)));
  }
}
