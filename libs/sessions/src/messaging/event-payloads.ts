import {
  messagesUpdatePayload,
  type BlockChangeRecord,
  type BlocksEventPayload,
  type CallEventPayload,
  type ChatLabelsEventPayload,
  type ChatsEventPayload,
  type ContactsEventPayload,
  type GroupChangeEvent,
  type GroupsEventPayload,
  type HistoryEventPayload,
  type JoinedGroupEvent,
  type LabelsEventPayload,
  type MessagesEventPayload,
  type MessagesUpdateEventPayload,
  type MessageUpdateState,
  type NewsletterMessagesEventPayload,
  type PresenceEventPayload,
  type PresenceState,
} from '@gw/contracts';
import { toChatRecord, toMessageRecord, type ChatRow, type ContactRow, type MessageRow, type NewOutboxEvent, type StatusChange } from '@gw/persistence';
import type { GroupMetadata } from '../baileys';
import type { Party } from './identity-resolver';

/** Who the events are about: the instance's name and its phone number. */
export interface InstanceIdentity {
  instanceName: string;
  owner: string;
}

/** The chat JID events are ordered by (outbox `chat_id`): the phone/group JID, else the LID. */
export function chatKey(chat: { waChatId: string; waChatLid: string }): string {
  return chat.waChatId || chat.waChatLid;
}

/**
 * `messages`, the envelope of the captures without the delivery-time fields (BaseUrl, token). `groupName`:
 * as WhatsApp answered it; '' (not answered in time, or not waited for while a flood holds the socket,
 * ADR 0065) takes the name the group's chat stored.
 */
export function messagesEvent(chat: ChatRow, row: MessageRow, who: InstanceIdentity, groupName: string): NewOutboxEvent {
  const payload: MessagesEventPayload = {
    EventType: 'messages',
    chat: toChatRecord(chat, who.owner),
    chatSource: 'updated',
    instanceName: who.instanceName,
    message: { ...toMessageRecord(row, who.owner), groupName: row.isGroup ? groupName || (chat.isGroup ? chat.waName : '') || 'Unknown' : 'Unknown' },
    owner: who.owner,
  };
  return { eventType: 'messages', chatId: chatKey(chat), payload };
}

export interface MessageUpdateFacts {
  rows: StatusChange[];
  state: MessageUpdateState;
  type: MessagesUpdateEventPayload['type'];
  /** Who caused it: the reader of a receipt, the author of a revoke. */
  sender: Party;
  /** Unix seconds. */
  timestamp: number;
  error?: string;
}

/** `messages_update` for messages of one chat (uazapi-notes §3: strings for booleans and the time). */
export function messagesUpdateEvent(facts: MessageUpdateFacts, who: InstanceIdentity): NewOutboxEvent {
  const first = facts.rows[0];
  const payload = messagesUpdatePayload({
    messageIds: facts.rows.map((row) => row.messageId),
    chat: first.chatId || first.chatLid,
    sender: facts.sender,
    fromMe: first.fromMe,
    isGroup: first.isGroup,
    type: facts.type,
    state: facts.state,
    timestamp: facts.timestamp,
    error: facts.error,
    instanceName: who.instanceName,
    owner: who.owner,
  });
  return { eventType: 'messages_update', chatId: first.chatId || first.chatLid, payload };
}

export function contactsEvent(contacts: ContactRow[], who: InstanceIdentity): NewOutboxEvent {
  const payload: ContactsEventPayload = {
    EventType: 'contacts',
    contacts: contacts.map((contact) => ({
      jid: contact.jid,
      lid: contact.lid,
      phone: contact.jid.endsWith('@s.whatsapp.net') ? contact.jid.split('@')[0] : '',
      contactName: contact.contactName,
      pushName: contact.pushName,
      verifiedName: contact.verifiedName,
    })),
    instanceName: who.instanceName,
    owner: who.owner,
  };
  return { eventType: 'contacts', payload };
}

export function chatsEvent(chats: ChatRow[], who: InstanceIdentity): NewOutboxEvent {
  const payload: ChatsEventPayload = {
    EventType: 'chats',
    chats: chats.map((chat) => toChatRecord(chat, who.owner)),
    instanceName: who.instanceName,
    owner: who.owner,
  };
  return { eventType: 'chats', chatId: chats.length === 1 ? chatKey(chats[0]) : '', payload };
}

