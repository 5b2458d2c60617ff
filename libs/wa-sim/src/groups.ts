// Groups (w:g2 queries, w:gp2 notifications, sender-key fan-out) and presence/chatstate.
// Groups default to LID addressing like current WhatsApp: participants are LIDs carrying
// phone_number, message authors are device LIDs with participant_pn. The control API's group routes
// are groups-routes.ts.
import { randomBytes, randomInt } from 'crypto';
import { jidDecode, proto } from './baileys';
import { deviceJid, deviceRefKey, userJid } from './accounts';
import type { Account, DeviceRef } from './accounts';
import type { GroupRouting, GroupSendingPhone, SimContext } from './context';
import { nextServerId } from './connection';
import { SimError } from './errors';
import type { BinaryNode } from './node-io';
import { child, childBytes, children, contentString, iqError, iqResult, node, unixNow } from './node-io';
import { generateMessageId, messageToJson, padMessage, stanzaTypeFor } from './message-codec';

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

function newInviteCode(): string {
  return randomBytes(16).toString('base64url').slice(0, 22);
}

type Presence = { type: 'available' | 'unavailable'; last: number };

export class GroupStore implements GroupRouting {
  private readonly groups = new Map<string, Group>();
  private readonly byInvite = new Map<string, string>();
  /** How often each group was read (`query`) and each account listed its groups (`participating:<phone>`): tests see what a cache saves. */
  private readonly reads = new Map<string, number>();
  private readonly presence = new Map<string, Presence>();
  /** account phone → subscriber devices, with the JID form they subscribed with. */
  private readonly subscribers = new Map<string, Map<string, { ref: DeviceRef; asJid: string }>>();
  /** account phone → chat states addressed to it (directly or to one of its groups), oldest first. */
  private readonly chatstatesSeen = new Map<string, Array<{ from: string; chat: string; state: string; media?: string; t: number }>>();

  constructor(private readonly ctx: SimContext) {}

  /** How often a group was read (`query`) or an account listed its groups (`participating:<phone>`). */
  readCount(key: string): number {
    return this.reads.get(key) ?? 0;
  }

  /** The chat states addressed to an account (directly or to one of its groups), oldest first. */
  chatstatesOf(phone: string): Array<{ from: string; chat: string; state: string; media?: string; t: number }> {
    return this.chatstatesSeen.get(phone) ?? [];
  }

  stop(): void {
    this.subscribers.clear();
  }

  toState(): GroupState[] {
    return [...this.groups.values()].map((g) => ({
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
    }));
  }

  /** Puts back saved groups; members whose account is unknown are left out. */
  restore(states: GroupState[]): void {
    const account = (phone: string): Account | undefined => this.ctx.registry.get(phone);
    for (const state of states) {
      const creator = account(state.creator);
      if (!creator) continue;
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
      this.groups.set(group.jid, group);
      this.byInvite.set(group.inviteCode, group.jid);
    }
  }

  get(jid: string): Group | undefined {
    const id = jid.endsWith('@g.us') ? jid : `${jid}@g.us`;
    return this.groups.get(id);
  }

  // ---------------------------------------------------------------- helpers

  /** The JID a group shows a member by (LID or PN, the group's addressing mode). */
  memberJid(group: Group, account: Account): string {
    return userJid(account, group.addressingMode);
  }

  private participantNode(group: Group, account: Account, role: GroupRole): BinaryNode {
    return group.addressingMode === 'lid'
      ? node('participant', { jid: account.lidJid, phone_number: account.jid, type: role ?? undefined })
      : node('participant', { jid: account.jid, lid: account.lidJid, type: role ?? undefined });
  }

