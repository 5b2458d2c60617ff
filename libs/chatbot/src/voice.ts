import type { Bus } from '@gw/bus';
import { Subjects } from '@gw/contracts';
import type { ChatbotTranscriptRepository, FileRepository } from '@gw/persistence';
import { forEachAtMost, toOpusVoiceNote, type Logger } from '@gw/platform';
import { generateSpeech, transcribe } from 'ai';
import type { ChatbotConfig } from './config';
import { boundedFetch } from './guarded-fetch';
import type { AgentSettings } from './records';
import { newMessageIds, type PlannedSend, type RoundPlan } from './round-planner';

/** What OpenAI's speech endpoint takes at most (characters). */
export const MAX_SPEECH_CHARS = 4096;
/** Voice notes transcribed in one round at most (the round's own first, then the history's newest). */
const MAX_TRANSCRIPTIONS = 10;
/** Voice notes of one round downloaded and transcribed at the same time. */
const TRANSCRIPTIONS_AT_ONCE = 2;
/** The largest audio OpenAI's transcription endpoint takes (25 MB): a larger one is neither downloaded whole nor sent. */
export const MAX_TRANSCRIPTION_BYTES = 25 * 1024 * 1024;
/** What an audio API's answer may hold at most (a spoken answer, a transcription): another server's larger answer is refused as it streams in. */
export const MAX_AUDIO_ANSWER_BYTES = 25 * 1024 * 1024;
/** A received voice note is downloaded into the file store for its transcription only: kept briefly. */
const DOWNLOAD_TTL_MS = 600_000;
/** The spoken answer is a staged file the plan points at: kept while a resumed round may still send it. */
const ANSWER_TTL_MS = 7 * 24 * 3_600_000;

/** Where speech and transcription go: OpenAI's audio API, or the custom agent's OpenAI-compatible server. */
export interface AudioApi {
  apiKey: string;
  baseURL: string;
  /** Which key this is (for `outcome.detail` and logs; never the key). */
  via: string;
}

/**
 * The audio API a round may use: the agent's own (an `openai` agent's key, a `custom` agent's server),
 * else OpenAI with the instance's `openai_apikey`; null when there is none (anthropic, gemini and
 * deepseek speak no audio API).
 */
export function audioApi(
  agent: Pick<AgentSettings, 'provider' | 'apikey' | 'url'>,
  openaiApikey: string,
  config: Pick<ChatbotConfig, 'baseUrls'>,
): AudioApi | null {
  if (agent.provider === 'openai' && agent.apikey) return { apiKey: agent.apikey, baseURL: config.baseUrls.openai, via: 'the agent’s OpenAI key' };
  if (agent.provider === 'custom' && agent.url)
    return { apiKey: agent.apikey || 'none', baseURL: agent.url.replace(/\/+$/, ''), via: 'the custom agent’s server' };
  if (openaiApikey) return { apiKey: openaiApikey, baseURL: config.baseUrls.openai, via: 'the instance’s openai_apikey' };
  return null;
}

/**
 * What an audio API's error says, without its key: a server that echoes the key it was given (a custom
 * agent's, a proxy's) must not put it in `outcome.detail` (stored in ai_metadata, sent in events), a
 * log line or an HTTP answer.
 */
export function audioError(api: Pick<AudioApi, 'apiKey'>, error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return api.apiKey.length >= 8 ? message.split(api.apiKey).join('[masked]') : message;
}

/** The AI SDK's OpenAI provider, loaded on first use (as the chat models' providers: providers.ts). */
async function openai(api: AudioApi, fetch: typeof globalThis.fetch) {
  const { createOpenAI } = await import('@ai-sdk/openai');
  return createOpenAI({ apiKey: api.apiKey, fetch: boundedFetch(fetch, MAX_AUDIO_ANSWER_BYTES), ...(api.baseURL ? { baseURL: api.baseURL } : {}) });
}

