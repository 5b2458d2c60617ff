import type { EmbeddingModel, LanguageModel } from 'ai';
import type { ChatbotConfig } from './config';
import type { AgentSettings } from './records';

/** The options of one model call, in the provider's own ranges (what `ai_metadata.request.options` records). */
export interface ModelOptions {
  model: string;
  temperature: number;
  maxTokens: number;
  topP: number;
  frequencyPenalty: number;
  presencePenalty: number;
}

/** Providers whose API (as the AI SDK speaks it) takes frequency and presence penalties. */
const PENALTIES: ReadonlySet<AgentSettings['provider']> = new Set(['openai', 'gemini', 'custom']);

/**
 * The agent's 0–100 settings in the provider's ranges: temperature 0–2 (Anthropic 0–1), top-p 0–1,
 * frequency and presence penalties 0–2 (Anthropic and DeepSeek's AI SDK provider take none: 0, not sent).
 */
export function modelOptions(agent: AgentSettings): ModelOptions {
  const anthropic = agent.provider === 'anthropic';
  const penalties = PENALTIES.has(agent.provider);
  const scale = (value: number, top: number) => Math.round((value / 100) * top * 100) / 100;
  return {
    model: agent.model,
    temperature: scale(agent.temperature, anthropic ? 1 : 2),
    maxTokens: agent.maxTokens,
    topP: scale(agent.diversityLevel, 1),
    frequencyPenalty: penalties ? scale(agent.frequencyPenalty, 2) : 0,
    presencePenalty: penalties ? scale(agent.presencePenalty, 2) : 0,
  };
}

/** The call settings the AI SDK takes for these options (only what the provider speaks). */
export function callSettings(agent: AgentSettings, options: ModelOptions) {
  const anthropic = agent.provider === 'anthropic';
  return {
    temperature: options.temperature,
    maxOutputTokens: options.maxTokens,
    // Anthropic refuses temperature and top_p together on current models: top_p only when narrowed.
    ...(anthropic ? (options.topP < 1 ? { topP: options.topP } : {}) : { topP: options.topP }),
    ...(PENALTIES.has(agent.provider) ? { frequencyPenalty: options.frequencyPenalty, presencePenalty: options.presencePenalty } : {}),
  };
}

/**
 * The agent's model through its provider's own API (AI SDK), every request through `fetch` (the SSRF-guarded one).
 *
 * Each provider's package is loaded when a model of it is first made, not with the process: together they cost the
 * gateway and the dispatcher ~0.2 s of CPU at start (a CPU profile of each service's start), and an instance's
 * agents use one or two of the five.
 */
export async function languageModel(agent: AgentSettings, config: Pick<ChatbotConfig, 'baseUrls'>, fetch: typeof globalThis.fetch): Promise<LanguageModel> {
  const apiKey = agent.apikey;
  const base = (own: string) => (own ? { baseURL: own } : {});
  switch (agent.provider) {
    case 'openai':
      return (await import('@ai-sdk/openai')).createOpenAI({ apiKey, fetch, ...base(config.baseUrls.openai) }).chat(agent.model);
    case 'anthropic':
      return (await import('@ai-sdk/anthropic')).createAnthropic({ apiKey, fetch, ...base(config.baseUrls.anthropic) })(agent.model);
    case 'gemini':
      return (await import('@ai-sdk/google')).createGoogleGenerativeAI({ apiKey, fetch, ...base(config.baseUrls.gemini) })(agent.model);
    case 'deepseek':
      return (await import('@ai-sdk/deepseek')).createDeepSeek({ apiKey, fetch, ...base(config.baseUrls.deepseek) })(agent.model);
    case 'custom':
      return (await import('@ai-sdk/openai-compatible'))
        .createOpenAICompatible({ name: 'custom', baseURL: agent.url.replace(/\/+$/, ''), ...(apiKey ? { apiKey } : {}), fetch })
        .chatModel(agent.model);
  }
}

/** OpenAI's embeddings (the instance's `openai_apikey`, OPENAI_BASE_URL), for knowledge. */
export async function openaiEmbeddingModel(apiKey: string, config: Pick<ChatbotConfig, 'baseUrls'>, fetch: typeof globalThis.fetch): Promise<EmbeddingModel> {
  const { createOpenAI } = await import('@ai-sdk/openai');
  return createOpenAI({ apiKey, fetch, ...(config.baseUrls.openai ? { baseURL: config.baseUrls.openai } : {}) }).embedding('text-embedding-3-small');
}
