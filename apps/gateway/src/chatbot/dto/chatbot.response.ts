import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { AGENT_PROVIDERS, type AgentProvider, FUNCTION_METHODS, LEAD_OPERATORS, PARAMETER_TYPES, TRIGGER_TYPES } from './chatbot-edit.dto';

const VECTOR_STATUSES = ['pending', 'processing', 'done', 'error'] as const;
const KNOWLEDGE_FILE_TYPES = ['', 'pdf', 'txt', 'html', 'csv'] as const;

/** The fields every chatbot record answers besides its own. */
class ChatbotRecordStamps {
  @ApiProperty({ description: "The record's id: give it to `edit` to update or delete it", example: 'r5f1c2a9b0d3e4f' })
  id!: string;
  @ApiProperty({ description: "The instance's WhatsApp number (empty while it was never connected)", example: '5511999999999' })
  owner!: string;
  @ApiProperty({ format: 'date-time', description: 'When the record was created' })
  created!: string;
  @ApiProperty({ format: 'date-time', description: 'When the record was last changed' })
  updated!: string;
}

/** `/agent/edit` and `/agent/list`: an AI agent, its key masked. */
@ApiSchema({
  name: 'ChatbotAIAgent',
  description: 'An AI agent of the chatbot: the model it calls, its key (masked) and its prompt, and how it answers the chats',
})
export class ChatbotAgentResponse extends ChatbotRecordStamps {
  @ApiProperty({ description: "The agent's name" })
  name!: string;
  @ApiProperty({ enum: AGENT_PROVIDERS, description: "The model's provider (`custom`: an OpenAI-compatible server at `url`)" })
  provider!: AgentProvider;
  @ApiProperty({ description: "The model's name at the provider", example: 'gpt-4o-mini' })
  model!: string;
  @ApiProperty({ description: "The provider's API key, masked: only its first characters are shown" })
  apikey!: string;
  @ApiProperty({ description: "With `custom`: the OpenAI-compatible server's base URL (empty otherwise)" })
  url!: string;
  @ApiProperty({ description: 'The instructions the agent follows (its system prompt)' })
  basePrompt!: string;
  @ApiProperty({ type: 'integer', description: 'The most tokens an answer may use' })
  maxTokens!: number;
  @ApiProperty({ type: 'integer', minimum: 0, maximum: 100, description: "0 to 100: 0 answers the same each time, 100 is the provider's most random" })
  temperature!: number;
  @ApiProperty({ type: 'integer', minimum: 0, maximum: 100, description: '0 to 100: the share of likely words the model samples from (top-p)' })
  diversityLevel!: number;
  @ApiProperty({ type: 'integer', minimum: 0, maximum: 100, description: '0 to 100: how much the model avoids repeating the same words' })
  frequencyPenalty!: number;
  @ApiProperty({ type: 'integer', minimum: 0, maximum: 100, description: '0 to 100: how much the model moves to new topics' })
  presencePenalty!: number;
  @ApiProperty({ description: "The agent's messages are signed with its name" })
  signMessages!: boolean;
  @ApiProperty({ description: "The contact's messages are marked read when the agent answers" })
  readMessages!: boolean;
  @ApiProperty({ type: 'integer', description: 'Longer answers go out as several messages (0: never split)' })
  maxMessageLength!: number;
  @ApiProperty({ type: 'integer', description: 'Seconds of "typing…" before each answer' })
  typingDelay_seconds!: number;
  @ApiProperty({ type: 'integer', description: 'Only messages of the last this many hours are given to the model as context' })
  contextTimeWindow_hours!: number;
  @ApiProperty({ type: 'integer', description: 'At most this many earlier messages as context' })
  contextMaxMessages!: number;
  @ApiProperty({ type: 'integer', description: 'At least this many earlier messages as context, however old' })
  contextMinMessages!: number;
}

/** `/trigger/edit` and `/trigger/list`: what starts an agent (or sends a quick reply) in a chat. */
@ApiSchema({ name: 'ChatbotTrigger', description: 'A trigger of the chatbot: which agent (or quick reply) answers which messages' })
export class ChatbotTriggerResponse extends ChatbotRecordStamps {
  @ApiProperty({ description: 'The trigger is on' })
  active!: boolean;
  @ApiProperty({ enum: TRIGGER_TYPES, description: 'What answers: an `agent`, a `quickreply` or a `flow`' })
  type!: (typeof TRIGGER_TYPES)[number];
  @ApiProperty({ description: 'The agent that answers (type `agent`; empty otherwise)' })
  agent_id!: string;
  @ApiProperty({ description: 'The flow that answers (type `flow`; empty otherwise)' })
  flow_id!: string;
  @ApiProperty({ description: 'The quick reply sent (type `quickreply`; empty otherwise)' })
  quickReply_id!: string;
  @ApiProperty({ description: 'The trigger never fires in groups' })
  ignoreGroups!: boolean;
  @ApiProperty({ description: 'The lead field of the chat the trigger tests (`lead_name`, `lead_status`, `lead_field01`…; empty: none)' })
  lead_field!: string;
  @ApiProperty({ enum: ['', ...LEAD_OPERATORS], description: 'How it tests the lead field (empty: no test)' })
  lead_operator!: '' | (typeof LEAD_OPERATORS)[number];
  @ApiProperty({ description: 'The value it tests the lead field against' })
  lead_value!: string;
  @ApiProperty({ type: 'integer', description: 'Higher first when several triggers match' })
  priority!: number;
  @ApiProperty({ description: '"a|b|c": the trigger starts a conversation when a message contains one of them (empty: any message)' })
  wordsToStart!: string;
  @ApiProperty({ type: 'integer', description: "Seconds to wait for the contact's next message before answering them together" })
  responseDelay_seconds!: number;
}

