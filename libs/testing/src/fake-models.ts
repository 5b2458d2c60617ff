/* eslint-disable @typescript-eslint/no-explicit-any -- the providers' wire bodies are read loosely, as the tests' protocol fixtures are (it moved here from apps/gateway/test) */
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
  provider: FakeProvider | 'embeddings' | 'speech' | 'transcription';
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  /** The conversation as plain {role, text} (tool results included as role 'tool'), whatever the provider's wire format. */
  turns: Array<{ role: string; text: string }>;
  at: number;
}

export type FakeHandler = (request: FakeRequest) => FakeReply | Promise<FakeReply>;

/** What the loopback `/v1/audio/speech` answers: audio bytes (as their content type), or an HTTP error. */
export type FakeSpeech = { audio: Buffer; contentType: string } | { status: number; error: string };
/** What the loopback `/v1/audio/transcriptions` answers: the text heard, or an HTTP error. */
export type FakeTranscription = { text: string } | { status: number; error: string };

/** A multipart/form-data upload as OpenAI's transcription endpoint reads it. */
export interface FakeUpload {
  model: string;
  responseFormat: string;
  fields: Record<string, string>;
  file: { name: string; type: string; bytes: Buffer } | null;
}

const SPEECH_FORMATS: Record<string, string> = {
  mp3: 'audio/mpeg',
  opus: 'audio/ogg',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
};
const TRANSCRIPTION_FORMATS = ['json', 'text', 'srt', 'verbose_json', 'vtt'];
/** The audio formats `/audio/transcriptions` takes, by the uploaded file's extension. */
const TRANSCRIPTION_FILE_FORMATS = ['flac', 'm4a', 'mp3', 'mp4', 'mpeg', 'mpga', 'oga', 'ogg', 'wav', 'webm'];

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
 * completions (with tool calls), embeddings, speech (`/audio/speech`) and transcriptions
 * (`/audio/transcriptions`, multipart), Anthropic messages, Gemini generateContent, and DeepSeek / any
 * OpenAI-compatible server (chat completions at the base URL, speech and transcriptions too). Every
 * request is recorded.
 */
export class FakeModels {
  readonly requests: FakeRequest[] = [];
  handler: FakeHandler = (request) => ({ text: `echo: ${lastUserText(request)}` });
  /** `/audio/speech`: what it answers (default: an error, set it in the test). */
  speech: (request: FakeRequest) => FakeSpeech | Promise<FakeSpeech> = () => ({ status: 500, error: 'no speech configured' });
  /** `/audio/transcriptions`: what it hears. */
  transcription: (upload: FakeUpload, request: FakeRequest) => FakeTranscription | Promise<FakeTranscription> = () => ({ text: '' });
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

  /** Requests to the chat models (not embeddings, speech or transcriptions). */
  chats(): FakeRequest[] {
    return this.requests.filter((request) => !['embeddings', 'speech', 'transcription'].includes(request.provider));
  }

