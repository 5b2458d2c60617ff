import { Inject, Injectable } from '@nestjs/common';
import type { Bus } from '@gw/bus';
import { Subjects, type QueueNotice, type SendRequest } from '@gw/contracts';
import { createCampaign } from '@gw/dispatch';
import { CampaignExistsError, CampaignRepository, toMessageRecord, type CampaignFolderRow, type CampaignStatus } from '@gw/persistence';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { randomBytes } from 'node:crypto';
import { ApiError } from '../common/api-error';
import { validateBody } from '../common/validation';
import { pageWindow } from '../common/paging';
import { BUS } from '../runtime/tokens';
import { buildContactContent, buildLocationContent, buildMediaContent, buildTextContent, type BuiltContent } from '../send/content-builders';
import { MEDIA_TYPES, SendContactDto, SendLocationDto, SendMediaDto, SendTextDto } from '../send/dto/send-common.dto';
import { SendMenuDto } from '../send/interactive/interactive.dto';
import { buildMenuContent } from '../send/interactive/menu-content';
import { newMessageIds } from '../send/message-ids';
import { chatTarget, SendContentTools } from '../send/send-content-tools';
import { sendRecord } from '../send/send-payload';
import {
  CAMPAIGN_MENU_TYPES,
  FOLDER_STATUS_FILTERS,
  type SenderAdvancedDto,
  type SenderClearDoneDto,
  type SenderEditDto,
  type SenderListMessagesDto,
  type SenderSimpleDto,
} from './dto/sender.dto';
import type {
  CampaignCleanupResponse,
  CampaignCreatedResponse,
  CampaignEditedResponse,
  CampaignMessagesResponse,
  CampaignsClearedResponse,
  MessageQueueFolderResponse,
} from './dto/sender.response';
import type { RequestInstance } from '../common/request-instance';

type Body = Record<string, unknown>;

/** Below this, `scheduled_for` is minutes from now; above, epoch milliseconds. */
const EPOCH_MS_THRESHOLD = 1e11;

/**
 * The reference's `/sender/listfolders?status=` values as our folder statuses: a campaign still to run
 * or running is active, a finished one archived (one being deleted is neither).
 */
const FOLDER_STATUSES_BY_FILTER: Record<'Active' | 'Archived', readonly CampaignStatus[]> = {
  Active: ['scheduled', 'sending', 'paused'],
  Archived: ['done'],
};

/** The MessageQueueFolder record. */
export function toFolderRecord(row: CampaignFolderRow): MessageQueueFolderResponse {
  return {
    id: row.id,
    info: row.info,
    status: row.status,
    scheduled_for: row.scheduledFor.getTime(),
    delayMin: row.delayMin,
    delayMax: row.delayMax,
    log_delivered: row.logDelivered,
    log_failed: row.logFailed,
    log_played: row.logPlayed,
    log_read: row.logRead,
    log_sucess: row.logSuccess,
    log_total: row.logTotal,
    owner: row.owner,
    created: row.createdAt.toISOString(),
    updated: row.updatedAt.toISOString(),
  };
}

/**
 * Campaigns (`/sender/*`): each message becomes an async SendRequest (ids fixed, `Queued` row) held
 * in the campaign's queue; the dispatcher's CampaignScheduler releases them into
 * the instance's async send queue at the folder's pace.
 */
@Injectable()
export class SenderService {
  constructor(
    private readonly campaigns: CampaignRepository,
    @Inject(BUS) private readonly bus: Bus,
    private readonly tools: SendContentTools,
  ) {}

  /** `numbers`, `type`, the delays and the schedule are checked by the DTO; each number and the content per number here. */
  async simple(instance: RequestInstance, dto: SenderSimpleDto): Promise<CampaignCreatedResponse> {
    const requests: SendRequest[] = [];
    for (const [index, number] of dto.numbers.entries()) {
      if (typeof number !== 'string') throw ApiError.badRequest(`numbers[${index}] must be a string`);
      requests.push(await this.request(instance, { ...dto, number } as Body, `numbers[${index}]`));
    }
    return this.create(instance, dto, requests);
  }

  /** The list is checked by the DTO; each entry (an object with its own number, type and content) here, naming its index. */
  async advanced(instance: RequestInstance, dto: SenderAdvancedDto): Promise<CampaignCreatedResponse> {
    const requests: SendRequest[] = [];
    for (const [index, message] of dto.messages.entries()) {
      if (!message || typeof message !== 'object' || Array.isArray(message)) throw ApiError.badRequest(`messages[${index}] must be an object`);
      const entry = message as Body;
      requests.push(await this.request(instance, { ...entry, delay: entry.delay ?? dto.delay }, `messages[${index}]`));
    }
    return this.create(instance, dto, requests);
  }

