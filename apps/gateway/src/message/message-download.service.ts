import { Inject, Injectable } from '@nestjs/common';
import { audioError, guardedFetch, MAX_TRANSCRIPTION_BYTES, transcribeAudio } from '@gw/chatbot';
import { FileRepository, InstanceRepository, MessageRepository } from '@gw/persistence';
import { SsrfGuard, toMp3 } from '@gw/platform';
import { ApiError } from '../common/api-error';
import { fileServing } from '../files/file-serving';
import type { GatewayConfig } from '../runtime/gateway-config';
import { GATEWAY_CONFIG } from '../runtime/tokens';
import { SessionClient } from '../session/session.client';
import type { DownloadDto } from './dto/message-actions.dto';
import type { MessageDownloadResponse } from './dto/message.response';
import { MessageActionsService } from './message-actions.service';
import type { RequestInstance } from '../common/request-instance';

const LINK_TTL_MS = 7 * 24 * 3_600_000;
const TRANSCRIBE_TIMEOUT_MS = 60_000;

/**
 * POST /message/download: the media of a received message, as a link and/or base64 (MP3 for audio),
 * and an audio's transcription (`transcribe`: OpenAI's transcription with the request's or the
 * instance's `openai_apikey`, the chatbot's own transcription).
 */
@Injectable()
export class MessageDownloadService {
  private readonly fetch: typeof globalThis.fetch;

  constructor(
    private readonly files: FileRepository,
    private readonly messages: MessageRepository,
    private readonly instances: InstanceRepository,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly sessions: SessionClient,
    private readonly actions: MessageActionsService,
  ) {
    // OpenAI through the SSRF guard, as the chatbot calls it.
    this.fetch = guardedFetch(new SsrfGuard(config.ssrfAllowlist));
  }

  async download(instance: RequestInstance, dto: DownloadDto): Promise<MessageDownloadResponse> {
    const givenKey = dto.openai_apikey?.trim() ?? '';
    const key = givenKey || instance.openaiApikey || '';
    if (dto.transcribe && !key)
      throw ApiError.badRequest('transcribe needs an OpenAI key: openai_apikey in the request, or the instance’s (/instance/updatechatbotsettings)');
    let target = await this.actions.find(instance, dto.id);
    if (dto.download_quoted) {
      if (!target.quoted) throw ApiError.badRequest('the message quotes no other message');
      target = await this.actions.find(instance, target.quoted);
    }
    if (target.type !== 'media' || !['image', 'video', 'gif', 'ptv', 'audio', 'ptt', 'document', 'sticker'].includes(target.mediaType)) {
      throw ApiError.badRequest('the message has no downloadable media');
    }
    const isAudio = target.mediaType === 'audio' || target.mediaType === 'ptt';
    // Refused before anything is downloaded; an audio larger than the transcription takes is refused
    // by the worker (413) before it is read whole.
    if (dto.transcribe && !isAudio) throw ApiError.badRequest('transcribe: the message is no audio');
    const stored = await this.sessions.request(
      instance.id,
      'media.download',
      { instanceId: instance.id, messageId: target.messageId, ttlMs: LINK_TTL_MS, ...(dto.transcribe ? { maxBytes: MAX_TRANSCRIPTION_BYTES } : {}) },
      60_000,
    );
    let fileId = stored.fileId;
    let mimetype = stored.mimetype;
    const transcription = dto.transcribe ? await this.transcribe(instance, stored.fileId, key, givenKey) : '';
    if (isAudio && dto.generate_mp3 !== false) {
      const original = await this.files.read(fileId, instance.id);
      if (original) {
        const mp3 = await toMp3(original.data).catch(() => null);
        if (mp3) {
          fileId = await this.files.store(instance.id, mp3, 'audio/mpeg', (original.fileName || target.messageId).replace(/\.\w+$/, '') + '.mp3', LINK_TTL_MS);
          mimetype = 'audio/mpeg';
        }
      }
    }
    const base64Data = dto.return_base64 ? ((await this.files.read(fileId, instance.id))?.data.toString('base64') ?? '') : '';
    // In S3, a link signed for the bucket (expiring with the file); in Postgres, the gateway's /files link.
    const info = await this.files.info(fileId, instance.id);
    const signed = info ? await this.files.signedLink(info, fileServing(info.mimetype, info.fileName)) : null;
    const link = signed ?? `${this.config.publicBaseUrl.replace(/\/$/, '')}/files/${fileId}`;
    // The message now has a file the API serves: its record's fileURL, while the link lasts.
    await this.messages.setFileUrl(instance.id, target.messageId, link);
    return {
      fileURL: dto.return_link === false ? '' : link,
      mimetype,
      base64Data,
      transcription,
    };
  }

  /** What the audio says; a key given in the request is saved on the instance once it worked (uazapi: "atualiza e salva na instância"). */
  private async transcribe(instance: RequestInstance, fileId: string, key: string, givenKey: string): Promise<string> {
    const audio = await this.files.read(fileId, instance.id);
    if (!audio) throw ApiError.notFound('the downloaded audio expired');
    const openai = this.config.transcription ?? { openaiBaseUrl: '', model: 'whisper-1' };
    const api = { apiKey: key, baseURL: openai.openaiBaseUrl, via: 'OpenAI' };
    let text: string;
    try {
      text = await transcribeAudio(api, audio.data, openai.model, this.fetch, TRANSCRIBE_TIMEOUT_MS);
    } catch (error) {
      const failure = error as { statusCode?: number };
      // The provider's words, never the key it may echo.
      throw new ApiError(
        'upstream_failed',
        `transcription failed: ${failure.statusCode ? `${failure.statusCode} ` : ''}${audioError(api, error)}`.slice(0, 500),
      );
    }
    if (givenKey && givenKey !== instance.openaiApikey) await this.instances.update(instance.id, { openaiApikey: givenKey });
    return text;
  }
}