export interface HistoryFacts {
  requestId: string;
  syncType: string;
  progress: number | null;
  isLatest: boolean | null;
  chats: number;
  contacts: number;
  messages: MessageRow[];
}

/** `history`: what a history sync brought; `request_id` is the pairing attempt's (connect's answer). */
export function historyEvent(facts: HistoryFacts, who: InstanceIdentity): NewOutboxEvent {
  const payload: HistoryEventPayload = {
    EventType: 'history',
    request_id: facts.requestId,
    syncType: facts.syncType,
    progress: facts.progress,
    isLatest: facts.isLatest,
    counts: { chats: facts.chats, contacts: facts.contacts, messages: facts.messages.length },
    messages: facts.messages.map((row) => toMessageRecord(row, who.owner)),
    instanceName: who.instanceName,
    owner: who.owner,
  };
  return { eventType: 'history', payload };
}

export interface GroupParticipantsFacts {
  groupJid: string;
  subject: string;
  action: 'add' | 'remove' | 'promote' | 'demote';
  author: Party | null;
  members: Party[];
}

const GROUP_LISTS = { add: ['Join', 'JoinLid'], remove: ['Leave', 'LeaveLid'], promote: ['Promote', 'PromoteLid'], demote: ['Demote', 'DemoteLid'] } as const;

/** RFC 3339 to the second, as the captures write times. */
const rfc3339 = (date: Date): string => date.toISOString().replace(/\.\d{3}Z$/, 'Z');
/** Go's zero time, which the captures show for times WhatsApp did not tell. */
const ZERO_TIME = '0001-01-01T00:00:00Z';

/**
 * `groups`, type `Group`: participants changed, in the shape and key order of the real captures
 * (groups/join.added.other, join.link.other, leave.*). The participant version ids are not exposed by
 * Baileys, so they are ''.
 */
export function groupsEvent(facts: GroupParticipantsFacts, who: InstanceIdentity): NewOutboxEvent {
  const [pnList, lidList] = GROUP_LISTS[facts.action];
  const people: Pick<GroupChangeEvent, 'Join' | 'Leave' | 'Promote' | 'Demote'> = { Join: null, Leave: null, Promote: null, Demote: null };
  people[pnList] = facts.members.map((member) => member.pn || member.jid);
  const sender = facts.author;
  // Someone who joined by link acted for nobody but themself: the captures show no sender then.
  const selfJoin = sender !== null && facts.action === 'add' && facts.members.length === 1 && samePerson(sender, facts.members[0]);
  const by = selfJoin ? null : sender;
  const event: GroupChangeEvent = {
    JID: facts.groupJid,
    Notify: selfJoin ? 'invite' : facts.subject,
    Sender: by ? by.pn || by.jid : null,
    SenderPN: by ? by.pn || by.jid : null,
    Timestamp: rfc3339(new Date()),
    Name: null,
    Topic: null,
    Locked: null,
    Announce: null,
    Ephemeral: null,
    MembershipApprovalMode: null,
    Delete: null,
    Link: null,
    Unlink: null,
    NewInviteLink: null,
    PrevParticipantVersionID: '',
    ParticipantVersionID: '',
    JoinReason: selfJoin ? 'invite' : '',
    Suspended: false,
    Unsuspended: false,
    UnknownChanges: null,
    ...people,
    [lidList]: facts.members.map((member) => member.lid).filter(Boolean),
    ...(by ? { sender_pn: by.pn, sender_lid: by.lid } : {}),
  };
  const payload: GroupsEventPayload = { EventType: 'groups', event, instanceName: who.instanceName, owner: who.owner, type: 'Group' };
  return { eventType: 'groups', chatId: facts.groupJid, payload };
}

export interface GroupSettingFacts {
  groupJid: string;
  subject: string;
  author: Party | null;
  /** The new invite code (the link was reset). */
  inviteCode?: string;
  /** Join approval turned on or off. */
  joinApproval?: boolean;
  /** The new name. */
  name?: string;
  /** The new description ('' when removed). */
  topic?: string;
  /** Only admins edit the group's info (true) or everyone. */
  locked?: boolean;
  /** Only admins send (true) or everyone. */
  announce?: boolean;
  /** A join request created, withdrawn or rejected. */
  request?: { action: 'created' | 'revoked' | 'rejected'; member: Party; method: string };
  /** Disappearing messages: the timer in seconds (0 off). */
  ephemeralSeconds?: number;
  /** Who may add members. */
  memberAddMode?: 'admin_add' | 'all_member_add';
  /** The picture set (its id) or removed. */
  picture?: { remove: boolean; id: string };
  /** A community link made (`link`) or undone (`unlink`): the other group and how it relates (parent, sub). */
  link?: { change: 'link' | 'unlink'; type: string; reason: string; jid: string; name: string; defaultSub: boolean };
}

