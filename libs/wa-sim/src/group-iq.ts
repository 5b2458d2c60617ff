// The group queries (w:g2 iqs) a device sends: create a group or community, list the groups it is in,
// leave, join by invite, and the per-group operations — read, participants, subject, description,
// invite code, settings, community links and join requests. The groups themselves are group-registry.ts.
import type { Account, DeviceRef } from './accounts';
import type { SimContext } from './context';
import type { BinaryNode } from './node-io';
import { child, children, contentString, iqError, iqResult, node, unixNow } from './node-io';
import { generateMessageId } from './message-codec';
import { groupNode, isGroupAdmin } from './group-model';
import type { Group } from './group-model';
import type { GroupRegistry } from './group-registry';

export class GroupIq {
  constructor(
    private readonly ctx: SimContext,
    private readonly groups: GroupRegistry,
  ) {}

  async handleIq(sender: DeviceRef, iq: BinaryNode): Promise<BinaryNode> {
    const me = sender.account;
    const to = iq.attrs.to ?? '@g.us';
    const op = Array.isArray(iq.content) ? iq.content[0] : undefined;
    if (!op) return iqError(iq, 400, 'bad-request');
    const isSet = iq.attrs.type === 'set';

    if (to === '@g.us' || to === 'g.us') {
      switch (op.tag) {
        case 'create': {
          const participants = children(op, 'participant')
            .map((p) => this.groups.resolveParticipant(p.attrs.jid))
            .filter((a): a is Account => !!a);
          const subject = op.attrs.subject ?? '';
          if (!subject.trim() || subject.length > 100) return iqError(iq, 400, 'bad-request');
          const description = contentString(child(child(op, 'description'), 'body')) || undefined;
          const parentNode = child(op, 'parent');
          if (parentNode) {
            // A community: its parent group, and the announcements group every member of it is in.
            const mode = parentNode.attrs.default_membership_approval_mode ?? 'request_required';
            const community = this.groups.create(me, subject, [], { except: sender, parent: { defaultMembershipApprovalMode: mode }, description });
            this.groups.create(me, subject, [], { except: sender, linkedParent: community.jid, defaultSubGroup: true, announce: true });
            return iqResult(iq, [groupNode(community)]);
          }
          const linkedParent = child(op, 'linked_parent')?.attrs.jid;
          if (linkedParent) {
            const community = this.groups.get(linkedParent);
            if (!community?.parent) return iqError(iq, 404, 'item-not-found');
            if (!isGroupAdmin(community, me)) return iqError(iq, 403, 'not-admin');
          }
          const group = this.groups.create(me, subject, participants, { except: sender, linkedParent, description });
          return iqResult(iq, [groupNode(group)]);
        }
        case 'participating': {
          this.groups.countRead(`participating:${me.phone}`);
          const mine = this.groups.list().filter((g) => g.members.has(me.phone));
          return iqResult(iq, [
            node(
              'groups',
              {},
              mine.map((g) => groupNode(g)),
            ),
          ]);
        }
        case 'leave': {
          for (const g of children(op, 'group')) {
            const group = g.attrs.id ? this.groups.get(g.attrs.id) : undefined;
            if (group?.members.has(me.phone)) this.groups.changeParticipants(group, me, 'remove', [me.jid]);
          }
          return iqResult(iq);
        }
        case 'invite': {
          const code = op.attrs.code;
          const group = code ? this.groups.byInviteCode(code) : undefined;
          if (!group) return iqError(iq, 404, 'item-not-found');
          if (!isSet) return iqResult(iq, [groupNode(group)]);
          if (group.joinApproval && !group.members.has(me.phone)) {
            this.groups.requestJoin(group, me);
            return iqResult(iq, [node('membership_approval_request', { jid: group.jid })]);
          }
          if (!group.members.has(me.phone)) this.groups.changeParticipants(group, me, 'add', [me.jid]);
          return iqResult(iq, [node('group', { jid: group.jid })]);
        }
        default:
          return iqError(iq, 501, 'feature-not-implemented');
      }
    }

    const group = this.groups.get(to);
    if (!group) return iqError(iq, 404, 'item-not-found');
    const member = group.members.has(me.phone);
    if (!member) return iqError(iq, 403, 'forbidden');
    const admin = isGroupAdmin(group, me);
    const requireAdmin = (): BinaryNode | undefined => (admin ? undefined : iqError(iq, 403, 'not-admin'));

    switch (op.tag) {
      case 'query':
        this.groups.countRead(group.jid);
        return iqResult(iq, [groupNode(group)]);
      case 'sub_groups':
        return iqResult(iq, [
          node(
            'sub_groups',
            {},
            this.groups
              .subGroupsOf(group)
              .map((g) => node('group', { id: g.id, subject: g.subject, creation: String(g.creation), creator: g.creator.jid, size: String(g.members.size) })),
          ),
        ]);
      case 'links':
      case 'unlink': {
        // A community's admin links (`links`) or unlinks groups; linking also needs admin rights in the group.
        if (!group.parent) return iqError(iq, 400, 'bad-request');
        const denied = requireAdmin();
        if (denied) return denied;
        const targets = op.tag === 'links' ? children(child(op, 'link'), 'group') : children(op, 'group');
        const done: BinaryNode[] = [];
        for (const target of targets) {
          const linked = target.attrs.jid ? this.groups.get(target.attrs.jid) : undefined;
          if (!linked || linked.parent) return iqError(iq, 404, 'item-not-found');
          if (op.tag === 'links') {
            if (linked.linkedParent) return iqError(iq, 409, 'conflict');
            if (!isGroupAdmin(linked, me)) return iqError(iq, 403, 'not-admin');
            linked.linkedParent = group.jid;
          } else {
            if (linked.linkedParent !== group.jid || linked.defaultSubGroup) return iqError(iq, 404, 'item-not-found');
            linked.linkedParent = undefined;
          }
          done.push(node('group', { jid: linked.jid }));
          const change = (type: string, other: Group) =>
            node(op.tag === 'links' ? 'link' : 'unlink', op.tag === 'links' ? { link_type: type } : { unlink_type: type, unlink_reason: 'unlink_group' }, [
              node('group', { jid: other.jid, subject: other.subject }),
            ]);
          this.groups.notify(group, me, change('sub_group', linked));
          this.groups.notify(linked, me, change('parent', group));
        }
        return iqResult(iq, [
          op.tag === 'links' ? node('links', {}, [node('link', { link_type: 'sub_group' }, done)]) : node('unlink', { unlink_type: 'sub_group' }, done),
        ]);
      }
      case 'add':
        if (group.memberAddMode !== 'all_member_add' && !admin) return iqError(iq, 403, 'not-admin');
        return iqResult(iq, [
          node(
            'add',
            {},
            this.groups.changeParticipants(
              group,
              me,
              'add',
              children(op, 'participant').map((p) => p.attrs.jid),
            ),
          ),
        ]);
      case 'remove':
      case 'promote':
      case 'demote':
        return (
          requireAdmin() ??
          iqResult(iq, [
            node(
              op.tag,
              {},
              this.groups.changeParticipants(
                group,
                me,
                op.tag,
                children(op, 'participant').map((p) => p.attrs.jid),
              ),
            ),
          ])
        );
      case 'subject': {
        if (group.locked && !admin) return iqError(iq, 403, 'not-admin');
        group.subject = contentString(op) ?? '';
        group.subjectOwner = me;
        group.subjectTime = unixNow();
        this.groups.notify(group, me, node('subject', { subject: group.subject, s_t: String(group.subjectTime), s_o: this.groups.memberJid(group, me) }));
        return iqResult(iq);
      }
      case 'description': {
        if (group.locked && !admin) return iqError(iq, 403, 'not-admin');
        const text = contentString(child(op, 'body'));
        group.description = op.attrs.delete === 'true' || !text ? undefined : { id: op.attrs.id ?? generateMessageId(), text, owner: me, time: unixNow() };
        this.groups.notify(group, me, node('description', { id: op.attrs.id }, text ? [node('body', {}, Buffer.from(text, 'utf-8'))] : [node('delete', {})]));
        return iqResult(iq);
      }
      case 'invite':
        if (!isSet) return requireAdmin() ?? iqResult(iq, [node('invite', { code: group.inviteCode })]);
        if (!admin) return iqError(iq, 403, 'not-admin');
        this.groups.rotateInviteCode(group);
        this.groups.notify(group, me, node('invite', { code: group.inviteCode }));
        return iqResult(iq, [node('invite', { code: group.inviteCode })]);
      case 'announcement':
      case 'not_announcement':
      case 'locked':
      case 'unlocked': {
        const denied = requireAdmin();
        if (denied) return denied;
        if (op.tag === 'announcement' || op.tag === 'not_announcement') group.announce = op.tag === 'announcement';
        else group.locked = op.tag === 'locked';
        this.groups.notify(group, me, node(op.tag, {}));
        return iqResult(iq);
      }
      case 'ephemeral':
      case 'not_ephemeral':
        // Disappearing messages are group info: a locked group lets only its admins change them.
        if (group.locked && !admin) return iqError(iq, 403, 'not-admin');
        group.ephemeral = op.tag === 'ephemeral' ? Number(op.attrs.expiration ?? 0) : 0;
        this.groups.notify(group, me, node(op.tag, op.tag === 'ephemeral' ? { expiration: String(group.ephemeral) } : {}));
        return iqResult(iq);
      case 'member_add_mode': {
        const denied = requireAdmin();
        if (denied) return denied;
        group.memberAddMode = contentString(op) === 'all_member_add' ? 'all_member_add' : 'admin_add';
        this.groups.notify(group, me, node('member_add_mode', {}, group.memberAddMode));
        return iqResult(iq);
      }
      case 'membership_approval_mode': {
        const denied = requireAdmin();
        if (denied) return denied;
        group.joinApproval = child(op, 'group_join')?.attrs.state === 'on';
        this.groups.notify(group, me, node('membership_approval_mode', {}, [node('group_join', { state: group.joinApproval ? 'on' : 'off' })]));
        return iqResult(iq);
      }
      case 'membership_approval_requests':
        return iqResult(iq, [
          node(
            'membership_approval_requests',
            {},
            [...group.pendingRequests.values()].map((r) =>
              node('membership_approval_request', { jid: this.groups.memberJid(group, r.account), request_time: String(r.t) }),
            ),
          ),
        ]);
      case 'membership_requests_action': {
        const denied = requireAdmin();
        if (denied) return denied;
        const actionNode = Array.isArray(op.content) ? op.content[0] : undefined;
        const action = actionNode?.tag === 'approve' ? 'approve' : 'reject';
        const results: BinaryNode[] = [];
        for (const p of children(actionNode, 'participant')) {
          const account = this.ctx.registry.resolveUser(p.attrs.jid);
          if (!account || !group.pendingRequests.has(account.phone)) {
            results.push(node('participant', { jid: p.attrs.jid, error: '404' }));
            continue;
          }
          if (action === 'approve') {
            group.pendingRequests.delete(account.phone);
            this.groups.changeParticipants(group, me, 'add', [account.jid]);
          } else this.groups.dropRequest(group, account, me);
          results.push(node('participant', { jid: p.attrs.jid }));
        }
        return iqResult(iq, [node('membership_requests_action', {}, [node(action, {}, results)])]);
      }
      default:
        return iqError(iq, 501, 'feature-not-implemented');
    }
  }
}
