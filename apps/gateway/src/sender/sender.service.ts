import { Inject, Injectable } from '@nestjs/common';
import type { Bus } from '@gw/bus';
import { Subjects, type SendRequest } from '@gw/contracts';
import { createCampaign } from '@gw/dispatch';
import { CAMPAIGN_STATUSES, CampaignExistsError, CampaignRepository, toMessageRecord, type CampaignFolderRow, type InstanceEntity } from '@gw/persistence';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { ApiError } from '../common/api-error';
import { BUS } from '../runtime/tokens';
import { buildContactContent, buildLocationContent, buildMediaContent, buildTextContent, type BuiltContent } from '../send/content-builders';
import { MEDIA_TYPES } from '../send/dto/send-common.dto';
import { SendMenuDto } from '../send/interactive/interactive.dto';
import { buildMenuContent } from '../send/interactive/menu-content';
import { newMessageIds, SendService } from '../send/send.service';
import { withoutInlineMedia } from '../send/send-payload';

type Body = Record<string, unknown>;

/** Below this, `scheduled_for` is minutes from now; above, epoch milliseconds. */
const EPOCH_MS_THRESHOLD = 1e11;
const MAX_MESSAGES = 10_000;

/** The MessageQueueFolder record. */
export function toFolderRecord(row: CampaignFolderRow) {
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
    private readonly dataSource: DataSource,
    private readonly campaigns: CampaignRepository,
    @Inject(BUS) private readonly bus: Bus,
    private readonly sends: SendService,
  ) {}

  /** Wakes the dispatchers' campaign schedulers (they also poll). */
  private poke(instanceId: string): void {
    this.bus.publish(Subjects.queue(instanceId), { instanceId });
  }

  async simple(instance: InstanceEntity, body: Body) {
    const numbers = body.numbers;
    if (!Array.isArray(numbers) || numbers.length === 0) throw ApiError.badRequest('numbers is required: a non-empty array of phone numbers');
    if (numbers.length > MAX_MESSAGES) throw ApiError.badRequest(`numbers: at most ${MAX_MESSAGES}`);
    const requests: SendRequest[] = [];
    for (const [index, number] of numbers.entries()) {
      if (typeof number !== 'string') throw ApiError.badRequest(`numbers[${index}] must be a string`);
      requests.push(await this.request(instance, { ...body, number }, `numbers[${index}]`));
    }
    return this.create(instance, body, requests, true);
  }

  async advanced(instance: InstanceEntity, body: Body) {
    const messages = body.messages;
    if (!Array.isArray(messages) || messages.length === 0) throw ApiError.badRequest('messages is required: a non-empty array');
    if (messages.length > MAX_MESSAGES) throw ApiError.badRequest(`messages: at most ${MAX_MESSAGES}`);
    const requests: SendRequest[] = [];
    for (const [index, message] of messages.entries()) {
      if (!message || typeof message !== 'object' || Array.isArray(message)) throw ApiError.badRequest(`messages[${index}] must be an object`);
      const entry = message as Body;
      requests.push(await this.request(instance, { ...entry, delay: entry.delay ?? body.delay }, `messages[${index}]`));
    }
    return this.create(instance, body, requests, false);
  }

  private async create(instance: InstanceEntity, body: Body, requests: SendRequest[], delaysRequired: boolean) {
    const delayMin = seconds(body.delayMin, 'delayMin', delaysRequired);
    const delayMax = seconds(body.delayMax, 'delayMax', delaysRequired);
    if (delayMax < delayMin) throw ApiError.badRequest('delayMax must be greater than or equal to delayMin');
    const scheduledFor = scheduledTime(body.scheduled_for);
    const name = optionalString(body.folder, 'folder');
    const info = optionalString(body.info, 'info');
    const id = `f${randomBytes(6).toString('hex')}`;
    if (name && (await this.campaigns.exists(instance.id, name))) throw ApiError.conflict(`campaign "${name}" already exists`);
    try {
      await createCampaign(this.dataSource, { id, name, info, scheduledFor, delayMin, delayMax }, requests, instance.owner, instance.id);
    } catch (error) {
      if (error instanceof CampaignExistsError) throw ApiError.conflict(`campaign "${name}" already exists`);
      throw error;
    }
    this.poke(instance.id);
    return { folder_id: id, count: requests.length, status: 'queued' };
  }

  /** One message of a campaign as an async SendRequest; errors name the message (`where`) and the field. */
  private async request(instance: InstanceEntity, fields: Body, where: string): Promise<SendRequest> {
    const type = fields.type;
    if (typeof type !== 'string' || !type) throw ApiError.badRequest(`${where}: type is required`);
    let chatJid: string;
    try {
      chatJid = this.sends.target(typeof fields.number === 'string' ? fields.number : undefined, 'missing number');
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
      record: {
        sendFunction: built.sendFunction,
        sendPayload: stripLarge(built.payload),
        trackSource: str(fields.track_source),
        trackId: str(fields.track_id),
        sendFolderId: '',
        fileUrl: typeof built.responseExtra?.fileUrl === 'string' ? built.responseExtra.fileUrl : '',
      },
    };
  }

  private async content(instance: InstanceEntity, chatJid: string, type: string, fields: Body): Promise<BuiltContent> {
    if (type === 'text') {
      if (typeof fields.text !== 'string' || !fields.text.trim()) throw ApiError.badRequest('text is required for type text');
      return buildTextContent(this.sends, instance, chatJid, fields as never, true);
    }
    if ((MEDIA_TYPES as readonly string[]).includes(type)) {
      if (typeof fields.file !== 'string' || !fields.file.trim()) throw ApiError.badRequest(`file is required for type ${type}`);
      return buildMediaContent(this.sends, instance, chatJid, fields as never, true);
    }
    if (type === 'contact') return buildContactContent(fields as never);
    if (type === 'location') return buildLocationContent(fields as never);
    if ((CAMPAIGN_MENU_TYPES as readonly string[]).includes(type)) return buildMenuContent(this.sends, instance, chatJid, menuFields(type, fields));
    throw ApiError.badRequest(
      `type "${type}" is not supported in campaigns: use text, ${MEDIA_TYPES.join(', ')}, contact, location, ${CAMPAIGN_MENU_TYPES.join(', ')}`,
    );
  }

  async edit(instance: InstanceEntity, body: Body) {
    const folderId = body.folder_id;
    if (typeof folderId !== 'string' || !folderId) throw ApiError.badRequest('folder_id is required');
    const action = body.action;
    if (action !== 'stop' && action !== 'continue' && action !== 'delete') throw ApiError.badRequest('action must be one of stop, continue, delete');
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
    this.poke(instance.id);
    return { status: 'scheduled', message: 'Folder resumed successfully' };
  }

  async clearDone(instance: InstanceEntity, body: Body) {
    const hours = body.hours === undefined || body.hours === null ? undefined : Number(body.hours);
    if (hours !== undefined && (!Number.isFinite(hours) || hours < 0)) throw ApiError.badRequest('hours must be a non-negative number');
    await this.campaigns.removeDone(instance.id, hours);
    return { status: 'cleanup started' };
  }

  async clearAll(instance: InstanceEntity) {
    const removed = await this.campaigns.removeAll(instance.id);
    this.wakeQueue(instance.id);
    return { status: 'processed', messages_deleted: removed.canceled, folders_deleted: removed.folders };
  }

  async listFolders(instance: InstanceEntity, status: string | undefined) {
    if (status && !(CAMPAIGN_STATUSES as readonly string[]).includes(status))
      throw ApiError.badRequest(`status must be one of ${CAMPAIGN_STATUSES.join(', ')}`);
    return (await this.campaigns.list(instance.id, status || undefined)).map(toFolderRecord);
  }

  async listMessages(instance: InstanceEntity, body: Body) {
    const folderId = body.folder_id;
    if (typeof folderId !== 'string' || !folderId) throw ApiError.badRequest('folder_id is required');
    const messageStatus = body.messageStatus;
    if (messageStatus !== undefined && messageStatus !== null && messageStatus !== '' && !['Scheduled', 'Sent', 'Failed'].includes(messageStatus as string)) {
      throw ApiError.badRequest('messageStatus must be one of Scheduled, Sent, Failed');
    }
    const paged = body.page !== undefined || body.pageSize !== undefined;
    const limit = paged ? integer(body.pageSize, 'pageSize', 1000, 1, 1000) : integer(body.limit, 'limit', 1000, 1, 1000);
    const offset = paged
      ? (integer(body.page, 'page', 1, 1, Number.MAX_SAFE_INTEGER) - 1) * limit
      : integer(body.offset, 'offset', 0, 0, Number.MAX_SAFE_INTEGER);
    const { rows, total } = await this.campaigns.messages(instance.id, folderId, (messageStatus as string) || undefined, limit, offset);
    const pagination = paged
      ? { totalRecords: total, limit, offset, page: offset / limit + 1, pageSize: limit, lastPage: Math.max(1, Math.ceil(total / limit)) }
      : { totalRecords: total, limit, offset };
    return { messages: rows.map((row) => toMessageRecord(row, instance.owner)), pagination };
  }

  private wakeQueue(instanceId: string): void {
    try {
      this.bus.publish(Subjects.queue(instanceId), { instanceId });
    } catch {
      // The dispatchers' slow poll picks it up.
    }
  }
}

