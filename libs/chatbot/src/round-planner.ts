import type { OutboundContent } from '@gw/contracts';
import { buildButtonMenu, buildListMenu, buildPoll, CUSTOM_LEAD_FIELDS, parseButtons, parseList, parsePoll } from '@gw/domain';
import type { ChatHistoryRow, QuickReplyRow, RetrievedChunk } from '@gw/persistence';
import { generateText, jsonSchema, stepCountIs, tool, type LanguageModel, type ModelMessage, type ToolSet } from 'ai';
import { randomBytes } from 'node:crypto';
import { callFunction } from './functions';
import { callSettings, modelOptions, type ModelOptions } from './providers';
import type { AgentSettings, FunctionSettings, Stored } from './records';
import { audioKind, describeAudio } from './audio-messages';
import { fieldName, LEAD_FIELDS, leadToolSchema, leadUpdate } from './lead-tool';

/** One message the round sends, with the ids fixed before the first send (a resend of the same id is not sent twice). */
export interface PlannedSend {
  recordId: string;
  messageId: string;
  /** text | audio (the answer spoken) | menu | file | quickreply */
  kind: string;
  content: OutboundContent;
  /** What the tool or answer asked for (the send's sendPayload). */
  payload: Record<string, unknown>;
}

/** The seed's `ai_metadata` record. */
export interface AiMetadata {
  agent_id: string;
  turn: string;
  flow_id: string;
  request: { messages: unknown[]; tools: unknown[]; options: ModelOptions };
  response: { choices: unknown[]; toolResults: unknown[]; error: string };
  outcome: { status: string; texts: number; audio: boolean; menus: number; files: number; handoff: string; lead: string[]; detail: string };
}

/** What a round decided, stored in the round before anything is sent. */
export interface RoundPlan {
  metadata: AiMetadata;
  sends: PlannedSend[];
  /** The model handed the chat to a person (its reason), or ''. */
  handoff: string;
  /** The model call ended in an error or a timeout: nothing is sent. */
  failed: boolean;
  /** Lead fields the model set (`update_lead`; lead_tags an array), written to the chat when the round ends. */
  lead: Record<string, string | string[]>;
  /** Timing (ms since epoch) for the bench: model request sent, model answered. */
  modelStartedAt: number;
  modelEndedAt: number;
}

export interface PlanInput {
  agent: Stored<AgentSettings>;
  model: LanguageModel;
  /** The contact's message the round replies to (the last one gathered). */
  turn: string;
  /** The chat's recent messages, newest first (the round's own included). */
  history: ChatHistoryRow[];
  /** The round's own messages (their `message` records): added after the history when it lacks them. */
  inputs?: Array<Record<string, unknown>>;
  /** The chat record of the last event (lead fields). */
  chat: Record<string, unknown>;
  /** What the voice notes among the history and the inputs said, by message id (absent: a placeholder). */
  transcripts?: Map<string, string>;
  /** The instance's names of lead_field01…20 (`/instance/updateFieldsMap`). */
  fieldsMap?: Record<string, string>;
  isGroup: boolean;
  knowledge: RetrievedChunk[];
  quickReplies: QuickReplyRow[];
  functions: Array<Stored<FunctionSettings>>;
  fetch: typeof globalThis.fetch;
  modelTimeoutMs: number;
  functionTimeoutMs: number;
  maxSteps: number;
}

export function newMessageIds(): { recordId: string; messageId: string } {
  return { recordId: `r${randomBytes(4).toString('hex').slice(0, 7)}`, messageId: `3EB0${randomBytes(9).toString('hex').toUpperCase()}` };
}

