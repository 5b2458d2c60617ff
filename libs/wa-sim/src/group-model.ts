// A group as the simulator keeps it, and the pure helpers over one: how it shows a member (LID or PN),
// its participant and group nodes (w:g2 answers and w:gp2 notifications), who is an admin, and which
// devices a fan-out reaches. The store that holds the groups is group-registry.ts.
import { randomBytes } from 'crypto';
import { deviceRefKey, userJid } from './accounts';
import type { Account, DeviceRef } from './accounts';
import type { BinaryNode } from './node-io';
import { node } from './node-io';

export type GroupRole = 'superadmin' | 'admin' | null;

export interface Group {
  id: string;
  jid: string;
  subject: string;
  subjectOwner: Account;
  subjectTime: number;
  creation: number;
  creator: Account;
  description?: { id: string; text: string; owner: Account; time: number };
  members: Map<string, { account: Account; role: GroupRole }>;
  addressingMode: 'lid' | 'pn';
  announce: boolean;
  locked: boolean;
  joinApproval: boolean;
  memberAddMode: 'admin_add' | 'all_member_add';
  ephemeral: number;
  inviteCode: string;
  pendingRequests: Map<string, { account: Account; t: number }>;
  /** Devices that already hold each sender's sender key (phones only track their own). */
  senderKeyHolders: Map<string, Set<string>>;
  /** The group's picture (w:profile:picture), if set. */
  picture?: { id: string; bytes: Buffer; author: string; t: number };
  /** A community's parent group: who may join its groups by default. */
  parent?: { defaultMembershipApprovalMode: string };
  /** The community a group belongs to. */
  linkedParent?: string;
  /** The community's announcements group (made with it). */
  defaultSubGroup?: boolean;
}

export interface GroupInfo {
  jid: string;
  subject: string;
  description?: string;
  creator: string;
  addressingMode: 'lid' | 'pn';
  announce: boolean;
  locked: boolean;
  joinApproval: boolean;
  inviteCode: string;
  participants: Array<{ phone: string; jid: string; lid: string; role: GroupRole }>;
  /** Phones waiting for an admin to approve their join request. */
  pendingRequests: string[];
  picture: { id: string; bytes: number; author: string } | null;
  isParent: boolean;
  linkedParent: string | null;
  isDefaultSubGroup: boolean;
  /** A community's linked groups. */
  subGroups: string[];
  /** How often a device asked WhatsApp for the group (`query`). */
  reads: number;
}

export function newInviteCode(): string {
  return randomBytes(16).toString('base64url').slice(0, 22);
}

/** The JID a group shows a member by (LID or PN, the group's addressing mode). */
export function groupMemberJid(group: Group, account: Account): string {
  return userJid(account, group.addressingMode);
}

export function participantNode(group: Group, account: Account, role: GroupRole): BinaryNode {
  return group.addressingMode === 'lid'
    ? node('participant', { jid: account.lidJid, phone_number: account.jid, type: role ?? undefined })
    : node('participant', { jid: account.jid, lid: account.lidJid, type: role ?? undefined });
}

export function groupNode(group: Group, withParticipants = true): BinaryNode {
  const content: BinaryNode[] = [];
  if (withParticipants) {
    for (const { account, role } of group.members.values()) content.push(participantNode(group, account, role));
  }
  if (group.description) {
    const d = group.description;
    content.push(
      node(
        'description',
        {
          id: d.id,
          t: String(d.time),
          participant: groupMemberJid(group, d.owner),
          participant_pn: group.addressingMode === 'lid' ? d.owner.jid : undefined,
        },
        [node('body', {}, Buffer.from(d.text, 'utf-8'))],
      ),
    );
  }
  if (group.locked) content.push(node('locked', {}));
  if (group.announce) content.push(node('announcement', {}));
  if (group.joinApproval) content.push(node('membership_approval_mode', {}, [node('group_join', { state: 'on' })]));
  if (group.ephemeral) content.push(node('ephemeral', { expiration: String(group.ephemeral) }));
  content.push(node('member_add_mode', {}, group.memberAddMode));
  if (group.parent) content.push(node('parent', { default_membership_approval_mode: group.parent.defaultMembershipApprovalMode }));
  if (group.linkedParent) content.push(node('linked_parent', { jid: group.linkedParent }));
  if (group.defaultSubGroup) content.push(node('default_sub_group', {}));
  return node(
    'group',
    {
      id: group.id,
      subject: group.subject,
      s_t: String(group.subjectTime),
      s_o: groupMemberJid(group, group.subjectOwner),
      s_o_pn: group.addressingMode === 'lid' ? group.subjectOwner.jid : undefined,
      creation: String(group.creation),
      creator: groupMemberJid(group, group.creator),
      creator_pn: group.addressingMode === 'lid' ? group.creator.jid : undefined,
      addressing_mode: group.addressingMode,
      size: String(group.members.size),
    },
    content,
  );
}

export function isGroupAdmin(group: Group, account: Account): boolean {
  const role = group.members.get(account.phone)?.role;
  return role === 'admin' || role === 'superadmin';
}

/** Every device of every member (phones included), optionally minus one device. */
export function memberDevices(group: Group, except?: DeviceRef): DeviceRef[] {
  const refs: DeviceRef[] = [];
  for (const { account } of group.members.values()) {
    refs.push({ account, deviceId: 0 });
    for (const device of account.activeDevices()) refs.push({ account, deviceId: device.deviceId });
  }
  return except ? refs.filter((r) => deviceRefKey(r) !== deviceRefKey(except)) : refs;
}
