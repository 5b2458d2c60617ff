import type {
  ChatbotAgentResponse,
  ChatbotDeletedResponse,
  ChatbotFunctionResponse,
  ChatbotKnowledgeResponse,
  ChatbotTriggerResponse,
} from './chatbot.response';

/** Example bodies of the chatbot routes (the OpenAPI document shows them), typed as their response classes. */
const STAMPS = { owner: '5511999999999', created: '2025-01-01T12:00:00.000Z', updated: '2025-01-01T12:00:00.000Z' };

export const AGENT_EXAMPLE: ChatbotAgentResponse = {
  name: 'Atendente',
  provider: 'openai',
  model: 'gpt-4o-mini',
  apikey: 'sk-********************',
  url: '',
  basePrompt: 'Você é o atendente da Loja Exemplo. Responda em português, curto e gentil.',
  maxTokens: 1000,
  temperature: 30,
  diversityLevel: 100,
  frequencyPenalty: 0,
  presencePenalty: 0,
  signMessages: true,
  readMessages: true,
  maxMessageLength: 1000,
  typingDelay_seconds: 2,
  contextTimeWindow_hours: 24,
  contextMaxMessages: 20,
  contextMinMessages: 3,
  id: 'r5f1c2a9b0d3e4f',
  ...STAMPS,
};

export const TRIGGER_EXAMPLE: ChatbotTriggerResponse = {
  active: true,
  type: 'agent',
  agent_id: 'r5f1c2a9b0d3e4f',
  flow_id: '',
  quickReply_id: '',
  ignoreGroups: true,
  lead_field: 'lead_status',
  lead_operator: 'not_equals',
  lead_value: 'cliente',
  priority: 10,
  wordsToStart: 'oi|olá|menu',
  responseDelay_seconds: 3,
  id: 'r7a0b1c2d3e4f50',
  ...STAMPS,
};

export const KNOWLEDGE_EXAMPLE: ChatbotKnowledgeResponse = {
  active: true,
  tittle: 'Horários',
  title: 'Horários',
  content: 'Abrimos de segunda a sábado, das 9h às 18h.',
  fileType: '',
  isVectorized: true,
  vectorStatus: 'done',
  lastVectorizedAt: 1735732800000,
  vectorError: '',
  chunks: 1,
  id: 'r0c1d2e3f4a5b6c',
  ...STAMPS,
};

export const FUNCTION_EXAMPLE: ChatbotFunctionResponse = {
  name: 'consultar_pedido',
  active: true,
  description: 'Consulta o status de um pedido pelo número',
  method: 'GET',
  endpoint: 'https://api.loja.example/pedidos/{{numero}}',
  headers: { Authorization: 'Bea********************' },
  body: '',
  parameters: [{ name: 'numero', type: 'string', description: 'Número do pedido', required: true, enum: [] }],
  id: 'r9e8d7c6b5a4f3e',
  ...STAMPS,
};

export const CHATBOT_DELETED_EXAMPLE: ChatbotDeletedResponse = { response: 'Agent deleted', id: 'r5f1c2a9b0d3e4f' };