/** `text` cut into parts of at most `max` characters, at a paragraph, line, sentence or word end where one is near. */
export function splitMessage(text: string, max: number): string[] {
  const clean = text.trim();
  if (!clean) return [];
  if (max <= 0 || clean.length <= max) return [clean];
  const parts: string[] = [];
  let rest = clean;
  while (rest.length > max) {
    const window = rest.slice(0, max + 1);
    const cut = [/\n\n(?!.*\n\n)/s, /\n(?!.*\n)/s, /[.!?](?=\s)(?!.*[.!?]\s)/s, /\s(?!.*\s)/s]
      .map((pattern) => pattern.exec(window))
      .find((match) => match && match.index >= max * 0.5);
    const end = cut ? cut.index + (cut[0].trim() ? cut[0].length : 0) : max;
    parts.push(rest.slice(0, end).trim());
    rest = rest.slice(end).trim();
  }
  if (rest) parts.push(rest);
  return parts.filter(Boolean);
}

function describe(row: ChatHistoryRow, transcripts?: Map<string, string>): string {
  const audio = audioKind(row);
  // Our own voice notes: the text the bot spoke (its send's payload).
  const spoken = row.fromMe ? (row.sendPayload as { text?: unknown } | null)?.text : undefined;
  if (audio) return describeAudio(audio, typeof spoken === 'string' ? spoken : transcripts?.get(row.messageId));
  if (row.text) return row.text;
  if (row.mediaType) return `[${row.mediaType}]`;
  return `[${row.messageType || 'message'}]`;
}

/** The system prompt: the agent's base prompt, the lead fields, what knowledge retrieval returned, and how to use the tools. */
function systemPrompt(input: PlanInput): string {
  const parts = [input.agent.basePrompt.trim() || 'You are a helpful assistant answering WhatsApp messages.'];
  const lead = LEAD_FIELDS.map((field) => [field, input.chat[field]] as const).filter(
    ([, value]) => value !== undefined && value !== '' && value !== null && value !== false && !(Array.isArray(value) && value.length === 0),
  );
  const custom = Object.entries(input.chat).filter(([field, value]) => /^lead_field\d\d$/.test(field) && value);
  const name = input.chat.wa_contactName || input.chat.wa_name || input.chat.name;
  if (name || lead.length || custom.length)
    parts.push(
      [
        'About the contact:',
        ...(name ? [`- name: ${String(name)}`] : []),
        ...lead.map(([field, value]) => `- ${field}: ${JSON.stringify(value)}`),
        ...custom.map(([field, value]) => {
          const label = fieldName(input.fieldsMap ?? {}, field);
          return `- ${field}${label ? ` (${label})` : ''}: ${JSON.stringify(value)}`;
        }),
      ].join('\n'),
    );
  if (input.knowledge.length) parts.push(['Knowledge (use it when it answers the question):', ...input.knowledge.map((chunk) => `- ${chunk.text}`)].join('\n'));
  return parts.join('\n\n');
}

/** The model's context: the system prompt, then the chat's history oldest first (the contact as user, us as assistant). */
export function contextMessages(input: PlanInput): ModelMessage[] {
  const messages: ModelMessage[] = [{ role: 'system', content: systemPrompt(input) }];
  for (const row of [...input.history].reverse()) {
    const text = describe(row, input.transcripts);
    const content = input.isGroup && !row.fromMe && row.senderName ? `${row.senderName}: ${text}` : text;
    messages.push(row.fromMe ? { role: 'assistant', content } : { role: 'user', content });
  }
  // The round's messages are always in the context, even outside the history's window or limit.
  const seen = new Set(input.history.map((row) => row.messageId));
  for (const message of input.inputs ?? []) {
    if (seen.has(String(message.messageid ?? ''))) continue;
    const audio = audioKind(message);
    const text = audio
      ? describeAudio(audio, input.transcripts?.get(String(message.messageid ?? '')))
      : String(message.text ?? '') || `[${String(message.mediaType || message.messageType || 'message')}]`;
    messages.push({ role: 'user', content: input.isGroup && message.senderName ? `${String(message.senderName)}: ${text}` : text });
  }
  return messages;
}

