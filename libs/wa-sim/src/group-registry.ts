// The groups the simulator holds and their lifecycle, shared by the w:g2 queries (group-iq.ts) and the
// control API (groups-routes.ts): create, change participants, join requests, the w:gp2 notification
// to the members' devices, and what the control API reads back (info, read counts, the state file).
import { randomInt } from 'crypto';
import { jidDecode } from './baileys';
import type { Account, DeviceRef } from './accounts';
import type { SimContext } from './context';
import { nextServerId } from './connection';
import type { BinaryNode } from './node-io';
import { node, unixNow } from './node-io';
import { generateMessageId } from './message-codec';
import { groupMemberJid, groupNode, isGroupAdmin, memberDevices, newInviteCode, participantNode } from './group-model';
import type { Group, GroupInfo, GroupRole } from './group-model';
import { groupFromState, groupToState } from './group-state';
import type { GroupState } from './group-state';

export class GroupRegistry {
  private readonly groups = new Map<string, Group>();
  private readonly byInvite = new Map<string, string>();
  /** How often each group was read (`query`) and each account listed its groups (`participating:<phone>`): tests see what a cache saves. */
  private readonly reads = new Map<string, number>();

  constructor(protected readonly ctx: SimContext) {}

  /** How often a group was read (`query`) or an account listed its groups (`participating:<phone>`). */
  readCount(key: string): number {
    return this.reads.get(key) ?? 0;
  }

  /** Counts one read of a group (`query`, by its JID) or of an account's groups (`participating:<phone>`). */
  countRead(key: string): void {
    this.reads.set(key, (this.reads.get(key) ?? 0) + 1);
  }

  toState(): GroupState[] {
    return [...this.groups.values()].map(groupToState);
  }

  /** Puts back saved groups; members whose account is unknown are left out. */
  restore(states: GroupState[]): void {
    for (const state of states) {
      const group = groupFromState(state, (phone) => this.ctx.registry.get(phone));
      if (!group) continue;
      this.groups.set(group.jid, group);
      this.byInvite.set(group.inviteCode, group.jid);
    }
  }

  get(jid: string): Group | undefined {
    const id = jid.endsWith('@g.us') ? jid : `${jid}@g.us`;
    return this.groups.get(id);
  }

  /** Every group, in creation order. */
  list(): Group[] {
    return [...this.groups.values()];
  }

  /** A community's linked groups. */
  subGroupsOf(group: Group): Group[] {
    return [...this.groups.values()].filter((g) => g.linkedParent === group.jid);
  }

  /** The group an invite code opens, if any. */
  byInviteCode(code: string): Group | undefined {
    const groupJid = this.byInvite.get(code);
    return groupJid ? this.groups.get(groupJid) : undefined;
  }

  /** Revokes the group's invite code and gives it a new one. */
  rotateInviteCode(group: Group): void {
    this.byInvite.delete(group.inviteCode);
    group.inviteCode = newInviteCode();
    this.byInvite.set(group.inviteCode, group.jid);
  }

  /** The JID a group shows a member by (LID or PN, the group's addressing mode). */
  memberJid(group: Group, account: Account): string {
    return groupMemberJid(group, account);
  }

  /** w:gp2 notification to all member devices (and extra accounts, e.g. removed ones). */
  notify(group: Group, actor: Account, content: BinaryNode, extra: Account[] = [], except?: DeviceRef, adminsOnly = false): void {
    const attrs: Record<string, string | undefined> = {
      from: group.jid,
      type: 'w:gp2',
      id: nextServerId(),
      t: String(unixNow()),
      participant: this.memberJid(group, actor),
      participant_pn: group.addressingMode === 'lid' ? actor.jid : undefined,
      notify: actor.name,
      addressing_mode: group.addressingMode,
    };
    const targets = memberDevices(group, except).filter((target) => !adminsOnly || isGroupAdmin(group, target.account));
    for (const account of extra) {
      for (const device of account.activeDevices()) targets.push({ account, deviceId: device.deviceId });
    }
    const stanza = node('notification', attrs, [content]);
    for (const target of targets) {
      if (target.deviceId === 0) continue; // phones keep no group notification state
      const device = target.account.devices.get(target.deviceId);
      if (device) this.ctx.deliverToCompanion(device, stanza);
    }
  }

  /** The account a participant JID names; with autoCreateAccounts, a new one for an unknown phone number. */
  resolveParticipant(jid: string): Account | undefined {
    const account = this.ctx.registry.resolveUser(jid);
    if (account) return account;
    if (this.ctx.options.autoCreateAccounts && jidDecode(jid)?.server === 's.whatsapp.net') {
      return this.ctx.registry.create(jidDecode(jid)?.user ?? '');
    }
    return undefined;
  }

  // ---------------------------------------------------------------- group lifecycle (shared by iq and API)