/**
 * `groups`, type `Group`: a group setting changed (invite link reset, join approval) or a join request came or
 * went, in the shape of the participant events with every person list null and the change's field set
 * (whatsmeow's GroupInfo: NewInviteLink, MembershipApprovalMode; MembershipRequest for the requests).
 */
export function groupSettingEvent(facts: GroupSettingFacts, who: InstanceIdentity): NewOutboxEvent {
  const by = facts.author;
  const now = rfc3339(new Date());
  const event: GroupChangeEvent = {
    JID: facts.groupJid,
    Notify: facts.subject,
    Sender: by ? by.pn || by.jid : null,
    SenderPN: by ? by.pn || by.jid : null,
    Timestamp: now,
    Name: facts.name === undefined ? null : { Name: facts.name, NameSetAt: now, NameSetBy: by?.jid ?? '', NameSetByPN: by?.pn ?? '' },
    Topic:
      facts.topic === undefined
        ? null
        : { Topic: facts.topic, TopicID: '', TopicSetAt: now, TopicSetBy: by?.jid ?? '', TopicSetByPN: by?.pn ?? '', TopicDeleted: facts.topic === '' },
    Locked: facts.locked === undefined ? null : { IsLocked: facts.locked },
    Announce: facts.announce === undefined ? null : { IsAnnounce: facts.announce, AnnounceVersionID: '' },
    Ephemeral: facts.ephemeralSeconds === undefined ? null : { IsEphemeral: facts.ephemeralSeconds > 0, DisappearingTimer: facts.ephemeralSeconds },
    MembershipApprovalMode: facts.joinApproval === undefined ? null : { IsJoinApprovalRequired: facts.joinApproval },
    Delete: null,
    Link: facts.link?.change === 'link' ? linkChange(facts.link) : null,
    Unlink: facts.link?.change === 'unlink' ? linkChange(facts.link) : null,
    NewInviteLink: facts.inviteCode === undefined ? null : `https://chat.whatsapp.com/${facts.inviteCode}`,
    PrevParticipantVersionID: '',
    ParticipantVersionID: '',
    JoinReason: '',
    Suspended: false,
    Unsuspended: false,
    UnknownChanges: null,
    Join: null,
    Leave: null,
    Promote: null,
    Demote: null,
    ...(facts.request
      ? {
          MembershipRequest: {
            Action: facts.request.action,
            JID: facts.request.member.pn || facts.request.member.jid,
            PhoneNumber: facts.request.member.pn,
            LID: facts.request.member.lid,
            Method: facts.request.method,
          },
        }
      : {}),
    ...(facts.memberAddMode ? { MemberAddMode: facts.memberAddMode } : {}),
    ...(facts.picture ? { Picture: { Remove: facts.picture.remove, PictureID: facts.picture.id, Author: by?.jid ?? '', AuthorPN: by?.pn ?? '' } } : {}),
    ...(by ? { sender_pn: by.pn, sender_lid: by.lid } : {}),
  };
  const payload: GroupsEventPayload = { EventType: 'groups', event, instanceName: who.instanceName, owner: who.owner, type: 'Group' };
  return { eventType: 'groups', chatId: facts.groupJid, payload };
}

function linkChange(link: NonNullable<GroupSettingFacts['link']>) {
  return {
    Type: link.type,
    UnlinkReason: link.reason,
    Group: {
      JID: link.jid,
      GroupName: { Name: link.name, NameSetAt: ZERO_TIME, NameSetBy: '', NameSetByPN: '' },
      GroupIsDefaultSub: { IsDefaultSubGroup: link.defaultSub },
    },
  };
}

function samePerson(a: Party, b: Party): boolean {
  return (a.pn !== '' && a.pn === b.pn) || (a.lid !== '' && a.lid === b.lid) || a.jid === b.jid;
}