/**
 * One round's thinking: the model called once (with its tool steps) through the AI SDK; the answer cut
 * into messages, the tools' sends (quick reply, menu, file) and a handoff collected, and the whole
 * exchange recorded as `ai_metadata`. A provider error or timeout answers a failed plan with nothing to
 * send. No message is sent here.
 */
export async function planRound(input: PlanInput): Promise<RoundPlan> {
  const { agent } = input;
  const options = modelOptions(agent);
  const messages = contextMessages(input);
  const actions: PlannedSend[] = [];
  let handoff = '';
  const toolResults: unknown[] = [];
  const tools: ToolSet = {};
  const documented: unknown[] = [];
  const define = (name: string, description: string, parameters: Record<string, unknown>, execute: (args: Record<string, unknown>) => Promise<unknown>) => {
    documented.push({ type: 'function', function: { name, description, parameters } });
    tools[name] = tool({
      description,
      inputSchema: jsonSchema<Record<string, unknown>>(parameters as never),
      execute: async (args: Record<string, unknown>, { toolCallId }: { toolCallId: string }) => {
        let output: unknown;
        try {
          output = await execute(args ?? {});
        } catch (error) {
          output = { error: (error as Error).message };
        }
        toolResults.push({ toolCallId, toolName: name, input: args, output });
        return output;
      },
    } as never);
  };

  if (input.quickReplies.length) {
    define(
      'send_quick_reply',
      'Send one of the business’s saved quick replies to the contact. Choose it by shortCut: ' +
        input.quickReplies.map((reply) => `"${reply.shortCut}"${reply.aiDescription ? ` (${reply.aiDescription})` : ''}`).join(', '),
      {
        type: 'object',
        properties: { shortCut: { type: 'string', enum: input.quickReplies.map((reply) => reply.shortCut) } },
        required: ['shortCut'],
        additionalProperties: false,
      },
      async (args) => {
        const reply = input.quickReplies.find((candidate) => candidate.shortCut === args.shortCut);
        if (!reply) return { error: `no quick reply ${String(args.shortCut)}` };
        const content = quickReplyContent(reply);
        if (!content) return { error: `quick reply ${reply.shortCut} cannot be sent by the assistant (kind ${String(reply.message.kind)})` };
        actions.push({ ...newMessageIds(), kind: 'quickreply', content, payload: { shortCut: reply.shortCut, quickReply_id: reply.id } });
        return { queued: true, note: 'it will be sent after your answer' };
      },
    );
  }
  define(
    'send_menu',
    'Send a menu the contact can tap: buttons (up to 3), a list, or a poll. Choices: plain texts; for a list, "[Section]" lines start sections.',
    {
      type: 'object',
      properties: {
        type: { type: 'string', enum: ['button', 'list', 'poll'] },
        text: { type: 'string', description: 'The question or text above the choices' },
        choices: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 20 },
        footerText: { type: 'string' },
        listButton: { type: 'string', description: 'list: the button that opens it' },
      },
      required: ['type', 'text', 'choices'],
      additionalProperties: false,
    },
    async (args) => {
      const content = menuContent(args);
      actions.push({ ...newMessageIds(), kind: 'menu', content, payload: args });
      return { queued: true, note: 'it will be sent after your answer' };
    },
  );
  define(
    'send_file',
    'Send a file (image, video, audio or document) from a public http(s) URL.',
    {
      type: 'object',
      properties: {
        url: { type: 'string' },
        type: { type: 'string', enum: ['image', 'video', 'audio', 'document'] },
        caption: { type: 'string' },
        docName: { type: 'string', description: 'document: the file name shown' },
      },
      required: ['url', 'type'],
      additionalProperties: false,
    },
    async (args) => {
      const url = String(args.url ?? '');
      if (!/^https?:\/\//i.test(url)) return { error: 'url must be an http(s) URL' };
      const mediaType = String(args.type) as 'image' | 'video' | 'audio' | 'document';
      const content: OutboundContent = {
        kind: 'media',
        mediaType,
        source: { url },
        mimetype: '',
        caption: mediaType === 'audio' ? '' : String(args.caption ?? ''),
        fileName: String(args.docName ?? (mediaType === 'document' ? (url.split('/').pop() ?? 'document') : '')),
        ptt: false,
        gifPlayback: false,
        ptv: false,
        viewOnce: false,
        thumbnailBase64: '',
      };
      actions.push({ ...newMessageIds(), kind: 'file', content, payload: args });
      return { queued: true, note: 'it will be sent after your answer' };
    },
  );
  define(
    'handoff',
    'Hand the conversation to a human attendant when the contact asks for a person or you cannot help. After it you stay silent in this chat.',
    { type: 'object', properties: { reason: { type: 'string' } }, required: ['reason'], additionalProperties: false },
    async (args) => {
      handoff = String(args.reason || 'handoff');
      return { handedOff: true };
    },
  );
  const lead: Record<string, string | string[]> = {};
  const named = CUSTOM_LEAD_FIELDS.filter((field) => fieldName(input.fieldsMap ?? {}, field)).map(
    (field) => `${field} = ${fieldName(input.fieldsMap ?? {}, field)}`,
  );
  define(
    'update_lead',
    'Record what you learned about the contact in their lead fields (only what they told you); "" clears a field.' +
      (named.length ? ` Custom fields: ${named.join(', ')}.` : ''),
    leadToolSchema(input.fieldsMap ?? {}),
    async (args) => {
      const { fields, errors, ignored } = leadUpdate(args);
      // Refused whole, as /chat/editLead refuses a bad request: the model may call again.
      if (errors.length) return { error: errors.join('; '), updated: [] };
      Object.assign(lead, fields);
      return { updated: Object.keys(fields), ...(ignored.length ? { ignored } : {}) };
    },
  );
  for (const fn of input.functions) {
    define(fn.name, fn.description, functionSchema(fn), (args) => callFunction(fn, args, input.fetch, input.functionTimeoutMs));
  }

  const metadata: AiMetadata = {
    agent_id: agent.id,
    turn: input.turn,
    flow_id: '',
    request: { messages, tools: documented, options },
    response: { choices: [], toolResults, error: '' },
    outcome: { status: '', texts: 0, audio: false, menus: 0, files: 0, handoff: '', lead: [], detail: '' },
  };
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error(`the model did not answer within ${input.modelTimeoutMs} ms`));
  }, input.modelTimeoutMs);
  const modelStartedAt = Date.now();
  try {
    const [system, ...conversation] = messages;
    const result = await generateText({
      model: input.model,
      instructions: system.content as string,
      messages: conversation.length ? conversation : [{ role: 'user', content: '(no text)' }],
      tools,
      stopWhen: stepCountIs(input.maxSteps),
      abortSignal: controller.signal,
      maxRetries: 0,
      ...callSettings(agent, options),
    });
    const modelEndedAt = Date.now();
    metadata.response.choices = result.steps.map((step, index) => ({
      index,
      message: {
        role: 'assistant',
        content: step.text,
        tool_calls: step.toolCalls.map((call) => ({
          id: call.toolCallId,
          type: 'function',
          function: { name: call.toolName, arguments: JSON.stringify(call.input) },
        })),
      },
      finish_reason: step.finishReason,
    }));
    const text = result.steps
      .map((step) => step.text.trim())
      .filter(Boolean)
      .join('\n\n');
    const parts = splitMessage(text, agent.maxMessageLength);
    const signature = agent.signMessages ? `*${agent.name}*\n` : '';
    const texts: PlannedSend[] = parts.map((part, index) => ({
      ...newMessageIds(),
      kind: 'text',
      content: { kind: 'text', text: index === 0 ? `${signature}${part}` : part, linkPreview: null },
      payload: { text: part },
    }));
    const sends = [...texts, ...actions];
    metadata.outcome = {
      status: sends.length ? 'sent' : handoff ? 'handoff' : 'empty',
      texts: texts.length,
      audio: false,
      menus: actions.filter((send) => send.kind === 'menu').length,
      files: actions.filter((send) => send.kind === 'file').length + actions.filter((send) => send.kind === 'quickreply').length,
      handoff,
      lead: Object.keys(lead),
      detail: sends.length ? '' : handoff ? 'handed over without a message' : 'the model answered nothing to send',
    };
    return { metadata, sends, handoff, lead, failed: false, modelStartedAt, modelEndedAt };
  } catch (error) {
    const message = timedOut ? `timeout: the model did not answer within ${input.modelTimeoutMs} ms` : errorText(error);
    metadata.response.error = message;
    metadata.outcome = { ...metadata.outcome, status: timedOut ? 'timeout' : 'error', detail: 'nothing was sent' };
    return { metadata, sends: [], handoff: '', lead: {}, failed: true, modelStartedAt, modelEndedAt: Date.now() };
  } finally {
    clearTimeout(timer);
  }
}

