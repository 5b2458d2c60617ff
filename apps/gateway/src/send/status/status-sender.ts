import { ErrorCode, RpcError, type OutboundContent } from '@gw/contracts';
import { ContactRepository, LidMappingRepository, type InstanceEntity } from '@gw/persistence';
import type { DataSource } from 'typeorm';
import { ApiError } from '../../common/api-error';
import type { SessionClient } from '../../session/session.client';
import { buildMediaContent } from '../content-builders';
import type { SendService } from '../send.service';
import { selectStatusRecipients } from './status-audience';
import { STATUS_FONTS, STATUS_TEXT_LIMIT, STATUS_TYPES, type SendStatusDto } from './status.dto';

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
export class StatusSender {
  private readonly contacts: ContactRepository;
  private readonly lids: LidMappingRepository;

  constructor(
    dataSource: DataSource,
    private readonly sends: SendService,
    private readonly sessions: SessionClient,
  ) {
    this.contacts = new ContactRepository(dataSource);
    this.lids = new LidMappingRepository(dataSource);
  }

  async send(instance: InstanceEntity, dto: SendStatusDto) {
    const type = dto.type?.trim().toLowerCase() ?? '';
    if (!(STATUS_TYPES as readonly string[]).includes(type)) throw ApiError.badRequest(`type must be one of ${STATUS_TYPES.join(', ')}`);
    const text = dto.text ?? '';
    if (type === 'text' && !text.trim()) throw ApiError.badRequest('text is required for type=text');
    if (text.length > STATUS_TEXT_LIMIT) throw ApiError.badRequest(`text is longer than ${STATUS_TEXT_LIMIT} characters`);
    const background = integerField(dto.background_color, 'Invalid background_color: give an integer from 1 to 19');
    if (background !== undefined && (background < 1 || background > STATUS_BACKGROUNDS.length))
      throw ApiError.badRequest('Invalid background_color: give an integer from 1 to 19');
    const font = integerField(dto.font, 'Invalid font');
    if (font !== undefined && !(STATUS_FONTS as readonly number[]).includes(font)) throw ApiError.badRequest('Invalid font');
    if (type !== 'text' && (!dto.file || !dto.file.trim())) throw ApiError.badRequest('file is required for media statuses (a URL or base64)');
    const maxRecipients = integerField(dto.max_recipients, 'max_recipients must be a non-negative integer');
    if (maxRecipients !== undefined && maxRecipients < 0) throw ApiError.badRequest('max_recipients must be a non-negative integer');
    let explicit: string[] | undefined;
    if (dto.recipients !== undefined && dto.recipients !== null) {
      if (!Array.isArray(dto.recipients) || dto.recipients.some((entry) => typeof entry !== 'string'))
        throw ApiError.badRequest('recipients must be an array of strings');
      if (dto.recipients.length === 0) throw ApiError.badRequest('recipients is empty: omit it to send to the whole audience');
      explicit = dto.recipients as string[];
    }

    const audience = await selectStatusRecipients({
      contacts: await this.contacts.listAll(instance.id),
      privacy: await this.privacy(instance),
      explicit,
      maxRecipients,
      pnForLid: (lid) => this.lids.pnForLid(instance.id, lid),
    });
    if (audience.recipients.length === 0) {
      const error = explicit ? 'no valid recipients left for the status' : 'the status audience is empty: the instance has no saved contacts (give recipients)';
      throw ApiError.badRequest(error, { debug: audience.debug });
    }

    const content: OutboundContent =
      type === 'text'
        ? { kind: 'text', text, linkPreview: null }
        : // Placeholders are left alone (a status has no chat to fill them from): built as if queued.
          (await buildMediaContent(this.sends, instance, STATUS_BROADCAST, { type, file: dto.file, text, mimetype: dto.mimetype }, true)).content;
    const withBackground = type === 'text' || type === 'ptt' || type === 'myaudio';
    const status = {
      recipients: audience.recipients,
      ...(withBackground && (type === 'text' || background !== undefined)
        ? { backgroundArgb: STATUS_BACKGROUNDS[(background ?? DEFAULT_BACKGROUND) - 1] }
        : {}),
      ...(type === 'text' && font !== undefined ? { font } : {}),
    };
    const payload = { ...dto, type };
    let record: Record<string, unknown>;
    try {
      record = await this.sends.send(
        instance,
        { track_source: dto.track_source, track_id: dto.track_id },
        STATUS_BROADCAST,
        content,
        'SendStatus',
        payload,
        {},
        { status },
      );
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
    const { statusRecipients, statusDiscarded, ...message } = record as Record<string, unknown> & {
      statusRecipients?: string[];
      statusDiscarded?: Array<{ input: string; reason: string }>;
    };
    const notOnWhatsApp = (statusDiscarded ?? []).map((entry) => ({ input: audience.inputs.get(entry.input) ?? entry.input, reason: entry.reason }));
    return {
      ...message,
      Id: message.messageid,
      debug: withDiscarded(audience.debug, notOnWhatsApp, statusRecipients?.length ?? audience.recipients.length),
      response: { status: 'success', message: 'Status sent successfully' },
    };
  }

  /**
   * The status audience the phone keeps. When it cannot be read, nothing is sent: guessing ("all
   * saved contacts") would show the story to contacts the user excluded.
   */
  private async privacy(instance: InstanceEntity): Promise<{ type: string; list: string[]; fallback: boolean }> {
    try {
      const { type, list } = await this.sessions.request(instance.id, 'status.privacy', { instanceId: instance.id });
      return { type, list, fallback: false };
    } catch (error) {
      // No session, no answer in time, a session moving: the usual statuses (409, 504, 503).
      if (error instanceof RpcError && error.code !== ErrorCode.Internal && error.code !== ErrorCode.BadRequest) throw error;
      throw new ApiError('upstream_failed', `could not read the status audience from WhatsApp (${(error as Error).message}); the status was not sent`);
    }
  }
}

/** An integer field given as a number or numeric string; undefined when absent; 400 otherwise. */
function integerField(value: unknown, message: string): number | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const number = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
  if (!Number.isInteger(number)) throw ApiError.badRequest(message);
  return number;
}

/** The audience debug with the recipients the worker found not on WhatsApp. */
function withDiscarded(debug: Record<string, unknown>, notOnWhatsApp: Array<{ input: string; reason: string }>, selected: number): Record<string, unknown> {
  if (notOnWhatsApp.length === 0) return { ...debug, selected_recipient_count: selected };
  const discarded = [...((debug.discarded_recipients as Array<{ input: string; reason: string }>) ?? []), ...notOnWhatsApp];
  return {
    ...debug,
    ...(debug.explicit_recipients ? { resolved_recipient_count: Number(debug.resolved_recipient_count ?? 0) - notOnWhatsApp.length } : {}),
    discarded_recipient_count: discarded.length,
    discarded_recipients: discarded,
    selected_recipient_count: selected,
  };
}