/**
 * What an audio says: the AI SDK's OpenAI transcription model (`model`, e.g. whisper-1) at `api`, every
 * request through `fetch`. The chatbot's ears and `/message/download`'s `transcribe` alike.
 */
export async function transcribeAudio(api: AudioApi, audio: Buffer, model: string, fetch: typeof globalThis.fetch, timeoutMs: number): Promise<string> {
  const result = await transcribe({
    model: (await openai(api, fetch)).transcription(model),
    audio: new Uint8Array(audio),
    abortSignal: AbortSignal.timeout(timeoutMs),
    maxRetries: 0,
  });
  return result.text.trim();
}

/** Bytes that are already an Ogg stream (what WhatsApp's voice notes are: Opus in Ogg). */
function isOgg(data: Uint8Array): boolean {
  return data.length > 4 && Buffer.from(data.subarray(0, 4)).toString('latin1') === 'OggS';
}

/**
 * The chatbot's ears and voice. A received voice note (or audio) is downloaded by the worker holding
 * the instance (`media.download`) and transcribed through the AI SDK's OpenAI transcription model, once
 * (`chatbot_transcripts`). A round whose turn was a voice note is answered with one: the answer's text
 * spoken by the AI SDK's OpenAI speech model, made Ogg/Opus, stored as a file the plan's send points at
 * (so a resumed round resends the same bytes under the same id). Every request goes through `fetch`
 * (the SSRF-guarded one).
 */
export class Voice {
  constructor(
    private readonly files: FileRepository,
    private readonly transcripts: ChatbotTranscriptRepository,
    private readonly bus: Bus,
    private readonly config: ChatbotConfig,
    private readonly fetch: typeof globalThis.fetch,
    private readonly logger: Logger,
  ) {}

  /**
   * The transcripts of these voice notes (message ids, most wanted first): the stored ones, and the
   * others transcribed now (at most 10) and stored. A message without one is absent from the map (no
   * audio API, a download or transcription that failed): the model then sees a placeholder.
   */
  async hear(instanceId: string, messageIds: string[], api: AudioApi | null, timeoutMs: number): Promise<Map<string, string>> {
    const ids = [...new Set(messageIds.filter(Boolean))];
    if (!ids.length) return new Map();
    // One deadline for the download and the transcription together: hearing holds a round up to
    // `timeoutMs` (the model's timeout) at most, not once per step.
    const deadline = Date.now() + timeoutMs;
    const known = await this.transcripts.find(instanceId, ids);
    if (!api) return known;
    const missing = ids.filter((id) => !known.has(id)).slice(0, MAX_TRANSCRIPTIONS);
    // A few at a time, most wanted first: each may hold up to 25 MB (and its copies on the way to the
    // API), so a round of ten large audios does not hold ten at once.
    await forEachAtMost(missing, TRANSCRIPTIONS_AT_ONCE, async (messageId) => {
      try {
        const text = await this.transcribe(instanceId, messageId, api, deadline);
        if (!text) return;
        known.set(messageId, text);
        await this.transcripts.store(instanceId, messageId, text);
      } catch (error) {
        this.logger.warn({ instanceId, messageId, err: audioError(api, error) }, 'voice note not transcribed; the model sees a placeholder');
      }
    });
    return known;
  }

  /** Forgets transcripts older than `days`. */
  purge(days: number): Promise<number> {
    return this.transcripts.purge(days);
  }