function seconds(value: unknown, field: string, required: boolean): number {
  if (value === undefined || value === null || value === '') {
    if (required) throw ApiError.badRequest(`${field} is required (seconds)`);
    return 0;
  }
  const number = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : NaN;
  if (!Number.isFinite(number) || number < 0 || number > 86_400) throw ApiError.badRequest(`${field} must be a number of seconds between 0 and 86400`);
  return number;
}

/** `scheduled_for`: epoch ms, or minutes from now (small numbers); absent → now. */
function scheduledTime(value: unknown): Date {
  if (value === undefined || value === null || value === '') return new Date();
  const number = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : NaN;
  if (!Number.isFinite(number) || number < 0) throw ApiError.badRequest('scheduled_for must be a timestamp in milliseconds or a number of minutes from now');
  return new Date(number >= EPOCH_MS_THRESHOLD ? number : Date.now() + number * 60_000);
}

function integer(value: unknown, field: string, fallback: number, min: number, max: number): number {
  if (value === undefined || value === null || value === '') return fallback;
  const number = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : NaN;
  if (!Number.isInteger(number) || number < min || number > max) throw ApiError.badRequest(`${field} must be an integer between ${min} and ${max}`);
  return number;
}

function optionalString(value: unknown, field: string): string {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw ApiError.badRequest(`${field} must be a string`);
  return value.trim();
}

const str = (value: unknown): string => (typeof value === 'string' ? value : '');

/** Menu messages a campaign may carry (uazapi 2.16), built as `/send/menu` builds them. */
const CAMPAIGN_MENU_TYPES = ['button', 'list', 'poll', 'carousel'] as const;

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

/** sendPayload keeps what was asked, without base64 media (and without the campaign's lists). */
function stripLarge(payload: Record<string, unknown>): Record<string, unknown> {
  const { numbers: _numbers, messages: _messages, ...rest } = payload;
  return withoutInlineMedia(rest);
}
