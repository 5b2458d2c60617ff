import { type EnvReader, SsrfGuard } from '@gw/platform';
import { hostname } from 'node:os';

export interface ChatbotConfig {
  /** Names this runner in its claims. */
  runnerId: string;
  /** A round's claim lasts this long unless renewed (a dead runner's rounds are taken over after it). */
  claimMs: number;
  /** Fallback poll: bus notices wake the runner; this catches due gathering rounds and lapsed claims. */
  pollIntervalMs: number;
  /** Rounds this runner works on at the same time. */
  maxRounds: number;
  /** The longest a model call may take (then the round ends with outcome `timeout`). */
  modelTimeoutMs: number;
  /** The longest an HTTP function may take (the model is told it timed out). */
  functionTimeoutMs: number;
  /** Model steps per round (tool calls and their answers, then the final answer). */
  maxSteps: number;
  /** Worker answer timeout per send on top of the typing delay. */
  sendTimeoutMs: number;
  /** Base URLs per provider (proxies, tests); empty: the provider's own. */
  baseUrls: { openai: string; anthropic: string; gemini: string; deepseek: string };
  /** The SSRF guard every model, function and knowledge URL goes through. */
  ssrf: SsrfGuard;
  /** Minutes a person typing on the phone pauses the bot when the instance sets neither chatbot_stopWhenYouSendMsg nor chatbot_stopMinutes. */
  defaultPauseMinutes: number;
  /** Voice: `auto` hears voice notes (transcribed) and answers a voice note with one (text to speech); `off` answers in text. */
  voice: { replies: 'auto' | 'off'; transcriptionModel: string; speechModel: string; speechVoice: string };
}

export const CHATBOT_DEFAULTS: Omit<ChatbotConfig, 'runnerId' | 'ssrf' | 'baseUrls'> = {
  claimMs: 30_000,
  pollIntervalMs: 1_000,
  maxRounds: 64,
  modelTimeoutMs: 60_000,
  functionTimeoutMs: 10_000,
  maxSteps: 5,
  sendTimeoutMs: 40_000,
  defaultPauseMinutes: 60,
  voice: { replies: 'auto', transcriptionModel: 'whisper-1', speechModel: 'tts-1', speechVoice: 'alloy' },
};

/**
 * CHATBOT_RUNNER_ID, CHATBOT_CLAIM_MS, CHATBOT_POLL_MS, CHATBOT_MAX_ROUNDS, CHATBOT_MODEL_TIMEOUT_MS,
 * CHATBOT_FUNCTION_TIMEOUT_MS, CHATBOT_MAX_STEPS, OPENAI_BASE_URL, ANTHROPIC_BASE_URL, GEMINI_BASE_URL,
 * DEEPSEEK_BASE_URL, SSRF_ALLOWLIST, CHATBOT_VOICE_REPLIES (auto|off), CHATBOT_TRANSCRIPTION_MODEL,
 * CHATBOT_SPEECH_MODEL, CHATBOT_SPEECH_VOICE.
 */
export function readChatbotConfig(env: EnvReader): ChatbotConfig {
  const d = CHATBOT_DEFAULTS;
  const base = (url: string | undefined) => (url ?? '').replace(/\/+$/, '');
  const web = ['http:', 'https:'];
  return {
    ...d,
    runnerId: env.optionalString('CHATBOT_RUNNER_ID') ?? `${hostname()}-${process.pid}`,
    claimMs: env.integer('CHATBOT_CLAIM_MS', d.claimMs, { min: 1_000, max: 600_000 }),
    pollIntervalMs: env.integer('CHATBOT_POLL_MS', d.pollIntervalMs, { min: 10, max: 60_000 }),
    maxRounds: env.integer('CHATBOT_MAX_ROUNDS', d.maxRounds, { min: 1, max: 10_000 }),
    modelTimeoutMs: env.integer('CHATBOT_MODEL_TIMEOUT_MS', d.modelTimeoutMs, { min: 100, max: 600_000 }),
    functionTimeoutMs: env.integer('CHATBOT_FUNCTION_TIMEOUT_MS', d.functionTimeoutMs, { min: 100, max: 120_000 }),
    maxSteps: env.integer('CHATBOT_MAX_STEPS', d.maxSteps, { min: 1, max: 20 }),
    baseUrls: {
      openai: base(env.url('OPENAI_BASE_URL', web)),
      anthropic: base(env.url('ANTHROPIC_BASE_URL', web)),
      gemini: base(env.url('GEMINI_BASE_URL', web)),
      deepseek: base(env.url('DEEPSEEK_BASE_URL', web)),
    },
    ssrf: SsrfGuard.fromList(env.optionalString('SSRF_ALLOWLIST')),
    voice: {
      replies: env.oneOf('CHATBOT_VOICE_REPLIES', ['auto', 'off'] as const, d.voice.replies),
      transcriptionModel: env.string('CHATBOT_TRANSCRIPTION_MODEL', d.voice.transcriptionModel),
      speechModel: env.string('CHATBOT_SPEECH_MODEL', d.voice.speechModel),
      speechVoice: env.string('CHATBOT_SPEECH_VOICE', d.voice.speechVoice),
    },
  };
}