  private async create(instance: RequestInstance, dto: SenderSimpleDto | SenderAdvancedDto, requests: SendRequest[]): Promise<CampaignCreatedResponse> {
    const delayMin = dto.delayMin ?? 0;
    const delayMax = dto.delayMax ?? 0;
    if (delayMax < delayMin) throw ApiError.badRequest('delayMax must be greater than or equal to delayMin');
    const scheduledFor = scheduledTime(dto.scheduled_for);
    const name = dto.folder?.trim() ?? '';
    const info = dto.info?.trim() ?? '';
    const id = `f${randomBytes(6).toString('hex')}`;
    if (name && (await this.campaigns.exists(instance.id, name))) throw ApiError.conflict(`campaign "${name}" already exists`);
    try {
      await createCampaign(this.campaigns, { id, name, info, scheduledFor, delayMin, delayMax }, requests, instance.owner, instance.id);
    } catch (error) {
      if (error instanceof CampaignExistsError) throw ApiError.conflict(`campaign "${name}" already exists`);
      throw error;
    }
    this.wakeQueue(instance.id);
    return { folder_id: id, count: requests.length, status: 'queued' };
  }

  /** One message of a campaign as an async SendRequest; errors name the message (`where`) and the field. */
  private async request(instance: RequestInstance, fields: Body, where: string): Promise<SendRequest> {
    const type = fields.type;
    if (typeof type !== 'string' || !type) throw ApiError.badRequest(`${where}: type is required`);
    let chatJid: string;
    try {
      chatJid = chatTarget(typeof fields.number === 'string' ? fields.number : undefined);
    } catch (error) {
      if (error instanceof ApiError) throw ApiError.badRequest(`${where}: number: ${error.message}`);
      throw error;
    }
    let built: BuiltContent;
    try {
      built = await this.content(instance, chatJid, type, fields);
    } catch (error) {
      if (error instanceof ApiError) throw ApiError.badRequest(`${where}: ${error.message}`);
      throw error;
    }
    const delay = fields.delay === undefined ? 0 : Number(fields.delay);
    if (!Number.isFinite(delay) || delay < 0) throw ApiError.badRequest(`${where}: delay must be a non-negative number (ms)`);
    return {
      instanceId: instance.id,
      ...newMessageIds(),
      chatJid,
      content: built.content,
      mentions: [],
      mentionAll: fields.mentions === 'all',
      delayMs: delay,
      record: sendRecord(built, str(fields.track_source), str(fields.track_id), withoutLists(built.payload)),
    };
  }

  private async content(instance: RequestInstance, chatJid: string, type: string, fields: Body): Promise<BuiltContent> {
    if (type === 'text') {
      if (typeof fields.text !== 'string' || !fields.text.trim()) throw ApiError.badRequest('text is required for type text');
      return buildTextContent(this.tools, instance, chatJid, await validateBody(SendTextDto, fields), true);
    }
    if ((MEDIA_TYPES as readonly string[]).includes(type)) {
      if (typeof fields.file !== 'string' || !fields.file.trim()) throw ApiError.badRequest(`file is required for type ${type}`);
      return buildMediaContent(this.tools, instance, chatJid, await validateBody(SendMediaDto, fields), true);
    }
    if (type === 'contact') return buildContactContent(await validateBody(SendContactDto, fields));
    if (type === 'location') return buildLocationContent(await validateBody(SendLocationDto, fields));
    if ((CAMPAIGN_MENU_TYPES as readonly string[]).includes(type)) return buildMenuContent(this.tools, instance, chatJid, menuFields(type, fields));
    throw ApiError.badRequest(
      `type "${type}" is not supported in campaigns: use text, ${MEDIA_TYPES.join(', ')}, contact, location, ${CAMPAIGN_MENU_TYPES.join(', ')}`,
    );
  }

