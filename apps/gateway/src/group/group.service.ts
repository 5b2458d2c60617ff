import { Injectable } from '@nestjs/common';
import type { InstanceRpc } from '@gw/contracts';
import { parseChatTarget } from '@gw/domain';
import type { InstanceEntity } from '@gw/persistence';
import { ApiError } from '../common/api-error';
import { SessionClient } from '../session/session.client';
import { INVALID_GROUP_JID, type CreateGroupDto, type GroupInfoDto, type GroupJidDto, type GroupListDto } from './dto/group.dto';

type GroupObject = InstanceRpc['group.info']['reply'];

/** The group's JID from `groupjid` (or the older `groupJid`): `<digits>@g.us`. */
export function groupJidOf(dto: GroupJidDto): string {
  const value = (dto.groupjid ?? dto.groupJid ?? '').trim();
  if (!value) throw ApiError.badRequest('groupjid is required');
  const jid = value.endsWith('@g.us') ? value : `${value}@g.us`;
  if (parseChatTarget(jid)?.kind !== 'group') throw ApiError.badRequest(INVALID_GROUP_JID);
  return jid;
}

/** Members named by number or JID, as user JIDs; a 400 naming the first that is neither. */
export function participantJids(participants: string[]): string[] {
  return participants.map((participant) => {
    const parsed = parseChatTarget(participant);
    if (!parsed || (parsed.kind !== 'user' && parsed.kind !== 'lid')) throw ApiError.badRequest(`Could not parse phone: ${participant}`);
    return parsed.jid;
  });
}

const withoutParticipants = <T extends GroupObject>(group: T): T => ({ ...group, Participants: [] });

/** Groups the instance creates, reads and runs (`/group/*`), each a request to the worker holding it. */
@Injectable()
export class GroupService {
  constructor(private readonly sessions: SessionClient) {}

  async create(instance: InstanceEntity, dto: CreateGroupDto): Promise<GroupObject> {
    return this.sessions.request(instance.id, 'group.create', {
      instanceId: instance.id,
      name: dto.name.trim(),
      participants: participantJids(dto.participants),
    });
  }

  async info(instance: InstanceEntity, dto: GroupInfoDto): Promise<GroupObject> {
    const group = await this.sessions.request(instance.id, 'group.info', {
      instanceId: instance.id,
      groupJid: groupJidOf(dto),
      inviteLink: dto.getInviteLink === true,
      requests: dto.getRequestsParticipants === true,
    });
    return dto.noparticipants ? withoutParticipants(group) : group;
  }

  /** `GET /group/list?force=&noparticipants=`: every group the instance is in (`force` accepted: every read asks WhatsApp). */
  async listAll(instance: InstanceEntity, query: { force?: unknown; noparticipants?: unknown }): Promise<{ groups: GroupObject[] }> {
    queryFlag('force', query.force);
    return this.list(instance, queryFlag('noparticipants', query.noparticipants));
  }

  private async list(instance: InstanceEntity, noParticipants: boolean): Promise<{ groups: GroupObject[] }> {
    const { groups } = await this.sessions.request(instance.id, 'group.list', { instanceId: instance.id });
    return { groups: noParticipants ? groups.map(withoutParticipants) : groups };
  }

  /** `POST /group/list`: a page of them (ordered by name), filtered by name or JID. */
  async page(instance: InstanceEntity, dto: GroupListDto) {
    const { groups } = await this.list(instance, dto.noParticipants === true || dto.noparticipants === true);
    const search = dto.search?.trim().toLowerCase();
    const found = (search ? groups.filter((group) => group.Name.toLowerCase().includes(search) || group.JID.includes(search)) : groups).sort(
      (a, b) => a.Name.localeCompare(b.Name) || a.JID.localeCompare(b.JID),
    );
    const limit = dto.limit ?? 50;
    const offset = dto.offset ?? 0;
    return { groups: found.slice(offset, offset + limit), pagination: { totalRecords: found.length, limit, offset } };
  }
}

/** A query string flag: absent, `true` / `false` or `1` / `0` (any case); anything else (a repeated parameter too) is a 400 naming it. */
export function queryFlag(name: string, value: unknown): boolean {
  if (value === undefined || value === '') return false;
  if (typeof value === 'string' && /^\s*(true|1|false|0)\s*$/i.test(value)) return /^\s*(true|1)\s*$/i.test(value);
  throw ApiError.badRequest(`${name} must be true or false`);
}
