import { Inject, Injectable } from '@nestjs/common';
import { ErrorCode, RpcError } from '@gw/contracts';
import { parseChatTarget } from '@gw/domain';
import { BlocklistRepository, LabelRepository, toLabelRecord, type InstanceEntity } from '@gw/persistence';
import { newRequestId } from '@gw/platform';
import type { DataSource } from 'typeorm';
import { ApiError } from '../common/api-error';
import { DATA_SOURCE } from '../runtime/tokens';
import { SessionClient } from '../session/session.client';

const REQUEST_ID = /^[\w.:-]{1,100}$/;

/** Labels (`/labels`, `/labels/refresh`) and the blocklist (`/chat/block`, `/chat/blocklist`). */
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

  async block(instance: InstanceEntity, number: string, block: boolean) {
    const target = parseChatTarget(number);
    if (!target || (target.kind !== 'user' && target.kind !== 'lid')) throw ApiError.badRequest('Invalid number: give an international phone number or a user JID (@s.whatsapp.net, @lid)');
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