  /** Requests to `/audio/speech` and `/audio/transcriptions`. */
  audio(kind: 'speech' | 'transcription'): FakeRequest[] {
    return this.requests.filter((request) => request.provider === kind);
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    const path = req.url ?? '';
    if (path.endsWith('/audio/transcriptions') || path.endsWith('/audio/speech')) return this.serveAudio(req, res, path, raw);
    let body: any = {};
    try {
      body = JSON.parse(raw.toString('utf8') || '{}');
    } catch {
      body = {};
    }
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

  /** OpenAI's audio API: `POST /audio/speech` (JSON in, audio bytes out) and `POST /audio/transcriptions` (multipart in, JSON or text out). */
  private async serveAudio(req: IncomingMessage, res: ServerResponse, path: string, raw: Buffer): Promise<void> {
    const fail = (status: number, message: string, param: string | null = null) => {
      res.statusCode = status;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ error: { message, type: 'invalid_request_error', param, code: null } }));
    };
    const provider = path.endsWith('/audio/speech') ? 'speech' : 'transcription';
    const request: FakeRequest = { provider, path, headers: req.headers, body: {}, turns: [], at: Date.now() };
    this.requests.push(request);
    if (req.method !== 'POST') return fail(405, `${req.method} is not allowed`);
    if (!/^Bearer \S+/.test(String(req.headers.authorization ?? ''))) return fail(401, 'You didn’t provide an API key.');
    if (provider === 'speech') {
      let body: any;
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        return fail(400, 'We could not parse the JSON body of your request.');
      }
      request.body = body;
      if (typeof body.model !== 'string' || !body.model) return fail(400, "Missing required parameter: 'model'.", 'model');
      if (typeof body.input !== 'string' || !body.input) return fail(400, "Missing required parameter: 'input'.", 'input');
      if (body.input.length > 4096) return fail(400, "'input' is too long: at most 4096 characters.", 'input');
      if (typeof body.voice !== 'string' || !body.voice) return fail(400, "Missing required parameter: 'voice'.", 'voice');
      const format = body.response_format ?? 'mp3';
      if (!SPEECH_FORMATS[format]) return fail(400, `Invalid value for 'response_format': ${String(format)}.`, 'response_format');
      const answer = await this.speech(request);
      if ('status' in answer) return fail(answer.status, answer.error);
      res.setHeader('content-type', answer.contentType);
      res.end(answer.audio);
      return;
    }
    const type = String(req.headers['content-type'] ?? '');
    if (!type.startsWith('multipart/form-data')) return fail(400, 'Expected a multipart/form-data body.');
    const form = await new Response(raw, { headers: { 'content-type': type } }).formData();
    const fields: Record<string, string> = {};
    let file: FakeUpload['file'] = null;
    for (const [name, value] of form.entries()) {
      if (typeof value === 'string') fields[name] = value;
      else if (name === 'file') file = { name: value.name, type: value.type, bytes: Buffer.from(await value.arrayBuffer()) };
    }
    const upload: FakeUpload = { model: fields.model ?? '', responseFormat: fields.response_format || 'json', fields, file };
    request.body = { ...fields, file: file ? { name: file.name, type: file.type, size: file.bytes.length } : null };
    if (!upload.model) return fail(400, "Missing required parameter: 'model'.", 'model');
    if (!file || !file.bytes.length) return fail(400, "Missing required parameter: 'file'.", 'file');
    // OpenAI reads the format from the file name's extension and refuses one it does not know.
    const extension = /\.([a-z0-9]+)$/i.exec(file.name)?.[1]?.toLowerCase() ?? '';
    if (!TRANSCRIPTION_FILE_FORMATS.includes(extension))
      return fail(400, `Unrecognized file format. Supported formats: ${JSON.stringify(TRANSCRIPTION_FILE_FORMATS)}`, 'file');
    if (!TRANSCRIPTION_FORMATS.includes(upload.responseFormat))
      return fail(400, `Invalid value for 'response_format': ${upload.responseFormat}.`, 'response_format');
    const heard = await this.transcription(upload, request);
    if ('status' in heard) return fail(heard.status, heard.error);
    if (upload.responseFormat === 'text') {
      res.setHeader('content-type', 'text/plain; charset=utf-8');
      res.end(heard.text);
      return;
    }
    res.setHeader('content-type', 'application/json');
    if (upload.responseFormat === 'verbose_json') {
      res.end(
        JSON.stringify({
          task: 'transcribe',
          language: 'portuguese',
          duration: 1.5,
          text: heard.text,
          segments: [
            {
              id: 0,
              seek: 0,
              start: 0,
              end: 1.5,
              text: heard.text,
              tokens: [1],
              temperature: 0,
              avg_logprob: -0.2,
              compression_ratio: 1,
              no_speech_prob: 0.01,
            },
          ],
        }),
      );
      return;
    }
    res.end(JSON.stringify({ text: heard.text, usage: { type: 'duration', seconds: 2 } }));
  }
}

/** A short mono 16-bit PCM WAV of a sine tone (test audio: a voice note's or a speech answer's source). */
export function sineWav(hz: number, ms = 400, rate = 16_000): Buffer {
  const samples = Math.floor((rate * ms) / 1000);
  const data = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) data.writeInt16LE(Math.round(Math.sin((2 * Math.PI * hz * i) / rate) * 12_000), i * 2);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVEfmt ', 8, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}
