// Groups as the state file keeps them (accounts by phone number), and the conversions both ways.
import type { Account } from './accounts';
import type { Group, GroupRole } from './group-model';

/** A group as the state file keeps it: accounts by phone number. */
export interface GroupState {
  id: string;
  jid: string;
  subject: string;
  subjectOwner: string;
  subjectTime: number;
  creation: number;
  creator: string;
  description?: { id: string; text: string; owner: string; time: number };
  members: Array<{ phone: string; role: GroupRole }>;
  addressingMode: 'lid' | 'pn';
  announce: boolean;
  locked: boolean;
  joinApproval: boolean;
  memberAddMode: 'admin_add' | 'all_member_add';
  ephemeral: number;
  inviteCode: string;
  pendingRequests: Array<{ phone: string; t: number }>;
  senderKeyHolders: Array<[string, string[]]>;
  picture?: { id: string; bytes: string; author: string; t: number };
  parent?: { defaultMembershipApprovalMode: string };
  linkedParent?: string;
  defaultSubGroup?: boolean;
}

export function groupToState(g: Group): GroupState {
  return {
    id: g.id,
    jid: g.jid,
    subject: g.subject,
    subjectOwner: g.subjectOwner.phone,
    subjectTime: g.subjectTime,
    creation: g.creation,
    creator: g.creator.phone,
    description: g.description ? { ...g.description, owner: g.description.owner.phone } : undefined,
    members: [...g.members.values()].map((m) => ({ phone: m.account.phone, role: m.role })),
    addressingMode: g.addressingMode,
    announce: g.announce,
    locked: g.locked,
    joinApproval: g.joinApproval,
    memberAddMode: g.memberAddMode,
    ephemeral: g.ephemeral,
    inviteCode: g.inviteCode,
    pendingRequests: [...g.pendingRequests.values()].map((r) => ({ phone: r.account.phone, t: r.t })),
    senderKeyHolders: [...g.senderKeyHolders.entries()].map(([key, holders]) => [key, [...holders]]),
    picture: g.picture ? { ...g.picture, bytes: g.picture.bytes.toString('base64') } : undefined,
    parent: g.parent,
    linkedParent: g.linkedParent,
    defaultSubGroup: g.defaultSubGroup,
  };
}

/** A saved group with its accounts looked up again; undefined when its creator is unknown, and members whose account is unknown are left out. */
export function groupFromState(state: GroupState, account: (phone: string) => Account | undefined): Group | undefined {
  const creator = account(state.creator);
  if (!creator) return undefined;
  const owner = state.description ? account(state.description.owner) : undefined;
  const group: Group = {
    ...state,
    subjectOwner: account(state.subjectOwner) ?? creator,
    creator,
    description: state.description ? { ...state.description, owner: owner ?? creator } : undefined,
    members: new Map(),
    pendingRequests: new Map(),
    senderKeyHolders: new Map(state.senderKeyHolders.map(([key, holders]) => [key, new Set(holders)])),
    picture: state.picture ? { ...state.picture, bytes: Buffer.from(state.picture.bytes, 'base64') } : undefined,
  };
  for (const member of state.members) {
    const a = account(member.phone);
    if (a) group.members.set(a.phone, { account: a, role: member.role });
  }
  for (const request of state.pendingRequests) {
    const a = account(request.phone);
    if (a) group.pendingRequests.set(a.phone, { account: a, t: request.t });
  }
  return group;
}
