import { Inject, Injectable } from '@nestjs/common';
import { ErrorCode, RpcError } from '@gw/contracts';
import { parseChatTarget } from '@gw/domain';
import { BlocklistRepository, LabelRepository, toLabelRecord, type InstanceEntity } from '@gw/persistence';
import { newRequestId } from '@gw/platform';
import type { DataSource } from 'typeorm';
import { ApiError } from '../common/api-error';
import { DATA_SOURCE } from '../runtime/tokens';
import type { ChatLabelsDto, EditLabelDto } from './contact-state.dto';
import { SessionClient } from '../session/session.client';

const REQUEST_ID = /^[\w.:-]{1,100}$/;

/** Labels (`/labels`, `/labels/refresh`, `/label/edit`, `/chat/labels`) and the blocklist (`/chat/block`, `/chat/blocklist`). */
@Injectable()
export class ContactStateService {
  private readonly labels: LabelRepository;
  private readonly blocklist: BlocklistRepository;

  constructor(
    @Inject(DATA_SOURCE) dataSource: DataSource,
    private readonly sessions: SessionClient,
  ) {
    this.labels = new LabelRepository(dataSource);
    this.blocklist = new BlocklistRepository(dataSource);
  }

  /** The labels as the phone's app state last said (refreshed by the app state's own sync). */
  async listLabels(instance: InstanceEntity): Promise<Array<Record<string, unknown>>> {
    return (await this.labels.list(instance.id)).map((row) => toLabelRecord(row, instance.owner));
  }

  /** Starts a re-read of the labels in the worker; its events carry the answered request_id. */
  async refreshLabels(instance: InstanceEntity, force: boolean, requestIdHeader?: string) {
    const requestId = requestIdHeader && REQUEST_ID.test(requestIdHeader) ? requestIdHeader : newRequestId();
    const reply = await this.sessions.request(instance.id, 'labels.refresh', { instanceId: instance.id, requestId, force });
    return {
      success: true,
      request_id: reply.requestId,
      status: reply.status,
      message: reply.status === 'started' ? 'Label refresh started. Use GET /labels to fetch the refreshed list.' : 'A label refresh is already in progress.',
      force: reply.force,
      fullSync: reply.force,
    };
  }

  /** `labelid: "new"` creates (the next free numeric id); otherwise edits or deletes a known label. */
  async editLabel(instance: InstanceEntity, dto: EditLabelDto) {
    const deleted = dto.delete === true;
    if (dto.labelid === 'new') {
      if (deleted) throw ApiError.badRequest('delete needs the labelid of an existing label');
      const name = (dto.name ?? '').trim();
      if (!name) throw ApiError.badRequest('name is required to create a label');
      const labelId = await this.labels.nextId(instance.id);
      await this.sessions.request(instance.id, 'label.edit', { instanceId: instance.id, labelId, name, color: dto.color ?? 0, deleted: false });
      return { response: 'Label created', labelid: labelId };
    }
    const label = await this.labels.find(instance.id, dto.labelid);
    if (!label) throw ApiError.notFound('Label not found');
    await this.sessions.request(instance.id, 'label.edit', {
      instanceId: instance.id,
      labelId: label.labelId,
      name: dto.name?.trim() || label.name,
      color: dto.color ?? label.color,
      deleted,
    });
    return { response: 'Label edited' };
  }

  /** Sets a chat's labels (`labelids`), or adds or removes one; every label must exist. */
  async chatLabels(instance: InstanceEntity, dto: ChatLabelsDto) {
    const target = parseChatTarget(dto.number);
    if (!target || target.kind === 'newsletter')
      throw ApiError.badRequest('Invalid number: give an international phone number or a chat JID (@s.whatsapp.net, @lid, @g.us)');
    const modes = [dto.labelids !== undefined, dto.add_labelid !== undefined, dto.remove_labelid !== undefined].filter(Boolean).length;
    if (modes !== 1) throw ApiError.badRequest('use exactly one of labelids, add_labelid, remove_labelid');
    const wanted = dto.labelids ?? [dto.add_labelid ?? dto.remove_labelid ?? ''];
    const known = new Set((await this.labels.list(instance.id)).map((label) => label.labelId));
    const unknown = wanted.find((labelId) => !known.has(labelId));
    if (unknown !== undefined) throw ApiError.badRequest(`label ${unknown || '(empty)'} not found`);
    const request = (add: string[], remove: string[]) =>
      this.sessions.request(instance.id, 'chat.labels', { instanceId: instance.id, chatJid: target.jid, add, remove });
    if (dto.add_labelid !== undefined) {
      await request([dto.add_labelid], []);
      return { response: 'Label added to chat' };
    }
    if (dto.remove_labelid !== undefined) {
      await request([], [dto.remove_labelid]);
      return { response: 'Label removed from chat' };
    }
    const current = (await this.labels.chatLabels(instance.id, target.jid)) ?? [];
    const chosen = new Set(wanted);
    const add = [...chosen].filter((labelId) => !current.includes(labelId));
    const remove = current.filter((labelId) => !chosen.has(labelId));
    if (add.length || remove.length) await request(add, remove);
    return {
      response: 'Labels updated successfully',
      editions: [...add.map((id) => `Added label ${id} to chat`), ...remove.map((id) => `Removed label ${id} from chat`)],
    };
  }

  async block(instance: InstanceEntity, number: string, block: boolean) {
    const target = parseChatTarget(number);
    if (!target || (target.kind !== 'user' && target.kind !== 'lid'))
      throw ApiError.badRequest('Invalid number: give an international phone number or a user JID (@s.whatsapp.net, @lid)');
    const reply = await this.sessions.request(instance.id, 'blocklist.set', { instanceId: instance.id, jid: target.jid, block });
    return { response: block ? 'Blocked successfully' : 'Unblocked successfully', blockList: reply.blockList };
  }

  /** WhatsApp's list while connected (the stored copy follows it); the stored copy otherwise. */
  async getBlocklist(instance: InstanceEntity) {
    try {
      return { blockList: (await this.sessions.request(instance.id, 'blocklist.get', { instanceId: instance.id })).blockList };
    } catch (error) {
      if (!(error instanceof RpcError) || (error.code !== ErrorCode.NoSession && error.code !== ErrorCode.NotConnected)) throw error;
      return { blockList: (await this.blocklist.list(instance.id)).map((entry) => entry.jid) };
    }
  }
}
