import { applyDecorators } from '@nestjs/common';
import { Type } from 'class-transformer';
import {
  IsArray,
  IsBoolean,
  IsDefined,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateBy,
  ValidateIf,
  ValidateNested,
  type ValidationArguments,
} from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';
import { RequiredString } from '../../send/dto/field-rules';

export const AGENT_PROVIDERS = ['openai', 'anthropic', 'gemini', 'deepseek', 'custom'] as const;
export type AgentProvider = (typeof AGENT_PROVIDERS)[number];
export const TRIGGER_TYPES = ['agent', 'quickreply', 'flow'] as const;
export const LEAD_OPERATORS = ['equals', 'not_equals', 'contains', 'not_contains', 'greater', 'less', 'empty', 'not_empty'] as const;
export const KNOWLEDGE_FILE_TYPES = ['pdf', 'txt', 'html', 'csv'] as const;
export const FUNCTION_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export const PARAMETER_TYPES = ['string', 'number', 'integer', 'boolean'] as const;

/** Absent is fine; null is checked like any other value (and refused by the type rule). */
const Optional = () => ValidateIf((_dto: object, value: unknown) => value !== undefined);

/** An optional whole number in [min, max], named in the message. */
function IntIn(min: number, max: number): PropertyDecorator {
  const message = (args: ValidationArguments) => `${args.property} must be an integer from ${min} to ${max}`;
  return applyDecorators(Optional(), IsInt({ message }), Min(min, { message }), Max(max, { message }));
}

/** An optional boolean, named in the message. */
const Flag = () => applyDecorators(Optional(), IsBoolean({ message: (args: ValidationArguments) => `${args.property} must be a boolean` }));

/** An optional string of at most `max` characters. */
const Text = (max: number) =>
  applyDecorators(
    Optional(),
    IsString({ message: (args: ValidationArguments) => `${args.property} must be a string` }),
    MaxLength(max, { message: (args: ValidationArguments) => `${args.property} must be at most ${max} characters` }),
  );

/** One of `values` (case as given). */
const Choice = (values: readonly string[]) =>
  IsIn([...values], { message: (args: ValidationArguments) => `${args.property} must be one of ${values.join(', ')}` });