  async edit(instance: RequestInstance, { folder_id: folderId, action }: SenderEditDto): Promise<CampaignEditedResponse> {
    if (action === 'delete') {
      const removed = await this.campaigns.remove(instance.id, folderId);
      if (!removed) throw ApiError.notFound('folder not found');
      this.wakeQueue(instance.id);
      return { status: 'deleting', message: 'Folder deletion has been initiated' };
    }
    if (action === 'stop') {
      const status = await this.campaigns.pause(instance.id, folderId);
      if (status === null) throw ApiError.notFound('folder not found');
      if (status !== 'paused') throw ApiError.badRequest(`folder is ${status}: only a scheduled or sending folder can be stopped`);
      return { status: 'paused' };
    }
    const status = await this.campaigns.resume(instance.id, folderId);
    if (status === null) throw ApiError.notFound('folder not found');
    if (status !== 'scheduled') throw ApiError.badRequest(`folder is ${status}: only a paused folder can be continued`);
    this.wakeQueue(instance.id);
    return { status: 'scheduled', message: 'Folder resumed successfully' };
  }

  async clearDone(instance: RequestInstance, dto: SenderClearDoneDto): Promise<CampaignCleanupResponse> {
    await this.campaigns.removeDone(instance.id, dto.hours ?? undefined);
    return { status: 'cleanup started' };
  }

  async clearAll(instance: RequestInstance): Promise<CampaignsClearedResponse> {
    const removed = await this.campaigns.removeAll(instance.id);
    this.wakeQueue(instance.id);
    return { status: 'processed', messages_deleted: removed.canceled, folders_deleted: removed.folders };
  }

  /** `status`: one of our folder statuses, or the reference's Active / Archived (several of ours each). */
  async listFolders(instance: RequestInstance, status: string | undefined): Promise<MessageQueueFolderResponse[]> {
    if (!status) return (await this.campaigns.list(instance.id)).map(toFolderRecord);
    if (!(FOLDER_STATUS_FILTERS as readonly string[]).includes(status)) throw ApiError.badRequest(`status must be one of ${FOLDER_STATUS_FILTERS.join(', ')}`);
    const statuses = FOLDER_STATUSES_BY_FILTER[status as keyof typeof FOLDER_STATUSES_BY_FILTER] ?? [status as CampaignStatus];
    return (await this.campaigns.listWithStatus(instance.id, statuses)).map(toFolderRecord);
  }

  /** `page`/`pageSize` (older clients) win over `limit`/`offset` when either is given. */
  async listMessages(instance: RequestInstance, dto: SenderListMessagesDto): Promise<CampaignMessagesResponse> {
    const { limit, offset, pagination } = pageWindow(dto, 1000);
    const { rows, total } = await this.campaigns.messages(instance.id, dto.folder_id, dto.messageStatus || undefined, limit, offset);
    return { messages: rows.map((row) => toMessageRecord(row, instance.owner)), pagination: pagination(total) };
  }

  /**
   * Wakes the dispatchers' campaign schedulers after a campaign change committed (they also poll): a notice that
   * cannot be published never fails the request that made the change.
   */
  private wakeQueue(instanceId: string): void {
    try {
      this.bus.publish(Subjects.queue(instanceId), { instanceId, campaigns: true } satisfies QueueNotice);
    } catch {
      // The dispatchers' slow poll picks it up.
    }
  }
}

/** `scheduled_for` (checked by the DTO): epoch ms, or minutes from now (small numbers); absent → now. */
function scheduledTime(value: number | null | undefined): Date {
  if (value === undefined || value === null) return new Date();
  return new Date(value >= EPOCH_MS_THRESHOLD ? value : Date.now() + value * 60_000);
}

const str = (value: unknown): string => (typeof value === 'string' ? value : '');

/** The menu fields of a campaign message, checked by `/send/menu`'s own DTO rules (the campaign body is not a DTO). */
function menuFields(type: string, fields: Body): SendMenuDto {
  const plain: Record<string, unknown> = { type };
  for (const key of ['text', 'choices', 'footerText', 'listButton', 'selectableCount', 'imageButton'] as const)
    if (fields[key] !== undefined && fields[key] !== null) plain[key] = fields[key];
  if (plain.listButton === undefined && fields.buttonText !== undefined && fields.buttonText !== null) plain.listButton = fields.buttonText;
  const dto = plainToInstance(SendMenuDto, plain);
  const [error] = validateSync(dto);
  if (error) {
    const constraints = Object.values(error.constraints ?? {});
    throw ApiError.badRequest(constraints[constraints.length - 1] ?? `${error.property} is invalid`);
  }
  return dto;
}

/** sendPayload keeps what was asked of this message, without the campaign's lists. */
function withoutLists(payload: Record<string, unknown>): Record<string, unknown> {
  const { numbers: _numbers, messages: _messages, ...rest } = payload;
  return rest;
}