/** `/knowledge/edit` and `/knowledge/list`: text the agents retrieve by similarity once vectorized. */
@ApiSchema({ name: 'ChatbotAIKnowledge', description: 'A knowledge entry of the chatbot: text the agents draw on, retrieved by similarity once vectorized' })
export class ChatbotKnowledgeResponse extends ChatbotRecordStamps {
  @ApiProperty({ description: 'The entry is used' })
  active!: boolean;
  @ApiProperty({ description: "The title (uazapiGO's spelling)" })
  tittle!: string;
  @ApiProperty({ description: 'The title again, in the usual spelling' })
  title!: string;
  @ApiProperty({ description: 'The text, the http(s) URL it is fetched from, or base64 of the file (`fileType`)' })
  content!: string;
  @ApiProperty({ enum: KNOWLEDGE_FILE_TYPES, description: 'How `content` is read when it is a file or a URL (empty: plain text)' })
  fileType!: (typeof KNOWLEDGE_FILE_TYPES)[number];
  @ApiProperty({ description: 'The entry was vectorized: the agents can retrieve it' })
  isVectorized!: boolean;
  @ApiProperty({ enum: VECTOR_STATUSES, description: 'Where its vectorization is: `pending` after each edit, then `processing`, `done` or `error`' })
  vectorStatus!: (typeof VECTOR_STATUSES)[number];
  @ApiProperty({ type: 'integer', description: 'When it was last vectorized (Unix ms; 0: never)' })
  lastVectorizedAt!: number;
  @ApiProperty({ description: 'Why the last vectorization failed (empty when it did not)' })
  vectorError!: string;
  @ApiProperty({ type: 'integer', description: 'How many chunks the content was cut into' })
  chunks!: number;
}

/** One parameter the model fills in when it calls a function. */
@ApiSchema({ name: 'ChatbotFunctionParameter', description: 'A parameter the model fills in when it calls the function' })
export class ChatbotFunctionParameterResponse {
  @ApiProperty({ description: "The parameter's name, as `{{name}}` in the endpoint, headers and body" })
  name!: string;
  @ApiProperty({ enum: PARAMETER_TYPES, description: 'Its type' })
  type!: (typeof PARAMETER_TYPES)[number];
  @ApiProperty({ description: 'What the model should put in it' })
  description!: string;
  @ApiProperty({ description: 'The model must give it' })
  required!: boolean;
  @ApiProperty({ type: 'array', items: { oneOf: [{ type: 'string' }, { type: 'number' }] }, description: 'The values allowed (empty: any)' })
  enum!: Array<string | number>;
  @ApiPropertyOptional({ type: 'integer', description: 'The smallest value allowed, when one was given' })
  minimum?: number;
  @ApiPropertyOptional({ type: 'integer', description: 'The largest value allowed, when one was given' })
  maximum?: number;
}

/** `/function/edit` and `/function/list`: an HTTP call an agent may make as a tool, secret header values masked. */
@ApiSchema({ name: 'ChatbotAIFunction', description: 'A function of the chatbot: an HTTP call an agent may make as a tool; secret header values masked' })
export class ChatbotFunctionResponse extends ChatbotRecordStamps {
  @ApiProperty({ description: "The function's name, as the model calls it" })
  name!: string;
  @ApiProperty({ description: 'The agents may call it' })
  active!: boolean;
  @ApiProperty({ description: 'What it does and when to call it, for the model' })
  description!: string;
  @ApiProperty({ enum: FUNCTION_METHODS, description: 'The HTTP method' })
  method!: (typeof FUNCTION_METHODS)[number];
  @ApiProperty({ description: "The URL called; `{{parameter}}` is replaced by the model's values" })
  endpoint!: string;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: 'Header name → value (`{{parameter}}` filled in); the values of secret headers (authorization, keys, tokens) masked',
  })
  headers!: Record<string, string>;
  @ApiProperty({
    oneOf: [{ type: 'string' }, { type: 'object', additionalProperties: true }],
    description: "The request body: a template string or a JSON object, `{{parameter}}` replaced by the model's values (empty: none)",
  })
  body!: string | Record<string, unknown>;
  @ApiProperty({ type: () => [ChatbotFunctionParameterResponse], description: 'The parameters the model fills in' })
  parameters!: ChatbotFunctionParameterResponse[];
}

/** `edit` with `delete: true`: which record went. */
@ApiSchema({ name: 'ChatbotDeleted', description: 'A chatbot record deleted (`delete: true`)' })
export class ChatbotDeletedResponse {
  @ApiProperty({ description: 'What was done: `Agent deleted`, `Trigger deleted`, `Knowledge deleted` or `Function deleted`', example: 'Agent deleted' })
  response!: string;
  @ApiProperty({ description: 'The id of the record deleted' })
  id!: string;
}
