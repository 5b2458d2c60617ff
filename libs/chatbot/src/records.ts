import type { ChatbotRecordRow } from '@gw/persistence';

/** The providers an agent may speak to (uazapi 2.0 §2.17); `custom` is any OpenAI-compatible server at the agent's `url`. */
export type AgentProvider = 'openai' | 'anthropic' | 'gemini' | 'deepseek' | 'custom';

/** An agent's stored fields, with every default filled in. */
export interface AgentSettings {
  name: string;
  provider: AgentProvider;
  model: string;
  apikey: string;
  url: string;
  basePrompt: string;
  maxTokens: number;
  temperature: number;
  diversityLevel: number;
  frequencyPenalty: number;
  presencePenalty: number;
  signMessages: boolean;
  readMessages: boolean;
  maxMessageLength: number;
  typingDelay_seconds: number;
  contextTimeWindow_hours: number;
  contextMaxMessages: number;
  contextMinMessages: number;
}

export const AGENT_DEFAULTS: Omit<AgentSettings, 'name' | 'provider' | 'model' | 'apikey'> = {
  url: '',
  basePrompt: '',
  maxTokens: 1000,
  temperature: 70,
  diversityLevel: 100,
  frequencyPenalty: 0,
  presencePenalty: 0,
  signMessages: false,
  readMessages: true,
  maxMessageLength: 1000,
  typingDelay_seconds: 0,
  contextTimeWindow_hours: 24,
  contextMaxMessages: 20,
  contextMinMessages: 3,
};

export type LeadOperator = 'equals' | 'not_equals' | 'contains' | 'not_contains' | 'greater' | 'less' | 'empty' | 'not_empty';

export interface TriggerSettings {
  active: boolean;
  type: 'agent' | 'quickreply' | 'flow';
  agent_id: string;
  flow_id: string;
  quickReply_id: string;
  ignoreGroups: boolean;
  lead_field: string;
  lead_operator: LeadOperator | '';
  lead_value: string;
  priority: number;
  wordsToStart: string;
  responseDelay_seconds: number;
}

export const TRIGGER_DEFAULTS: Omit<TriggerSettings, 'type'> = {
  active: true,
  agent_id: '',
  flow_id: '',
  quickReply_id: '',
  ignoreGroups: true,
  lead_field: '',
  lead_operator: '',
  lead_value: '',
  priority: 0,
  wordsToStart: '',
  responseDelay_seconds: 2,
};

export type VectorStatus = 'pending' | 'processing' | 'done' | 'error';

export interface KnowledgeSettings {
  active: boolean;
  tittle: string;
  content: string;
  fileType: '' | 'pdf' | 'txt' | 'html' | 'csv';
  isVectorized: boolean;
  vectorStatus: VectorStatus;
  /** Unix ms of the last successful vectorization (0: never). */
  lastVectorizedAt: number;
  /** Why the last vectorization failed (''). */
  vectorError: string;
  /** How many chunks the content was cut into. */
  chunks: number;
}

export interface FunctionParameter {
  name: string;
  type: 'string' | 'number' | 'integer' | 'boolean';
  description: string;
  required: boolean;
  enum: Array<string | number>;
  minimum?: number;
  maximum?: number;
}

export interface FunctionSettings {
  name: string;
  active: boolean;
  description: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  endpoint: string;
  headers: Record<string, string>;
  body: string | Record<string, unknown>;
  parameters: FunctionParameter[];
}

/** A record's settings with its id. */
export type Stored<T> = T & { id: string };

export function agentOf(row: ChatbotRecordRow): Stored<AgentSettings> {
  return { ...AGENT_DEFAULTS, ...(row.data as Partial<AgentSettings>), id: row.id } as Stored<AgentSettings>;
}

export function triggerOf(row: ChatbotRecordRow): Stored<TriggerSettings> {
  return { ...TRIGGER_DEFAULTS, ...(row.data as Partial<TriggerSettings>), id: row.id } as Stored<TriggerSettings>;
}

export function knowledgeOf(row: ChatbotRecordRow): Stored<KnowledgeSettings> {
  return {
    active: true,
    tittle: '',
    content: '',
    fileType: '',
    isVectorized: false,
    vectorStatus: 'pending',
    lastVectorizedAt: 0,
    vectorError: '',
    chunks: 0,
    ...(row.data as Partial<KnowledgeSettings>),
    id: row.id,
  };
}

export function functionOf(row: ChatbotRecordRow): Stored<FunctionSettings> {
  return { active: true, headers: {}, body: '', parameters: [], ...(row.data as Partial<FunctionSettings>), id: row.id } as Stored<FunctionSettings>;
}

/** Header names whose values are secrets (masked in every answer). */
export const SECRET_HEADER = /authorization|api[-_]?key|token|secret|password|cookie/i;

/** `abc********`: enough to recognise a key, never enough to use it. */
export function maskSecret(secret: string): string {
  if (!secret) return '';
  return `${secret.slice(0, 3)}${'*'.repeat(Math.max(4, Math.min(secret.length - 3, 20)))}`;
}

/** Whether `value` is what maskSecret shows for `secret` (a client sending a listed record back unchanged). */
export function isMaskOf(value: string, secret: string): boolean {
  return secret !== '' && value === maskSecret(secret);
}