export interface JoinedGroupFacts {
  groupJid: string;
  /** Who added the instance; null or the instance itself for a join by link. */
  author: Party | null;
  me: Party;
  /** The group as WhatsApp describes it now (null when it could not be read: the known facts only). */
  metadata: GroupMetadata | null;
  /** Fallbacks when the metadata is missing. */
  subject: string;
  members: Party[];
}

const timeOf = (seconds: number | undefined): string => (seconds ? rfc3339(new Date(seconds * 1000)) : ZERO_TIME);

/**
 * `groups`, type `JoinedGroup`: the instance itself joined; `event` is the whole group, in the shape and key
 * order of the capture groups/join.link.me.json (whatsmeow's GroupInfo with the join's Reason and Sender).
 */
export function joinedGroupEvent(facts: JoinedGroupFacts, who: InstanceIdentity): NewOutboxEvent {
  const byLink = facts.author === null || samePerson(facts.author, facts.me);
  const by = byLink ? null : facts.author;
  const group = facts.metadata;
  const participants = group
    ? group.participants.map((participant) => {
        const id = participant.id;
        const pn = participant.phoneNumber ?? (id.endsWith('@s.whatsapp.net') ? id : '');
        const lid = participant.lid ?? (id.endsWith('@lid') ? id : '');
        return {
          JID: id,
          PhoneNumber: pn,
          LID: lid,
          IsAdmin: participant.admin === 'admin' || participant.admin === 'superadmin',
          IsSuperAdmin: participant.admin === 'superadmin',
          DisplayName: '',
          Error: 0,
          AddRequest: null,
        };
      })
    : facts.members.map((member) => ({
        JID: member.lid || member.jid,
        PhoneNumber: member.pn,
        LID: member.lid,
        IsAdmin: false,
        IsSuperAdmin: false,
        DisplayName: '',
        Error: 0,
        AddRequest: null,
      }));
  const event: JoinedGroupEvent = {
    Reason: byLink ? 'invite' : '',
    Type: '',
    CreateKey: '',
    Sender: by ? by.pn || by.jid : null,
    SenderPN: by ? by.pn || by.jid : null,
    Notify: byLink ? 'invite' : (group?.subject ?? facts.subject),
    JID: facts.groupJid,
    OwnerJID: group?.owner ?? '',
    OwnerPN: group?.ownerPn ?? '',
    Name: group?.subject ?? facts.subject,
    NameSetAt: timeOf(group?.subjectTime),
    NameSetBy: group?.subjectOwner ?? '',
    NameSetByPN: group?.subjectOwnerPn ?? '',
    Topic: group?.desc ?? '',
    TopicID: group?.descId ?? '',
    TopicSetAt: timeOf(group?.descTime),
    TopicSetBy: group?.descOwner ?? '',
    TopicSetByPN: group?.descOwnerPn ?? '',
    TopicDeleted: false,
    IsLocked: group?.restrict === true,
    IsAnnounce: group?.announce === true,
    AnnounceVersionID: '',
    IsEphemeral: Boolean(group?.ephemeralDuration),
    DisappearingTimer: group?.ephemeralDuration ?? 0,
    IsIncognito: false,
    IsParent: group?.isCommunity === true,
    DefaultMembershipApprovalMode: '',
    LinkedParentJID: group?.linkedParent ?? '',
    IsDefaultSubGroup: group?.isCommunityAnnounce === true,
    IsJoinApprovalRequired: group?.joinApprovalMode === true,
    AddressingMode: group?.addressingMode ?? '',
    GroupCreated: timeOf(group?.creation),
    CreatorCountryCode: group?.owner_country_code ?? '',
    ParticipantVersionID: '',
    Participants: participants,
    ParticipantCount: group?.size ?? participants.length,
    MemberAddMode: group ? (group.memberAddMode ? 'all_member_add' : 'admin_add') : '',
    Suspended: false,
  };
  const payload: GroupsEventPayload = { EventType: 'groups', event, instanceName: who.instanceName, owner: who.owner, type: 'JoinedGroup' };
  return { eventType: 'groups', chatId: facts.groupJid, payload };
}

