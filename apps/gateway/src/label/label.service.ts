import { Injectable } from '@nestjs/common';
import { LabelRepository, toLabelRecord } from '@gw/persistence';
import { newRequestId } from '@gw/platform';
import { ApiError } from '../common/api-error';
import { SessionClient } from '../session/session.client';
import type { EditLabelDto, RefreshLabelsDto } from './dto/label.dto';
import type { LabelEditedResponse, LabelRefreshResponse, LabelResponse } from './dto/label.response';
import type { RequestInstance } from '../common/request-instance';

const REQUEST_ID = /^[\w.:-]{1,100}$/;

/** The instance's labels (`/labels`, `/labels/refresh`, `/label/edit`). */
@Injectable()
export class LabelService {
  constructor(
    private readonly labels: LabelRepository,
    private readonly sessions: SessionClient,
  ) {}

  /** The labels as the phone's app state last said (refreshed by the app state's own sync). */
  async list(instance: RequestInstance): Promise<LabelResponse[]> {
    return (await this.labels.list(instance.id)).map((row) => toLabelRecord(row, instance.owner));
  }

  /** Starts a re-read of the labels in the worker; its events carry the answered request_id. */
  async refresh(instance: RequestInstance, dto: RefreshLabelsDto, requestIdHeader?: string): Promise<LabelRefreshResponse> {
    const requestId = requestIdHeader && REQUEST_ID.test(requestIdHeader) ? requestIdHeader : newRequestId();
    const reply = await this.sessions.request(instance.id, 'labels.refresh', { instanceId: instance.id, requestId, force: dto.force === true });
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
  async edit(instance: RequestInstance, dto: EditLabelDto): Promise<LabelEditedResponse> {
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
}
