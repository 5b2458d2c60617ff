import { ErrorCode, RpcError } from '@gw/contracts';
import { randomBytes } from 'crypto';
import { getBinaryNodeChild } from '../baileys';
import { GroupMetadataCache } from '../messaging/group-metadata-cache';
import { GROUP_JID, groupCall, groupJidOf, groupReader, MAX_DESCRIPTION, ownIds, toGroupObject } from './group-object';
import type { OpHandlers, OpRequestParsers } from './op-handler';

/** The `community.*` ops: communities the instance creates, and the groups linked to them. */
export type CommunityOps = 'community.create' | 'community.groups';

const MAX_COMMUNITY_GROUPS = 100;

export const communityRequests = {
  'community.create': (raw, instanceId) => {
    const name = typeof raw.name === 'string' ? raw.name : '';
    if (!name.trim() || name.length > 100) throw new RpcError(ErrorCode.BadRequest, 'name must be 1 to 100 characters');
    const description = typeof raw.description === 'string' ? raw.description : '';
    if (description.length > MAX_DESCRIPTION) throw new RpcError(ErrorCode.BadRequest, `description must be at most ${MAX_DESCRIPTION} characters`);
    return { instanceId, name, description };
  },
  'community.groups': (raw, instanceId) => {
    const action = raw.action === 'add' || raw.action === 'remove' ? raw.action : undefined;
    if (!action) throw new RpcError(ErrorCode.BadRequest, 'action must be add or remove');
    const groupJids = raw.groupJids;
    if (
      !Array.isArray(groupJids) ||
      !groupJids.length ||
      groupJids.length > MAX_COMMUNITY_GROUPS ||
      !groupJids.every((jid) => typeof jid === 'string' && GROUP_JID.test(jid))
    )
      throw new RpcError(ErrorCode.BadRequest, `groupjids must be 1 to ${MAX_COMMUNITY_GROUPS} group JIDs`);
    return { instanceId, communityJid: groupJidOf({ groupJid: raw.communityJid }), action, groupJids: [...new Set(groupJids as string[])] };
  },
} satisfies OpRequestParsers<CommunityOps>;

export function communityOps(cache: GroupMetadataCache = new GroupMetadataCache()): OpHandlers<CommunityOps> {
  const readGroup = groupReader(cache);
  return {
    'community.create': async (session, request) => {
      const socket = session.openSocket();
      const what = 'error creating community';
      // rc14's communityCreate sends this iq but logs the whole answer at info level to its own stdout logger: sent here.
      const result = await groupCall(what, () =>
        socket.query({
          tag: 'iq',
          attrs: { type: 'set', xmlns: 'w:g2', to: '@g.us' },
          content: [
            {
              tag: 'create',
              attrs: { subject: request.name },
              content: [
                {
                  tag: 'description',
                  attrs: { id: randomBytes(6).toString('hex').toUpperCase() },
                  content: [{ tag: 'body', attrs: {}, content: Buffer.from(request.description, 'utf-8') }],
                },
                { tag: 'parent', attrs: { default_membership_approval_mode: 'request_required' } },
                { tag: 'allow_non_admin_sub_group_creation', attrs: {} },
                { tag: 'create_general_chat', attrs: {} },
              ],
            },
          ],
        }),
      );
      const id = getBinaryNodeChild(result, 'group')?.attrs.id;
      if (!id) throw new RpcError(ErrorCode.Internal, `${what}: WhatsApp answered no community`);
      cache.invalidate(request.instanceId, id.endsWith('@g.us') ? id : `${id}@g.us`, true);
      const created = await readGroup(socket, request.instanceId, id.endsWith('@g.us') ? id : `${id}@g.us`, what);
      return toGroupObject(created, ownIds(socket));
    },
    'community.groups': async (session, request) => {
      const socket = session.openSocket();
      const what = `error updating community groups (${request.action})`;
      const community = toGroupObject(await readGroup(socket, request.instanceId, request.communityJid, what), ownIds(socket));
      if (!community.IsParent) throw new RpcError(ErrorCode.BadRequest, `${what}: ${request.communityJid} is not a community`);
      if (!community.OwnerIsAdmin) throw new RpcError(ErrorCode.Forbidden, `${what}: the instance is not an admin of this community`);
      const success: string[] = [];
      const failed: string[] = [];
      for (const groupJid of request.groupJids) {
        try {
          if (request.action === 'add') await socket.communityLinkGroup(groupJid, request.communityJid);
          else await socket.communityUnlinkGroup(groupJid, request.communityJid);
          success.push(groupJid);
          cache.invalidate(request.instanceId, groupJid, true);
        } catch (error) {
          if (error instanceof RpcError || !(error as { isBoom?: boolean })?.isBoom) throw error;
          failed.push(groupJid);
        }
      }
      cache.invalidate(request.instanceId, request.communityJid, true);
      return { success, failed };
    },
  };
}
