import { Injectable } from '@nestjs/common';
import { ErrorCode, RpcError } from '@gw/contracts';
import { parseChatTarget } from '@gw/domain';
import { BlocklistRepository, LabelRepository, type InstanceEntity } from '@gw/persistence';
import { ApiError } from '../common/api-error';
import { SessionClient } from '../session/session.client';
import type { BlockDto, ChatLabelsDto } from './dto/chat.dto';

/** A chat's labels (`/chat/labels`) and the blocklist (`/chat/block`, `/chat/blocklist`). */
@Injectable()
export class ChatService {
  constructor(
    private readonly labels: LabelRepository,
    private readonly blocklistEntries: BlocklistRepository,
    private readonly sessions: SessionClient,
  ) {}

  /** Sets a chat's labels (`labelids`), or adds or removes one; every label must exist. */
  async setLabels(instance: InstanceEntity, dto: ChatLabelsDto) {
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

  async block(instance: InstanceEntity, dto: BlockDto) {
    const target = parseChatTarget(dto.number);
    if (!target || (target.kind !== 'user' && target.kind !== 'lid'))
      throw ApiError.badRequest('Invalid number: give an international phone number or a user JID (@s.whatsapp.net, @lid)');
    const reply = await this.sessions.request(instance.id, 'blocklist.set', { instanceId: instance.id, jid: target.jid, block: dto.block });
    return { response: dto.block ? 'Blocked successfully' : 'Unblocked successfully', blockList: reply.blockList };
  }

  /** WhatsApp's list while connected (the stored copy follows it); the stored copy otherwise. */
  async blocklist(instance: InstanceEntity) {
    try {
      return { blockList: (await this.sessions.request(instance.id, 'blocklist.get', { instanceId: instance.id })).blockList };
    } catch (error) {
      if (!(error instanceof RpcError) || (error.code !== ErrorCode.NoSession && error.code !== ErrorCode.NotConnected)) throw error;
      return { blockList: (await this.blocklistEntries.list(instance.id)).map((entry) => entry.jid) };
    }
  }
}