  private async transcribe(instanceId: string, messageId: string, api: AudioApi, deadline: number): Promise<string> {
    const left = () => {
      const ms = deadline - Date.now();
      if (ms <= 0) throw new Error('no time left to transcribe it (the model timeout)');
      return ms;
    };
    // The worker refuses (too_large) an audio larger than the transcription takes, before reading it whole.
    const stored = await this.bus.request<{ fileId: string; size?: number }>(
      Subjects.instance(instanceId, 'media.download'),
      { instanceId, messageId, ttlMs: DOWNLOAD_TTL_MS, maxBytes: MAX_TRANSCRIPTION_BYTES },
      { timeoutMs: left() },
    );
    if ((stored.size ?? 0) > MAX_TRANSCRIPTION_BYTES) throw new Error(`the audio is larger than ${MAX_TRANSCRIPTION_BYTES} bytes`);
    const file = await this.files.read(stored.fileId, instanceId);
    if (!file) throw new Error('the downloaded voice note is gone');
    return transcribeAudio(api, file.data, this.config.voice.transcriptionModel, this.fetch, left());
  }

  /**
   * The plan answered with a voice note instead of its text messages (its menus, files and quick
   * replies stay), `outcome.audio` true. When it cannot be spoken (voice replies off, no audio API, an
   * answer too long, the speech call failing) the plan keeps its text and `outcome.detail` says why.
   */
  async speak(instanceId: string, plan: RoundPlan, agent: Pick<AgentSettings, 'provider'>, api: AudioApi | null, timeoutMs: number): Promise<RoundPlan> {
    const texts = plan.sends.filter((send) => send.kind === 'text');
    if (plan.failed || !texts.length) return plan;
    const spoken = texts.map((send) => String(send.payload.text ?? '')).join('\n\n');
    const inText = (why: string): RoundPlan => {
      plan.metadata.outcome.detail = `answered in text: ${why}`;
      return plan;
    };
    if (this.config.voice.replies === 'off') return inText('voice replies are off (CHATBOT_VOICE_REPLIES=off)');
    if (!api) return inText(`the provider ${agent.provider} has no speech API and no OpenAI key is set (the instance’s openai_apikey)`);
    if (spoken.length > MAX_SPEECH_CHARS) return inText(`the answer is too long to speak (${spoken.length} characters, ${MAX_SPEECH_CHARS} at most)`);
    let data: Buffer;
    try {
      const { audio } = await generateSpeech({
        model: (await openai(api, this.fetch)).speech(this.config.voice.speechModel),
        text: spoken,
        voice: this.config.voice.speechVoice,
        outputFormat: 'opus',
        abortSignal: AbortSignal.timeout(timeoutMs),
        maxRetries: 0,
      });
      // OpenAI's `opus` is Ogg already; another server's answer (mp3, wav…) is converted.
      data = isOgg(audio.uint8Array) ? Buffer.from(audio.uint8Array) : await toOpusVoiceNote(Buffer.from(audio.uint8Array));
    } catch (error) {
      const why = audioError(api, error);
      this.logger.warn({ instanceId, err: why }, 'text to speech failed; answering in text');
      return inText(`text to speech failed through ${api.via}: ${why}`.slice(0, 500));
    }
    let fileId: string;
    try {
      fileId = await this.files.store(instanceId, data, 'audio/ogg; codecs=opus', 'answer.ogg', ANSWER_TTL_MS);
    } catch (error) {
      // The file store (an S3 bucket) failing costs the voice, not the round: the text is at hand.
      this.logger.warn({ instanceId, err: (error as Error).message }, 'the spoken answer could not be stored; answering in text');
      return inText(`the spoken answer could not be stored: ${(error as Error).message}`.slice(0, 500));
    }
    const voiceNote: PlannedSend = {
      ...newMessageIds(),
      kind: 'audio',
      content: {
        kind: 'media',
        mediaType: 'audio',
        source: { fileId },
        mimetype: 'audio/ogg; codecs=opus',
        caption: '',
        fileName: '',
        ptt: true,
        gifPlayback: false,
        ptv: false,
        viewOnce: false,
        thumbnailBase64: '',
      },
      payload: { text: spoken, fileId },
    };
    plan.sends = [voiceNote, ...plan.sends.filter((send) => send.kind !== 'text')];
    plan.metadata.outcome = { ...plan.metadata.outcome, texts: 0, audio: true };
    return plan;
  }
}
