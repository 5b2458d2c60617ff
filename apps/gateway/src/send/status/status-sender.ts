import { Injectable } from '@nestjs/common';
import { ErrorCode, RpcError, type OutboundContent, type SendReply } from '@gw/contracts';

import { ApiError } from '../../common/api-error';
import type { SendOutcome, StatusDebug, StatusDiscardedRecipient, StatusSentResponse } from '../../common/dto/message.response';
import { buildMediaContent } from '../content-builders';
import { integerOf } from '../dto/field-rules';
import { SendContentTools } from '../send-content-tools';
import { SendRequester } from '../send-requester';
import { StatusAudience } from './status-audience';
import type { SendStatusDto } from './status.dto';
import type { RequestInstance } from '../../common/request-instance';

export const STATUS_BROADCAST = 'status@broadcast';

/**
 * Background colours 1–19 of a text status (ARGB), in the order uazapi documents them: soft
 * yellow-green, pale yellow, vivid orange-yellow, vivid green, moss green, light green, pool blue,
 * deep blue, light greyish blue, light lilac, warm lilac, bluish purple, deep magenta, soft pink,
 * salmon pink, light brown, light bluish grey, mid grey, deep grey (the default).
 */
export const STATUS_BACKGROUNDS = [
  0xffc9db74, 0xfffff59d, 0xffffb300, 0xff43a047, 0xff6b8e23, 0xffa5d6a7, 0xff26c6da, 0xff1565c0, 0xff90a4ae, 0xffce93d8, 0xffab47bc, 0xff5c6bc0, 0xffad1457,
  0xfff8bbd0, 0xfffa8072, 0xffbcaaa4, 0xffb0bec5, 0xff757575, 0xff424242,
] as const;
const DEFAULT_BACKGROUND = 19;

/**
 * `POST /send/status`: a story to `status@broadcast`, sent to the audience the status privacy allows
 * (the saved contacts, all of them or but an excluded list, or only an allowed list) or to the explicit `recipients` that survive the checks, stored like
 * any send. The answer carries uazapi's `debug` on who was chosen and who was left out, and why.
 */
@Injectable()
export class StatusSender {
  constructor(
    private readonly audiences: StatusAudience,
    private readonly tools: SendContentTools,
    private readonly requester: SendRequester,
  ) {}

  async sendStatus(instance: RequestInstance, dto: SendStatusDto): Promise<StatusSentResponse> {
    const type = dto.type;
    const text = dto.text ?? '';
    if (type === 'text' && !text.trim()) throw ApiError.badRequest('text is required for type=text');
    if (type !== 'text' && (!dto.file || !dto.file.trim())) throw ApiError.badRequest('file is required for media statuses (a URL or base64)');
    const background = integerOf(dto.background_color);
    const font = integerOf(dto.font);
    const explicit = dto.recipients ?? undefined;

    const audience = await this.audiences.select(instance, explicit, integerOf(dto.max_recipients));
    if (audience.recipients.length === 0) {
      const error = explicit ? 'no valid recipients left for the status' : 'the status audience is empty: the instance has no saved contacts (give recipients)';
      throw ApiError.badRequest(error, { debug: audience.debug });
    }

    const content: OutboundContent =
      type === 'text'
        ? { kind: 'text', text, linkPreview: null }
        : // Placeholders are left alone (a status has no chat to fill them from): built as if queued.
          (await buildMediaContent(this.tools, instance, STATUS_BROADCAST, { type, file: dto.file!, text, mimetype: dto.mimetype }, true)).content;
    const withBackground = type === 'text' || type === 'ptt' || type === 'myaudio';
    const status = {
      recipients: audience.recipients,
      ...(withBackground && (type === 'text' || background !== undefined)
        ? { backgroundArgb: STATUS_BACKGROUNDS[(background ?? DEFAULT_BACKGROUND) - 1] }
        : {}),
      ...(type === 'text' && font !== undefined ? { font } : {}),
    };
    let record: SendReply & { response: SendOutcome };
    try {
      const common = { track_source: dto.track_source, track_id: dto.track_id };
      record = await this.requester.send(instance, common, STATUS_BROADCAST, { content, sendFunction: 'SendStatus', payload: { ...dto } }, { status });
    } catch (error) {
      // The worker's check found none of them on WhatsApp.
      if (error instanceof RpcError && error.code === ErrorCode.BadRequest && /no valid recipients/.test(error.message)) {
        throw ApiError.badRequest('no valid recipients left for the status', {
          debug: withDiscarded(
            audience.debug,
            audience.recipients.map((jid) => ({ input: audience.inputs.get(jid) ?? jid, reason: 'not_on_whatsapp' })),
            0,
          ),
        });
      }
      throw error;
    }
    const { statusRecipients, statusDiscarded, response: _sent, ...message } = record;
    const notOnWhatsApp = (statusDiscarded ?? []).map((entry) => ({ input: audience.inputs.get(entry.input) ?? entry.input, reason: entry.reason }));
    return {
      ...message,
      Id: message.messageid,
      debug: withDiscarded(audience.debug, notOnWhatsApp, statusRecipients?.length ?? audience.recipients.length),
      response: { status: 'success', message: 'Status sent successfully' },
    };
  }
}

/** The audience debug with the recipients the worker found not on WhatsApp. */
function withDiscarded(debug: StatusDebug, notOnWhatsApp: StatusDiscardedRecipient[], selected: number): StatusDebug {
  if (notOnWhatsApp.length === 0) return { ...debug, selected_recipient_count: selected };
  const discarded = [...(debug.discarded_recipients ?? []), ...notOnWhatsApp];
  return {
    ...debug,
    ...(debug.explicit_recipients ? { resolved_recipient_count: Number(debug.resolved_recipient_count ?? 0) - notOnWhatsApp.length } : {}),
    discarded_recipient_count: discarded.length,
    discarded_recipients: discarded,
    selected_recipient_count: selected,
  };
}