  create(
    creator: Account,
    subject: string,
    participants: Account[],
    options: {
      addressingMode?: 'lid' | 'pn';
      except?: DeviceRef;
      parent?: Group['parent'];
      linkedParent?: string;
      defaultSubGroup?: boolean;
      announce?: boolean;
      description?: string;
    } = {},
  ): Group {
    const id = `120363${randomInt(10 ** 11, 10 ** 12 - 1)}${randomInt(100, 999)}`;
    const now = unixNow();
    const group: Group = {
      id,
      jid: `${id}@g.us`,
      subject,
      subjectOwner: creator,
      subjectTime: now,
      creation: now,
      creator,
      members: new Map([[creator.phone, { account: creator, role: 'superadmin' as GroupRole }]]),
      addressingMode: options.addressingMode ?? 'lid',
      announce: options.announce === true,
      locked: false,
      joinApproval: false,
      memberAddMode: 'admin_add',
      ephemeral: 0,
      inviteCode: newInviteCode(),
      pendingRequests: new Map(),
      senderKeyHolders: new Map(),
      parent: options.parent,
      linkedParent: options.linkedParent,
      defaultSubGroup: options.defaultSubGroup,
      description: options.description ? { id: generateMessageId(), text: options.description, owner: creator, time: now } : undefined,
    };
    for (const account of participants) {
      if (!group.members.has(account.phone)) group.members.set(account.phone, { account, role: null });
    }
    this.groups.set(group.jid, group);
    this.byInvite.set(group.inviteCode, group.jid);
    this.notify(group, creator, node('create', {}, [groupNode(group)]), [], options.except);
    return group;
  }

  changeParticipants(group: Group, actor: Account, action: 'add' | 'remove' | 'promote' | 'demote', targets: string[]): BinaryNode[] {
    const results: BinaryNode[] = [];
    const changed: Account[] = [];
    for (const jid of targets) {
      const account = this.resolveParticipant(jid);
      if (!account) {
        results.push(node('participant', { jid, error: '404' }));
        continue;
      }
      const member = group.members.get(account.phone);
      switch (action) {
        case 'add':
          if (member) {
            results.push(node('participant', { jid, error: '409' }));
            continue;
          }
          group.members.set(account.phone, { account, role: null });
          break;
        case 'remove':
          if (!member) {
            results.push(node('participant', { jid, error: '404' }));
            continue;
          }
          group.members.delete(account.phone);
          break;
        case 'promote':
        case 'demote':
          if (!member) {
            results.push(node('participant', { jid, error: '404' }));
            continue;
          }
          member.role = action === 'promote' ? (member.role === 'superadmin' ? 'superadmin' : 'admin') : member.role === 'superadmin' ? 'superadmin' : null;
          break;
      }
      changed.push(account);
      results.push(node('participant', { jid: this.memberJid(group, account), phone_number: group.addressingMode === 'lid' ? account.jid : undefined }));
    }
    if (changed.length) {
      // A removed member's sender keys are stale; so are everyone's, once someone leaves.
      if (action === 'remove') group.senderKeyHolders.clear();
      this.notify(
        group,
        actor,
        node(
          action,
          {},
          changed.map((a) => participantNode(group, a, group.members.get(a.phone)?.role ?? null)),
        ),
        action === 'remove' ? changed : [],
      );
    }
    return results;
  }

  /** A join request to a group with approval on: kept, and its admins told (`created_membership_requests`). */
  requestJoin(group: Group, account: Account, method = 'invite_link'): void {
    if (group.members.has(account.phone) || group.pendingRequests.has(account.phone)) return;
    group.pendingRequests.set(account.phone, { account, t: unixNow() });
    this.notify(group, account, node('created_membership_requests', { request_method: method }, [participantNode(group, account, null)]), [], undefined, true);
  }

  /** A request withdrawn by its author or rejected by an admin (`actor`): the admins are told (`revoked_membership_requests`). */
  dropRequest(group: Group, account: Account, actor: Account): boolean {
    if (!group.pendingRequests.delete(account.phone)) return false;
    this.notify(group, actor, node('revoked_membership_requests', {}, [participantNode(group, account, null)]), [], undefined, true);
    return true;
  }

  info(group: Group): GroupInfo {
    return {
      jid: group.jid,
      subject: group.subject,
      description: group.description?.text,
      creator: group.creator.jid,
      addressingMode: group.addressingMode,
      announce: group.announce,
      locked: group.locked,
      joinApproval: group.joinApproval,
      inviteCode: group.inviteCode,
      participants: [...group.members.values()].map(({ account, role }) => ({ phone: account.phone, jid: account.jid, lid: account.lidJid, role })),
      pendingRequests: [...group.pendingRequests.keys()],
      picture: group.picture ? { id: group.picture.id, bytes: group.picture.bytes.length, author: group.picture.author } : null,
      isParent: Boolean(group.parent),
      linkedParent: group.linkedParent ?? null,
      isDefaultSubGroup: group.defaultSubGroup === true,
      subGroups: [...this.groups.values()].filter((g) => g.linkedParent === group.jid).map((g) => g.jid),
      reads: this.reads.get(group.jid) ?? 0,
    };
  }
}
