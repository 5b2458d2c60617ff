import type { SchemaObject } from '@nestjs/swagger';

/**
 * Response schemas several routes share, named as uazapiGO's reference names them
 * (components.schemas there). A route points at one with `@ApiReply(SCHEMAS.Message)`; the document
 * lists each once under components.schemas and refers to it.
 */
const str = (extra: SchemaObject = {}): SchemaObject => ({ type: 'string', ...extra });
const bool: SchemaObject = { type: 'boolean' };
const int: SchemaObject = { type: 'integer' };
/** A reusable response schema: its component name and its shape. */
export interface NamedSchema {
  readonly name: string;
  readonly schema: SchemaObject;
}

const named = (name: string, schema: SchemaObject): NamedSchema => ({ name, schema });
/** A reference to another schema of this file (the document lists them all under components.schemas). */
const ref = (name: string): SchemaObject => ({ $ref: `#/components/schemas/${name}` }) as SchemaObject;
const object = (properties: Record<string, SchemaObject>, required?: string[]): SchemaObject => ({
  type: 'object',
  properties,
  ...(required ? { required } : {}),
});
const list = (items: SchemaObject): SchemaObject => ({ type: 'array', items });
export const SCHEMAS = {
  /** A stand-in for routes of areas not converted yet that still name it: the answer is common/dto's ReplyResponse, whose generated schema wins. */
  Response: named('Response', { type: 'object' }),
  /** A channel as WhatsApp describes it (whatsmeow's NewsletterMetadata, as uazapi answers it). */
  Newsletter: named(
    'Newsletter',
    object(
      {
        id: str({ description: '<digits>@newsletter' }),
        state: object({ type: str({ description: 'active, suspended, geosuspended' }) }),
        thread_metadata: object({
          creation_time: str({ description: 'Unix seconds' }),
          invite: str({ description: 'The invite key: https://whatsapp.com/channel/<invite>' }),
          name: object({ text: str(), id: str(), update_time: str() }),
          description: object({ text: str(), id: str(), update_time: str() }),
          subscribers_count: str(),
          verification: str({ enum: ['verified', 'unverified'] }),
          picture: { type: ['object', 'null'], properties: { url: str(), id: str(), type: str(), direct_path: str() } } as SchemaObject,
          preview: object({ url: str(), id: str(), type: str(), direct_path: str() }),
          settings: object({ reaction_codes: object({ value: str() }) }),
        }),
        viewer_metadata: {
          type: ['object', 'null'],
          properties: { mute: str({ enum: ['on', 'off'] }), role: str({ enum: ['owner', 'admin', 'subscriber', 'guest'] }) },
        } as SchemaObject,
      },
      ['id', 'thread_metadata'],
    ),
  ),
  /** `/newsletter/create`, `/newsletter/info`, `/newsletter/link`: `{response: Newsletter}`. */
  NewsletterResponse: named('NewsletterResponse', object({ response: ref('Newsletter') }, ['response'])),
  /** `GET /newsletter/list`: the channels the instance follows or owns. */
  NewsletterList: named('NewsletterList', object({ response: list(ref('Newsletter')) }, ['response'])),
  /** A channel action done (follow, unfollow, mute, unmute, name, description, delete). */
  NewsletterDone: named('NewsletterDone', object({ response: { type: 'boolean', enum: [true] } }, ['response'])),
  /** A channel post as WhatsApp lists it, with its views and reactions when read. */
  NewsletterPost: named(
    'NewsletterPost',
    object({
      serverid: int,
      messageid: str(),
      type: str({ description: 'text, media, poll…' }),
      timestamp: str({ format: 'date-time' }),
      viewsCount: int,
      reactionCounts: { type: 'object', additionalProperties: int, description: 'Emoji → count' } as SchemaObject,
      message: { type: ['object', 'null'], additionalProperties: true, description: 'The post (a WhatsApp Message)' } as SchemaObject,
    }),
  ),
  /** `POST /newsletter/messages`: a page of a channel's posts. */
  NewsletterMessages: named('NewsletterMessages', object({ response: list(ref('NewsletterPost')) }, ['response'])),
  /** `POST /newsletter/subscribe`: how long live updates last (a Go duration, e.g. 5m0s). */
  NewsletterLive: named('NewsletterLive', object({ response: str({ description: 'Duration WhatsApp granted, e.g. 5m0s' }) }, ['response'])),
  /** `POST /newsletter/messages/edit` and `/messages/delete`: the post changed. */
  NewsletterPostChange: named(
    'NewsletterPostChange',
    object(
      {
        response: object({ jid: str(), targetmessageid: str(), targetserverid: int, messageid: str(), serverid: int }, [
          'jid',
          'targetmessageid',
          'targetserverid',
        ]),
      },
      ['response'],
    ),
  ),
  /** `POST /newsletter/search`: a page of the channel directory. */
  NewsletterSearch: named(
    'NewsletterSearch',
    object(
      { response: object({ after: { type: ['string', 'null'], description: 'Cursor of the next page' } as SchemaObject, data: list(ref('Newsletter')) }) },
      ['response'],
    ),
  ),
  /** `GET /health`: the process answers. */
  /** `POST /chat/details`: the Chat record with the groups in common and the picture of the size asked for. */
  ChatDetails: named('ChatDetails', {
    allOf: [
      ref('Chat'),
      object({
        common_groups: str({ description: 'Groups in common, comma separated: name(id)' }),
        imagePreview: str({ description: 'Small picture URL (preview=true)' }),
        image: str({ description: 'Full picture URL (preview=false)' }),
      }),
    ],
  }),
  /** Chatbot agent (`/agent/*`, uazapi 2.0): the model it calls and how it answers; `apikey` masked. */
  ChatbotAIAgent: named(
    'ChatbotAIAgent',
    object({
      id: str(),
      name: str(),
      provider: str({ enum: ['openai', 'anthropic', 'gemini', 'deepseek', 'custom'] }),
      model: str(),
      apikey: str({ description: 'Masked' }),
      url: str({ description: 'custom: the OpenAI-compatible base URL' }),
      basePrompt: str(),
      maxTokens: int,
      temperature: { ...int, minimum: 0, maximum: 100 },
      diversityLevel: { ...int, minimum: 0, maximum: 100 },
      frequencyPenalty: { ...int, minimum: 0, maximum: 100 },
      presencePenalty: { ...int, minimum: 0, maximum: 100 },
      signMessages: bool,
      readMessages: bool,
      maxMessageLength: int,
      typingDelay_seconds: int,
      contextTimeWindow_hours: int,
      contextMaxMessages: int,
      contextMinMessages: int,
      owner: str(),
      created: str({ format: 'date-time' }),
      updated: str({ format: 'date-time' }),
      response: str({ description: 'delete: what was done' }),
    }),
  ),
  /** Chatbot trigger (`/trigger/*`): what starts an agent (or sends a quick reply) in a chat. */
  ChatbotTrigger: named(
    'ChatbotTrigger',
    object({
      id: str(),
      active: bool,
      type: str({ enum: ['agent', 'quickreply', 'flow'] }),
      agent_id: str(),
      flow_id: str(),
      quickReply_id: str(),
      ignoreGroups: bool,
      lead_field: str(),
      lead_operator: str({ enum: ['', 'equals', 'not_equals', 'contains', 'not_contains', 'greater', 'less', 'empty', 'not_empty'] }),
      lead_value: str(),
      priority: int,
      wordsToStart: str({ description: 'a|b|c' }),
      responseDelay_seconds: int,
      owner: str(),
      created: str({ format: 'date-time' }),
      updated: str({ format: 'date-time' }),
      response: str({ description: 'delete: what was done' }),
    }),
  ),
  /** Chatbot knowledge (`/knowledge/*`): text the agent retrieves by similarity once vectorized. */
  ChatbotAIKnowledge: named(
    'ChatbotAIKnowledge',
    object({
      id: str(),
      active: bool,
      tittle: str({ description: "The title (uazapi's spelling)" }),
      title: str(),
      content: str(),
      fileType: str({ enum: ['', 'pdf', 'txt', 'html', 'csv'] }),
      isVectorized: bool,
      vectorStatus: str({ enum: ['pending', 'processing', 'done', 'error'] }),
      lastVectorizedAt: { ...int, description: 'Unix ms; 0 when never' },
      vectorError: str(),
      chunks: int,
      owner: str(),
      created: str({ format: 'date-time' }),
      updated: str({ format: 'date-time' }),
      response: str({ description: 'delete: what was done' }),
    }),
  ),
  /** Chatbot function (`/function/*`): an HTTP call the agent may make as a tool; secret header values masked. */
  ChatbotAIFunction: named(
    'ChatbotAIFunction',
    object({
      id: str(),
      name: str(),
      active: bool,
      description: str(),
      method: str({ enum: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] }),
      endpoint: str(),
      headers: { type: 'object', additionalProperties: str() },
      body: { oneOf: [str(), { type: 'object', additionalProperties: true }] },
      parameters: list(
        object({
          name: str(),
          type: str({ enum: ['string', 'number', 'integer', 'boolean'] }),
          description: str(),
          required: bool,
          enum: list({ oneOf: [str(), { type: 'number' }] }),
          minimum: int,
          maximum: int,
        }),
      ),
      owner: str(),
      created: str({ format: 'date-time' }),
      updated: str({ format: 'date-time' }),
      response: str({ description: 'delete: what was done' }),
    }),
  ),
  /** Every error: `{error}`, the catalogue's `code` where uazapi has one, and the thrower's extra fields. */
  Error: named('Error', {
    type: 'object',
    required: ['error'],
    properties: { error: str(), code: str() },
    additionalProperties: true,
  }),
  /** The default for a route that has not declared its answer yet: some JSON object. */
  Object: named('GenericObject', { type: 'object', additionalProperties: true }),
} as const satisfies Record<string, NamedSchema>;