/** The provider's error as one line: its status and message, never the request (which carries the key in some providers' URLs). */
function errorText(error: unknown): string {
  const e = error as { name?: string; message?: string; statusCode?: number; lastError?: unknown };
  if (e?.lastError) return errorText(e.lastError);
  const status = typeof e?.statusCode === 'number' ? `${e.statusCode} ` : '';
  return `${status}${e?.message ?? String(error)}`.replace(/key=[^&\s]+/gi, 'key=***').slice(0, 1000);
}

function functionSchema(fn: FunctionSettings): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (const parameter of fn.parameters) {
    properties[parameter.name] = {
      type: parameter.type,
      ...(parameter.description ? { description: parameter.description } : {}),
      ...(parameter.enum.length ? { enum: parameter.enum } : {}),
      ...(parameter.minimum !== undefined ? { minimum: parameter.minimum } : {}),
      ...(parameter.maximum !== undefined ? { maximum: parameter.maximum } : {}),
    };
  }
  return {
    type: 'object',
    properties,
    required: fn.parameters.filter((parameter) => parameter.required).map((parameter) => parameter.name),
    additionalProperties: false,
  };
}

/** A menu from the model's choices, built as /send/menu builds it. */
function menuContent(args: Record<string, unknown>): OutboundContent {
  const text = String(args.text ?? '');
  const choices = Array.isArray(args.choices) ? args.choices.map(String) : [];
  const footer = String(args.footerText ?? '');
  const built =
    args.type === 'poll'
      ? buildPoll(text, parsePoll(choices), 1, randomBytes(32).toString('base64'))
      : args.type === 'list'
        ? buildListMenu(text, parseList(choices), String(args.listButton ?? 'Opções'), footer)
        : buildButtonMenu(text, parseButtons(choices), footer);
  return { kind: 'proto', message: built.message, messageType: built.messageType, nodes: built.nodes, attachments: [] };
}

/** A quick reply the assistant can send: text, or media by URL. */
export function quickReplyContent(reply: QuickReplyRow): OutboundContent | null {
  const message = reply.message;
  if (message.kind === 'text' && typeof message.text === 'string') return { kind: 'text', text: message.text, linkPreview: null };
  if (message.kind === 'media' && typeof message.file === 'string' && /^https?:\/\//i.test(message.file)) {
    const type = String(message.type ?? 'document');
    const mediaType = (type === 'ptt' || type === 'myaudio' ? 'audio' : type) as 'image' | 'video' | 'audio' | 'document';
    return {
      kind: 'media',
      mediaType,
      source: { url: message.file },
      mimetype: '',
      caption: typeof message.text === 'string' ? message.text : '',
      fileName: typeof message.docName === 'string' ? message.docName : '',
      ptt: type === 'ptt',
      gifPlayback: false,
      ptv: false,
      viewOnce: false,
      thumbnailBase64: '',
    };
  }
  return null;
}