  private groupNode(group: Group, withParticipants = true): BinaryNode {
    const content: BinaryNode[] = [];
    if (withParticipants) {
      for (const { account, role } of group.members.values()) content.push(this.participantNode(group, account, role));
    }
    if (group.description) {
      const d = group.description;
      content.push(
        node(
          'description',
          {
            id: d.id,
            t: String(d.time),
            participant: this.memberJid(group, d.owner),
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
        s_o: this.memberJid(group, group.subjectOwner),
        s_o_pn: group.addressingMode === 'lid' ? group.subjectOwner.jid : undefined,
        creation: String(group.creation),
        creator: this.memberJid(group, group.creator),
        creator_pn: group.addressingMode === 'lid' ? group.creator.jid : undefined,
        addressing_mode: group.addressingMode,
        size: String(group.members.size),
      },
      content,
    );
  }

  private isAdmin(group: Group, account: Account): boolean {
    const role = group.members.get(account.phone)?.role;
    return role === 'admin' || role === 'superadmin';
  }

  /** Every device of every member (phones included), optionally minus one device. */
  private memberDevices(group: Group, except?: DeviceRef): DeviceRef[] {
    const refs: DeviceRef[] = [];
    for (const { account } of group.members.values()) {
      refs.push({ account, deviceId: 0 });
      for (const device of account.activeDevices()) refs.push({ account, deviceId: device.deviceId });
    }
    return except ? refs.filter((r) => deviceRefKey(r) !== deviceRefKey(except)) : refs;
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
    const targets = this.memberDevices(group, except).filter((target) => !adminsOnly || this.isAdmin(group, target.account));
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

  private resolveParticipant(jid: string): Account | undefined {
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
    this.notify(group, creator, node('create', {}, [this.groupNode(group)]), [], options.except);
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
          changed.map((a) => this.participantNode(group, a, group.members.get(a.phone)?.role ?? null)),
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
    this.notify(
      group,
      account,
      node('created_membership_requests', { request_method: method }, [this.participantNode(group, account, null)]),
      [],
      undefined,
      true,
    );
  }

  /** A request withdrawn by its author or rejected by an admin (`actor`): the admins are told (`revoked_membership_requests`). */
  dropRequest(group: Group, account: Account, actor: Account): boolean {
    if (!group.pendingRequests.delete(account.phone)) return false;
    this.notify(group, actor, node('revoked_membership_requests', {}, [this.participantNode(group, account, null)]), [], undefined, true);
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

  // ---------------------------------------------------------------- iq (w:g2)

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
            .map((p) => this.resolveParticipant(p.attrs.jid))
            .filter((a): a is Account => !!a);
          const subject = op.attrs.subject ?? '';
          if (!subject.trim() || subject.length > 100) return iqError(iq, 400, 'bad-request');
          const description = contentString(child(child(op, 'description'), 'body')) || undefined;
          const parentNode = child(op, 'parent');
          if (parentNode) {
            // A community: its parent group, and the announcements group every member of it is in.
            const mode = parentNode.attrs.default_membership_approval_mode ?? 'request_required';
            const community = this.create(me, subject, [], { except: sender, parent: { defaultMembershipApprovalMode: mode }, description });
            this.create(me, subject, [], { except: sender, linkedParent: community.jid, defaultSubGroup: true, announce: true });
            return iqResult(iq, [this.groupNode(community)]);
          }
          const linkedParent = child(op, 'linked_parent')?.attrs.jid;
          if (linkedParent) {
            const community = this.get(linkedParent);
            if (!community?.parent) return iqError(iq, 404, 'item-not-found');
            if (!this.isAdmin(community, me)) return iqError(iq, 403, 'not-admin');
          }
          const group = this.create(me, subject, participants, { except: sender, linkedParent, description });
          return iqResult(iq, [this.groupNode(group)]);
        }
        case 'participating': {
          this.reads.set(`participating:${me.phone}`, (this.reads.get(`participating:${me.phone}`) ?? 0) + 1);
          const mine = [...this.groups.values()].filter((g) => g.members.has(me.phone));
          return iqResult(iq, [
            node(
              'groups',
              {},
              mine.map((g) => this.groupNode(g)),
            ),
          ]);
        }
        case 'leave': {
          for (const g of children(op, 'group')) {
            const group = g.attrs.id ? this.get(g.attrs.id) : undefined;
            if (group?.members.has(me.phone)) this.changeParticipants(group, me, 'remove', [me.jid]);
          }
          return iqResult(iq);
        }
        case 'invite': {
          const code = op.attrs.code;
          const groupJid = code ? this.byInvite.get(code) : undefined;
          const group = groupJid ? this.groups.get(groupJid) : undefined;
          if (!group) return iqError(iq, 404, 'item-not-found');
          if (!isSet) return iqResult(iq, [this.groupNode(group)]);
          if (group.joinApproval && !group.members.has(me.phone)) {
            this.requestJoin(group, me);
            return iqResult(iq, [node('membership_approval_request', { jid: group.jid })]);
          }
          if (!group.members.has(me.phone)) this.changeParticipants(group, me, 'add', [me.jid]);
          return iqResult(iq, [node('group', { jid: group.jid })]);
        }
        default:
          return iqError(iq, 501, 'feature-not-implemented');
      }
    }

    const group = this.get(to);
    if (!group) return iqError(iq, 404, 'item-not-found');
    const member = group.members.has(me.phone);
    if (!member) return iqError(iq, 403, 'forbidden');
    const admin = this.isAdmin(group, me);
    const requireAdmin = (): BinaryNode | undefined => (admin ? undefined : iqError(iq, 403, 'not-admin'));

    switch (op.tag) {
      case 'query':
        this.reads.set(group.jid, (this.reads.get(group.jid) ?? 0) + 1);
        return iqResult(iq, [this.groupNode(group)]);
      case 'sub_groups':
        return iqResult(iq, [
          node(
            'sub_groups',
            {},
            [...this.groups.values()]
              .filter((g) => g.linkedParent === group.jid)
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
          const linked = target.attrs.jid ? this.get(target.attrs.jid) : undefined;
          if (!linked || linked.parent) return iqError(iq, 404, 'item-not-found');
          if (op.tag === 'links') {
            if (linked.linkedParent) return iqError(iq, 409, 'conflict');
            if (!this.isAdmin(linked, me)) return iqError(iq, 403, 'not-admin');
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
          this.notify(group, me, change('sub_group', linked));
          this.notify(linked, me, change('parent', group));
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
            this.changeParticipants(
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
              this.changeParticipants(
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
        this.notify(group, me, node('subject', { subject: group.subject, s_t: String(group.subjectTime), s_o: this.memberJid(group, me) }));
        return iqResult(iq);
      }
      case 'description': {
        if (group.locked && !admin) return iqError(iq, 403, 'not-admin');
        const text = contentString(child(op, 'body'));
        group.description = op.attrs.delete === 'true' || !text ? undefined : { id: op.attrs.id ?? generateMessageId(), text, owner: me, time: unixNow() };
        this.notify(group, me, node('description', { id: op.attrs.id }, text ? [node('body', {}, Buffer.from(text, 'utf-8'))] : [node('delete', {})]));
        return iqResult(iq);
      }
      case 'invite':
        if (!isSet) return requireAdmin() ?? iqResult(iq, [node('invite', { code: group.inviteCode })]);
        if (!admin) return iqError(iq, 403, 'not-admin');
        this.byInvite.delete(group.inviteCode);
        group.inviteCode = newInviteCode();
        this.byInvite.set(group.inviteCode, group.jid);
        this.notify(group, me, node('invite', { code: group.inviteCode }));
        return iqResult(iq, [node('invite', { code: group.inviteCode })]);
      case 'announcement':
      case 'not_announcement':
      case 'locked':
      case 'unlocked': {
        const denied = requireAdmin();
        if (denied) return denied;
        if (op.tag === 'announcement' || op.tag === 'not_announcement') group.announce = op.tag === 'announcement';
        else group.locked = op.tag === 'locked';
        this.notify(group, me, node(op.tag, {}));
        return iqResult(iq);
      }
      case 'ephemeral':
      case 'not_ephemeral':
        // Disappearing messages are group info: a locked group lets only its admins change them.
        if (group.locked && !admin) return iqError(iq, 403, 'not-admin');
        group.ephemeral = op.tag === 'ephemeral' ? Number(op.attrs.expiration ?? 0) : 0;
        this.notify(group, me, node(op.tag, op.tag === 'ephemeral' ? { expiration: String(group.ephemeral) } : {}));
        return iqResult(iq);
      case 'member_add_mode': {
        const denied = requireAdmin();
        if (denied) return denied;
        group.memberAddMode = contentString(op) === 'all_member_add' ? 'all_member_add' : 'admin_add';
        this.notify(group, me, node('member_add_mode', {}, group.memberAddMode));
        return iqResult(iq);
      }
      case 'membership_approval_mode': {
        const denied = requireAdmin();
        if (denied) return denied;
        group.joinApproval = child(op, 'group_join')?.attrs.state === 'on';
        this.notify(group, me, node('membership_approval_mode', {}, [node('group_join', { state: group.joinApproval ? 'on' : 'off' })]));
        return iqResult(iq);
      }
      case 'membership_approval_requests':
        return iqResult(iq, [
          node(
            'membership_approval_requests',
            {},
            [...group.pendingRequests.values()].map((r) =>
              node('membership_approval_request', { jid: this.memberJid(group, r.account), request_time: String(r.t) }),
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
            this.changeParticipants(group, me, 'add', [account.jid]);
          } else this.dropRequest(group, account, me);
          results.push(node('participant', { jid: p.attrs.jid }));
        }
        return iqResult(iq, [node('membership_requests_action', {}, [node(action, {}, results)])]);
      }
      default:
        return iqError(iq, 501, 'feature-not-implemented');
    }
  }

  // ---------------------------------------------------------------- pictures (w:profile:picture with a group target)

  /** Sets, removes (`set` without a picture) or reads a group's picture; members only, admins only when the group is locked. */
  handlePictureIq(sender: DeviceRef, iq: BinaryNode, groupJid: string): BinaryNode {
    const group = this.get(groupJid);
    if (!group) return iqError(iq, 404, 'item-not-found');
    const me = sender.account;
    if (!group.members.has(me.phone)) return iqError(iq, 403, 'forbidden');
    if (iq.attrs.type !== 'set') {
      if (!group.picture) return iqError(iq, 404, 'item-not-found');
      const type = child(iq, 'picture')?.attrs.type === 'image' ? 'image' : 'preview';
      const url = `https://pps.whatsapp.net/v/t61.24694-24/${group.picture.id}_${type}.jpg`;
      return iqResult(iq, [node('picture', { id: group.picture.id, type, url, direct_path: new URL(url).pathname })]);
    }
    if (group.locked && !this.isAdmin(group, me)) return iqError(iq, 403, 'not-admin');
    const bytes = childBytes(iq, 'picture');
    // WhatsApp takes a JPEG (Baileys sends 640×640).
    if (bytes?.length && (bytes[0] !== 0xff || bytes[1] !== 0xd8)) return iqError(iq, 406, 'not-acceptable');
    this.setPicture(group, me, bytes?.length ? Buffer.from(bytes) : undefined);
    return iqResult(iq, group.picture ? [node('picture', { id: group.picture.id })] : []);
  }

  /** Sets (a JPEG) or removes the group's picture; every member's devices get the `picture` notification. */
  setPicture(group: Group, actor: Account, bytes: Buffer | undefined): void {
    if (!bytes && !group.picture) return; // removing a picture the group does not have changes nothing
    const author = this.memberJid(group, actor);
    group.picture = bytes ? { id: String(unixNow() * 1000 + randomInt(1000)), bytes, author, t: unixNow() } : undefined;
    const change = group.picture ? node('set', { jid: group.jid, id: group.picture.id, author }) : node('delete', { jid: group.jid, author });
    const stanza = node(
      'notification',
      {
        from: group.jid,
        type: 'picture',
        id: nextServerId(),
        t: String(unixNow()),
        participant: author,
        participant_pn: group.addressingMode === 'lid' ? actor.jid : undefined,
        notify: actor.name,
      },
      [change],
    );
    for (const target of this.memberDevices(group)) {
      const device = target.deviceId === 0 ? undefined : target.account.devices.get(target.deviceId);
      if (device) this.ctx.deliverToCompanion(device, stanza);
    }
  }

  // ---------------------------------------------------------------- messages

  /** Fans a group message out: skmsg to everyone, plus the per-device pkmsg/msg carrying the sender key. */
  route(sender: DeviceRef, stanza: BinaryNode, t: number): string | undefined {
    const group = this.get(stanza.attrs.to);
    if (!group) return '404';
    if (!group.members.has(sender.account.phone)) return '403';
    if (group.announce && !this.isAdmin(group, sender.account)) return '403';
    const id = stanza.attrs.id;
    this.ctx.router.remember({ id, sender, chat: group.jid, chatForm: group.addressingMode, type: stanza.attrs.type ?? 'text', t, forwarded: new Set() });
    const perDevice = new Map<string, BinaryNode>();
    for (const toNode of children(child(stanza, 'participants'), 'to')) {
      const enc = child(toNode, 'enc');
      const target = toNode.attrs.jid ? this.ctx.registry.resolveDevice(toNode.attrs.jid) : undefined;
      if (enc && target) perDevice.set(deviceRefKey(target), enc);
    }
    const directEncs = children(stanza, 'enc');
    const skmsg = directEncs.find((e) => e.attrs.type === 'skmsg');
    // A retry resend names one participant device and carries a single pkmsg/msg.
    const retryTarget = stanza.attrs.participant ? this.ctx.registry.resolveDevice(stanza.attrs.participant) : undefined;
    if (retryTarget) {
      const enc = directEncs[0];
      if (enc) perDevice.set(deviceRefKey(retryTarget), enc);
    }
    const attrs: Record<string, string | undefined> = {
      from: group.jid,
      id,
      t: String(t),
      type: stanza.attrs.type ?? 'text',
      edit: stanza.attrs.edit,
      notify: sender.account.name,
      addressing_mode: group.addressingMode,
      participant: deviceJid(sender.account, sender.deviceId, group.addressingMode),
    };
    if (group.addressingMode === 'lid') attrs.participant_pn = sender.account.jid;
    else attrs.participant_lid = sender.account.lidJid;
    const targets = retryTarget ? [retryTarget] : this.memberDevices(group, sender);
    for (const target of targets) {
      const content: BinaryNode[] = [];
      const personal = perDevice.get(deviceRefKey(target));
      if (personal) content.push(node('enc', { ...personal.attrs }, personal.content));
      if (skmsg && !retryTarget) content.push(node('enc', { ...skmsg.attrs }, skmsg.content));
      if (!content.length) continue;
      this.ctx.deliver(target, node('message', attrs, content), sender);
    }
    return undefined;
  }

  /** Group message from a simulated phone (sender keys via Baileys' GroupCipher). */
  async sendFromPhone(phone: GroupSendingPhone, groupJid: string, message: proto.IMessage, id: string): Promise<void> {
    const group = this.get(groupJid);
    if (!group) throw new SimError(404, `no group ${groupJid}`);
    const account = phone.account;
    if (!group.members.has(account.phone)) throw new SimError(403, `${account.phone} is not in ${group.jid}`);
    const me = deviceJid(account, 0, group.addressingMode);
    const { ciphertext, senderKeyDistributionMessage } = await account.signal.encryptGroup(group.jid, me, padMessage(message));
    const holdersKey = `${account.phone}:0`;
    const holders = group.senderKeyHolders.get(holdersKey) ?? new Set<string>();
    group.senderKeyHolders.set(holdersKey, holders);
    const skdm = padMessage({ senderKeyDistributionMessage: { groupId: group.jid, axolotlSenderKeyDistributionMessage: senderKeyDistributionMessage } });
    const participants: BinaryNode[] = [];
    for (const target of this.memberDevices(group, phone.ref)) {
      const key = deviceRefKey(target);
      if (holders.has(key)) continue;
      const { type, ciphertext: enc, jid } = await phone.encryptFor(target, skdm);
      participants.push(node('to', { jid }, [node('enc', { v: '2', type }, enc)]));
      holders.add(key);
    }
    const type = stanzaTypeFor(message);
    account.outbox.set(id, { id, to: group.jid, type, message: messageToJson(message), timestamp: unixNow(), status: 'sent', receipts: [] });
    const content: BinaryNode[] = [];
    if (participants.length) content.push(node('participants', {}, participants));
    content.push(node('enc', { v: '2', type: 'skmsg' }, ciphertext));
    const ack = this.ctx.router.onMessage(phone.ref, node('message', { id, to: group.jid, type, addressing_mode: group.addressingMode }, content));
    if (ack?.attrs.error) throw new SimError(403, `group refused the message (${ack.attrs.error})`);
    phone.onServerAck(id);
  }

  // ---------------------------------------------------------------- presence & chatstate

  onPresence(sender: DeviceRef, stanza: BinaryNode): void {
    if (stanza.tag === 'chatstate') {
      this.forwardChatstate(sender.account, stanza.attrs.to, Array.isArray(stanza.content) ? stanza.content[0] : undefined, sender);
      return;
    }
    const type = stanza.attrs.type;
    if (type === 'subscribe' && stanza.attrs.to) {
      const target = this.ctx.registry.resolveUser(stanza.attrs.to);
      if (!target) return;
      const subs = this.subscribers.get(target.phone) ?? new Map<string, { ref: DeviceRef; asJid: string }>();
      subs.set(deviceRefKey(sender), { ref: sender, asJid: stanza.attrs.to });
      this.subscribers.set(target.phone, subs);
      this.sendPresenceTo(sender, target, stanza.attrs.to);
      return;
    }
    if (type === 'available' || type === 'unavailable') {
      this.setPresence(sender.account, type);
    }
  }

  setPresence(account: Account, type: 'available' | 'unavailable'): void {
    this.presence.set(account.phone, { type, last: unixNow() });
    for (const { ref, asJid } of this.subscribers.get(account.phone)?.values() ?? []) {
      this.sendPresenceTo(ref, account, asJid);
    }
  }

  private sendPresenceTo(subscriber: DeviceRef, target: Account, asJid?: string): void {
    if (subscriber.deviceId === 0) return;
    const device = subscriber.account.devices.get(subscriber.deviceId);
    const connection = device?.connection;
    if (!connection?.isTransportReady || !connection.active) return;
    const state = this.presence.get(target.phone) ?? { type: 'unavailable' as const, last: unixNow() - 60 };
    const from = asJid ? `${jidDecode(asJid)?.user}@${jidDecode(asJid)?.server}` : userJid(target, this.ctx.options.incomingAddressing);
    connection.sendNode(node('presence', { from, type: state.type, last: state.type === 'unavailable' ? String(state.last) : undefined }));
  }

  /** composing/paused/recording from a device or phone to a user or group. */
  forwardChatstate(from: Account, to: string | undefined, state: BinaryNode | undefined, except?: DeviceRef): void {
    if (!to || !state) return;
    const content = [node(state.tag, { ...state.attrs })];
    if (to.endsWith('@g.us')) {
      const group = this.get(to);
      if (!group) return;
      for (const { account } of group.members.values()) if (account !== from) this.seeChatstate(account, from, group.jid, state);
      for (const target of this.memberDevices(group, except)) {
        if (target.account === from || target.deviceId === 0) continue;
        const connection = target.account.devices.get(target.deviceId)?.connection;
        if (connection?.isTransportReady && connection.active) {
          connection.sendNode(node('chatstate', { from: group.jid, participant: this.memberJid(group, from) }, content));
        }
      }
      return;
    }
    const target = this.ctx.registry.resolveUser(to);
    if (!target) return;
    this.seeChatstate(target, from, from.jid, state);
    for (const device of target.activeDevices()) {
      const connection = device.connection;
      if (connection?.isTransportReady && connection.active) {
        connection.sendNode(node('chatstate', { from: userJid(from, this.ctx.options.incomingAddressing) }, content));
      }
    }
  }

  /** What the account's phone shows: who is typing (composing), recording (composing media=audio) or stopped (paused). */
  private seeChatstate(account: Account, from: Account, chat: string, state: BinaryNode): void {
    const seen = this.chatstatesSeen.get(account.phone) ?? [];
    seen.push({ from: from.jid, chat, state: state.tag, ...(state.attrs.media ? { media: state.attrs.media } : {}), t: Date.now() });
    if (seen.length > 500) seen.shift();
    this.chatstatesSeen.set(account.phone, seen);
  }
}

/** Width and height of a baseline or progressive JPEG (its SOF segment); `format` unknown when it is no JPEG. */
export function jpegSize(bytes: Buffer): { width: number; height: number; format: string } {
  if (bytes[0] !== 0xff || bytes[1] !== 0xd8) return { width: 0, height: 0, format: 'unknown' };
  let at = 2;
  while (at + 9 < bytes.length) {
    if (bytes[at] !== 0xff) return { width: 0, height: 0, format: 'jpeg' };
    const marker = bytes[at + 1];
    const length = bytes.readUInt16BE(at + 2);
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: bytes.readUInt16BE(at + 5), width: bytes.readUInt16BE(at + 7), format: 'jpeg' };
    }
    at += 2 + length;
  }
  return { width: 0, height: 0, format: 'jpeg' };
}