/** An http(s) URL. */
const HttpUrl = () => Matches(/^https?:\/\/[^\s/?#]+[^\s]*$/i, { message: (args: ValidationArguments) => `${args.property} must be an http(s) URL` });

/** The record's id: "" (or absent) creates, an id updates, with `delete: true` deletes. */
class ChatbotEditBase {
  @JSONSchema({ description: 'The record to update or delete; absent (or empty) creates one' })
  @IsOptional()
  @IsString({ message: 'id must be a string' })
  @MaxLength(100)
  id?: string;
  @JSONSchema({ description: 'Delete the record `id`' })
  @IsOptional()
  @IsBoolean({ message: 'delete must be a boolean' })
  delete?: boolean;
}

/** The record object is required unless the edit deletes. */
const RecordObject = (name: string, type: () => new () => object) =>
  applyDecorators(
    ValidateIf((dto: ChatbotEditBase) => dto.delete !== true),
    IsDefined({ message: `missing ${name}: give the ${name}'s fields (or delete: true with its id)` }),
    IsObject({ message: `${name} must be an object` }),
    ValidateNested(),
    Type(type),
  );

export class AgentFieldsDto {
  @JSONSchema({ description: "The agent's name" })
  @RequiredString('missing agent.name')
  @MaxLength(200)
  name!: string;
  @JSONSchema({ description: "The model's provider: `openai`, `anthropic`, `gemini`, `deepseek` or `custom` (an OpenAI-compatible server)" })
  @IsString({ message: `missing agent.provider (${AGENT_PROVIDERS.join(', ')})` })
  @Choice(AGENT_PROVIDERS)
  provider!: AgentProvider;
  @JSONSchema({ description: "The model's name at the provider" })
  @RequiredString('missing agent.model')
  @MaxLength(200)
  model!: string;
  /** Required when the agent is created; on an update, absent or the masked value keeps the stored key. */
  @JSONSchema({ description: "The provider's API key: required when the agent is created; on an update, absent or the masked value keeps the stored key" })
  @Text(1000)
  apikey?: string;
  /** `custom`: the OpenAI-compatible server's base URL (…/v1). */
  @JSONSchema({ description: "With `custom`: the OpenAI-compatible server's base URL (…/v1)" })
  @Optional()
  @IsString({ message: 'url must be a string' })
  @MaxLength(2000)
  @ValidateIf((_dto, value: string) => value !== '')
  @HttpUrl()
  url?: string;
  @JSONSchema({ description: 'The instructions the agent follows (its system prompt)' })
  @Text(100_000)
  basePrompt?: string;
  @JSONSchema({ description: 'The most tokens an answer may use' })
  @IntIn(1, 200_000)
  maxTokens?: number;
  /** 0–100: 0 answers the same each time, 100 is the provider's most random. */
  @JSONSchema({ description: "0 to 100: 0 answers the same each time, 100 is the provider's most random" })
  @IntIn(0, 100)
  temperature?: number;
  /** 0–100: the share of likely words the model samples from (top-p). */
  @JSONSchema({ description: '0 to 100: the share of likely words the model samples from (top-p)' })
  @IntIn(0, 100)
  diversityLevel?: number;
  @JSONSchema({ description: '0 to 100: how much the model avoids repeating the same words' })
  @IntIn(0, 100)
  frequencyPenalty?: number;
  @JSONSchema({ description: '0 to 100: how much the model moves to new topics' })
  @IntIn(0, 100)
  presencePenalty?: number;
  @JSONSchema({ description: "Sign the agent's messages with its name" })
  @Flag()
  signMessages?: boolean;
  @JSONSchema({ description: "Mark the contact's messages read when the agent answers" })
  @Flag()
  readMessages?: boolean;
  /** Longer answers go out as several messages (0: never split). */
  @JSONSchema({ description: 'Longer answers go out as several messages (0: never split)' })
  @IntIn(0, 65_536)
  maxMessageLength?: number;
  @JSONSchema({ description: 'Seconds of "typing…" before each answer' })
  @IntIn(0, 300)
  typingDelay_seconds?: number;
  @JSONSchema({ description: 'Only messages of the last this many hours are given to the model as context' })
  @IntIn(0, 8_760)
  contextTimeWindow_hours?: number;
  @JSONSchema({ description: 'At most this many earlier messages as context' })
  @IntIn(0, 1_000)
  contextMaxMessages?: number;
  @JSONSchema({ description: 'At least this many earlier messages as context, however old' })
  @IntIn(0, 1_000)
  contextMinMessages?: number;
}

/** `POST /agent/edit`. */
@JSONSchema({
  example: {
    id: '',
    agent: { name: 'Atendente', provider: 'openai', model: 'gpt-4o-mini', apikey: 'sk-…', basePrompt: 'Você é o atendente da loja.', temperature: 30 },
  },
})
export class AgentEditDto extends ChatbotEditBase {
  @JSONSchema({ description: "The agent's fields (required unless deleting)" })
  @RecordObject('agent', () => AgentFieldsDto)
  agent?: AgentFieldsDto;
}

export class TriggerFieldsDto {
  @JSONSchema({ description: 'The trigger is on' })
  @Flag()
  active?: boolean;
  @JSONSchema({ description: 'What answers: `agent`, `quickreply` or `flow`' })
  @IsString({ message: 'missing trigger.type (agent, quickreply or flow)' })
  @Choice(TRIGGER_TYPES)
  type!: (typeof TRIGGER_TYPES)[number];
  @JSONSchema({ description: 'The agent that answers (type `agent`)' })
  @Text(100)
  agent_id?: string;
  @JSONSchema({ description: 'The flow that answers (type `flow`)' })
  @Text(100)
  flow_id?: string;
  @JSONSchema({ description: 'The quick reply sent (type `quickreply`)' })
  @Text(100)
  quickReply_id?: string;
  @JSONSchema({ description: 'Never fire in groups' })
  @Flag()
  ignoreGroups?: boolean;
  /** A lead field of the chat (lead_name, lead_status, lead_field01…, or a chat field such as wa_name). */
  @JSONSchema({ description: 'A lead field of the chat the trigger tests (`lead_name`, `lead_status`, `lead_field01`…, or a chat field such as `wa_name`)' })
  @Text(100)
  lead_field?: string;
  @JSONSchema({ description: 'How it tests it: `equals`, `not_equals`, `contains`, `not_contains`, `greater`, `less`, `empty` or `not_empty`' })
  @Optional()
  @IsString({ message: 'lead_operator must be a string' })
  @Choice(LEAD_OPERATORS)
  lead_operator?: string;
  @JSONSchema({ description: 'The value it tests against' })
  @Text(1000)
  lead_value?: string;
  /** Higher first when several triggers match. */
  @JSONSchema({ description: 'Higher first when several triggers match' })
  @IntIn(-1_000_000, 1_000_000)
  priority?: number;
  /** "a|b|c": the trigger starts a conversation when a message contains one of them (empty: any message). */
  @JSONSchema({ description: '"a|b|c": the trigger starts a conversation when a message contains one of them (empty: any message)' })
  @Text(5000)
  wordsToStart?: string;
  /** How long the round waits for the contact's next message before answering them together. */
  @JSONSchema({ description: "How long to wait for the contact's next message before answering them together" })
  @IntIn(0, 3_600)
  responseDelay_seconds?: number;
}

/** `POST /trigger/edit`. */
@JSONSchema({
  example: { id: '', trigger: { active: true, type: 'agent', agent_id: 'r1a2b3c4d5e6f7', wordsToStart: 'oi|olá|menu', responseDelay_seconds: 3 } },
})
export class TriggerEditDto extends ChatbotEditBase {
  @JSONSchema({ description: "The trigger's fields (required unless deleting)" })
  @RecordObject('trigger', () => TriggerFieldsDto)
  trigger?: TriggerFieldsDto;
}

export class KnowledgeFieldsDto {
  @JSONSchema({ description: 'The entry is used' })
  @Flag()
  active?: boolean;
  /** The title (uazapi's spelling). */
  @JSONSchema({ description: "The title (uazapiGO's spelling)" })
  @Text(500)
  tittle?: string;
  /** The older/obvious spelling of `tittle`. */
  @JSONSchema({ description: 'The title, the usual spelling of `tittle`' })
  @Text(500)
  title?: string;
  /** Text, an http(s) URL to fetch, or base64 of a pdf/txt/html/csv file (`fileType`). */
  @JSONSchema({ description: 'Text, an http(s) URL to fetch, or base64 of a pdf, txt, html or csv file (`fileType`)' })
  @RequiredString('missing knowledge.content')
  @MaxLength(20 * 1024 * 1024)
  content!: string;
  @JSONSchema({ description: 'How to read `content` when it is a file or a URL: `pdf`, `txt`, `html` or `csv`' })
  @Optional()
  @IsString({ message: 'fileType must be a string' })
  @Choice(KNOWLEDGE_FILE_TYPES)
  fileType?: string;
}

/** `POST /knowledge/edit`. */
@JSONSchema({ example: { id: '', knowledge: { active: true, tittle: 'Horários', content: 'Abrimos de segunda a sábado, das 9h às 18h.' } } })
export class KnowledgeEditDto extends ChatbotEditBase {
  @JSONSchema({ description: "The knowledge entry's fields (required unless deleting)" })
  @RecordObject('knowledge', () => KnowledgeFieldsDto)
  knowledge?: KnowledgeFieldsDto;
  /** How to read `content` when it is a file (base64) or a URL: pdf, txt, html or csv. */
  @JSONSchema({ description: 'How to read `content` when it is a file (base64) or a URL: `pdf`, `txt`, `html` or `csv`' })
  @Optional()
  @IsString({ message: 'fileType must be a string' })
  @Choice(KNOWLEDGE_FILE_TYPES)
  fileType?: string;
}

export class FunctionParameterDto {
  @RequiredString('missing parameter name')
  @Matches(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, { message: 'parameter name must be letters, digits or _ (at most 64)' })
  @JSONSchema({ description: "The parameter's name, as `{{name}}` in the endpoint, headers and body" })
  name!: string;
  @JSONSchema({ description: 'Its type: `string`, `number`, `integer` or `boolean`' })
  @Optional()
  @IsString({ message: 'parameter type must be a string' })
  @Choice(PARAMETER_TYPES)
  type?: string;
  @JSONSchema({ description: 'What the model should put in it' })
  @Text(2000)
  description?: string;
  @JSONSchema({ description: 'The model must give it' })
  @Flag()
  required?: boolean;
  /** Allowed values: an array, or one string separated by commas. */
  @Optional()
  @ValidateBy({
    name: 'isEnumList',
    validator: {
      validate: (value: unknown) =>
        typeof value === 'string' || (Array.isArray(value) && value.length <= 100 && value.every((item) => ['string', 'number'].includes(typeof item))),
      defaultMessage: () => 'enum must be an array of values or a comma-separated string',
    },
  })
  // A function replaces the reflected schema, a `$ref` to an `Object` schema the document does not hold (a union's design type).
  @JSONSchema(() => ({
    description: 'The values allowed: an array, or one string separated by commas',
    oneOf: [{ type: 'string' }, { type: 'array', maxItems: 100, items: { oneOf: [{ type: 'string' }, { type: 'number' }] } }],
  }))
  enum?: string | Array<string | number>;
  @JSONSchema({ description: 'The smallest value allowed' })
  @Optional()
  @IsInt({ message: 'minimum must be an integer' })
  minimum?: number;
  @JSONSchema({ description: 'The largest value allowed' })
  @Optional()
  @IsInt({ message: 'maximum must be an integer' })
  maximum?: number;
}

export class FunctionFieldsDto {
  @RequiredString('missing function.name')
  @Matches(/^[A-Za-z_][A-Za-z0-9_-]{0,63}$/, { message: 'function name must be letters, digits, _ or - (at most 64), starting with a letter or _' })
  @JSONSchema({ description: "The function's name, as the model calls it" })
  name!: string;
  @JSONSchema({ description: 'The agents may call it' })
  @Flag()
  active?: boolean;
  @JSONSchema({ description: 'What it does and when to call it, for the model' })
  @RequiredString('missing function.description')
  @MaxLength(2000)
  description!: string;
  @JSONSchema({ description: 'The HTTP method: `GET`, `POST`, `PUT`, `PATCH` or `DELETE`' })
  @IsString({ message: 'missing function.method (GET, POST, PUT, PATCH or DELETE)' })
  @Choice(FUNCTION_METHODS)
  method!: string;
  @JSONSchema({ description: "The URL called; `{{parameter}}` is replaced by the model's values" })
  @RequiredString('missing function.endpoint')
  @MaxLength(2000)
  @HttpUrl()
  endpoint!: string;
  /** Header name → value; values may use {{parameter}}. */
  @Optional()
  @ValidateBy({
    name: 'isHeaderMap',
    validator: {
      validate: (value: unknown) =>
        typeof value === 'object' &&
        value !== null &&
        !Array.isArray(value) &&
        Object.entries(value).length <= 50 &&
        Object.entries(value).every(([key, item]) => /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$/.test(key) && typeof item === 'string' && item.length <= 8000),
      defaultMessage: () => 'headers must be an object of header names to string values',
    },
  })
  @JSONSchema({ description: 'Header name → value; values may use `{{parameter}}`' })
  headers?: Record<string, string>;
  /** The request body: a template string or a JSON object, {{parameter}} replaced by the model's values. */
  @Optional()
  @ValidateBy({
    name: 'isBodyTemplate',
    validator: {
      validate: (value: unknown) =>
        (typeof value === 'string' && value.length <= 100_000) || (typeof value === 'object' && value !== null && JSON.stringify(value).length <= 100_000),
      defaultMessage: () => 'body must be a string template or a JSON object',
    },
  })
  @JSONSchema({ description: "The request body: a template string or a JSON object, `{{parameter}}` replaced by the model's values" })
  body?: string | Record<string, unknown>;
  @Optional()
  @IsArray({ message: 'parameters must be an array' })
  @ValidateNested({ each: true })
  @Type(() => FunctionParameterDto)
  @JSONSchema({ description: 'The parameters the model fills in' })
  parameters?: FunctionParameterDto[];
}

/** `POST /function/edit`. */
@JSONSchema({
  example: {
    id: '',
    function: {
      name: 'consultar_pedido',
      description: 'Consulta o status de um pedido pelo número',
      method: 'GET',
      endpoint: 'https://api.loja.example/pedidos/{{numero}}',
      parameters: [{ name: 'numero', type: 'string', description: 'Número do pedido', required: true }],
    },
  },
})
export class FunctionEditDto extends ChatbotEditBase {
  @JSONSchema({ description: "The function's fields (required unless deleting)" })
  @RecordObject('function', () => FunctionFieldsDto)
  function?: FunctionFieldsDto;
}