/** `call`: an offer, and how it ended (reject, timeout, accept, terminate). */
export function callEvent(
  call: { id: string; from: string; chatId: string; isGroup?: boolean; groupJid?: string; isVideo?: boolean; status: string; date: Date; offline: boolean },
  caller: Party,
  who: InstanceIdentity,
): NewOutboxEvent {
  const payload: CallEventPayload = {
    EventType: 'call',
    event: {
      id: call.id,
      from: caller.pn || call.from,
      from_lid: caller.lid,
      chatId: call.chatId,
      isGroup: Boolean(call.isGroup),
      groupJid: call.groupJid ?? '',
      isVideo: Boolean(call.isVideo),
      status: call.status,
      offline: call.offline,
      timestamp: call.date instanceof Date ? call.date.getTime() : Date.now(),
    },
    instanceName: who.instanceName,
    owner: who.owner,
  };
  return { eventType: 'call', chatId: call.chatId, payload };
}

/** `labels`: a label of the account changed (the refresh `request_id` is '' for changes the phone made). */
export function labelsEvent(
  label: { id: string; name: string; color: number; deleted: boolean; predefinedId?: string },
  who: InstanceIdentity,
  requestId = '',
): NewOutboxEvent {
  const payload: LabelsEventPayload = {
    EventType: 'labels',
    label: { id: label.id, labelid: label.id, name: label.name, color: label.color, deleted: label.deleted === true, predefinedId: label.predefinedId ?? '' },
    request_id: requestId,
    instanceName: who.instanceName,
    owner: who.owner,
  };
  return { eventType: 'labels', payload };
}

/** `chat_labels`: a label was put on or taken off a chat; `labels` is the chat's list afterwards (null when the chat is unknown). */
export function chatLabelsEvent(
  facts: { chatId: string; labelId: string; action: 'add' | 'remove'; labels: string[] | null },
  who: InstanceIdentity,
  requestId = '',
): NewOutboxEvent {
  const payload: ChatLabelsEventPayload = {
    EventType: 'chat_labels',
    event: { chatid: facts.chatId, labelid: facts.labelId, action: facts.action, labels: facts.labels },
    request_id: requestId,
    instanceName: who.instanceName,
    owner: who.owner,
  };
  return { eventType: 'chat_labels', chatId: facts.chatId, payload };
}

export interface PresenceFacts {
  /** Chat JID as the API shows it (the contact's number, or the group). */
  chat: string;
  isGroup: boolean;
  who: Party;
  state: PresenceState;
  /** Unix seconds, when known. */
  lastSeen: number | null;
}

/** `presence`: online/offline of a contact (`Presence`), or a chat state in a chat (`ChatPresence`). */
export function presenceEvent(facts: PresenceFacts, who: InstanceIdentity): NewOutboxEvent {
  const chatState = facts.state !== 'available' && facts.state !== 'unavailable';
  const payload: PresenceEventPayload = {
    EventType: 'presence',
    type: chatState ? 'ChatPresence' : 'Presence',
    event: {
      Chat: facts.chat,
      Sender: facts.who.pn || facts.who.jid,
      sender_pn: facts.who.pn,
      sender_lid: facts.who.lid,
      IsGroup: facts.isGroup,
      State: facts.state,
      LastSeen: facts.lastSeen,
    },
    instanceName: who.instanceName,
    owner: who.owner,
  };
  return { eventType: 'presence', chatId: facts.chat, payload };
}

/** `blocks`: what changed in the blocklist, and the whole list afterwards. */
export function blocksEvent(changes: BlockChangeRecord[], blockList: string[], who: InstanceIdentity): NewOutboxEvent {
  const payload: BlocksEventPayload = {
    EventType: 'blocks',
    changes: changes.map((change) => ({ jid: change.jid, lid: change.lid, action: change.action })),
    blockList,
    instanceName: who.instanceName,
    owner: who.owner,
  };
  return { eventType: 'blocks', chatId: changes.length === 1 ? changes[0].jid : '', payload };
}

/**
 * `newsletter_messages`: a post of a followed channel (views and reactions come with /newsletter/messages, not as
 * events); `edit` `edited` / `deleted` when an admin changed or deleted a post (the message as it is now).
 */
export function newsletterMessagesEvent(row: MessageRow, serverId: string, who: InstanceIdentity, edit?: 'edited' | 'deleted'): NewOutboxEvent {
  const payload: NewsletterMessagesEventPayload = {
    EventType: 'newsletter_messages',
    newsletter: row.chatId,
    server_id: serverId,
    ...(edit ? { edit } : {}),
    message: toMessageRecord(row, who.owner),
    instanceName: who.instanceName,
    owner: who.owner,
  };
  return { eventType: 'newsletter_messages', chatId: row.chatId, payload };
}
