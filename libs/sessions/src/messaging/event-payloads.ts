import type { BlockChangeRecord, BlocksEventPayload, ChatLabelsEventPayload, ChatsEventPayload, ContactsEventPayload, LabelsEventPayload, MessagesEventPayload, MessagesUpdateEventPayload, MessageUpdateState, PresenceEventPayload, PresenceState } from '@gw/contracts';
import { toChatRecord, toMessageRecord, type ChatRow, type ContactRow, type MessageRow, type NewOutboxEvent } from '@gw/persistence';
import type { Party } from './identity-resolver';

/** Who the events are about: the instance's name and its phone number. */
export interface InstanceIdentity {
  instanceName: string;
  owner: string;
}

const TRUE_FALSE = (value: boolean): 'True' | 'False' => (value ? 'True' : 'False');

/** The chat JID events are ordered by (outbox `chat_id`): the phone/group JID, else the LID. */
export function chatKey(chat: { waChatId: string; waChatLid: string }): string {
  return chat.waChatId || chat.waChatLid;
}

/** `messages`, the envelope of the captures without the delivery-time fields (BaseUrl, token). */
export function messagesEvent(chat: ChatRow, row: MessageRow, who: InstanceIdentity, groupName: string): NewOutboxEvent {
  const payload: MessagesEventPayload = {
    EventType: 'messages',
    chat: toChatRecord(chat, who.owner),
    chatSource: 'updated',
    instanceName: who.instanceName,
    message: { ...toMessageRecord(row, who.owner), groupName: row.isGroup ? groupName || 'Unknown' : 'Unknown' },
    owner: who.owner,
  };
  return { eventType: 'messages', chatId: chatKey(chat), payload };
}

export interface MessageUpdateFacts {
  rows: MessageRow[];
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
  const payload: MessagesUpdateEventPayload = {
    EventType: 'messages_update',
    type: facts.type,
    state: facts.state,
    event: {
      MessageIDs: facts.rows.map((row) => row.messageId),
      Chat: first.chatId || first.chatLid,
      Sender: facts.sender.jid,
      sender_pn: facts.sender.pn,
      sender_lid: facts.sender.lid,
      IsFromMe: TRUE_FALSE(first.fromMe),
      IsGroup: TRUE_FALSE(first.isGroup),
      Timestamp: String(Math.floor(facts.timestamp)),
      Type: facts.state,
    },
    ...(facts.error ? { error: facts.error } : {}),
    instanceName: who.instanceName,
    owner: who.owner,
  };
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
  return {
    eventType: 'history',
    payload: {
      EventType: 'history',
      request_id: facts.requestId,
      syncType: facts.syncType,
      progress: facts.progress,
      isLatest: facts.isLatest,
      counts: { chats: facts.chats, contacts: facts.contacts, messages: facts.messages.length },
      messages: facts.messages.map((row) => toMessageRecord(row, who.owner)),
      instanceName: who.instanceName,
      owner: who.owner,
    },
  };
}

export interface GroupParticipantsFacts {
  groupJid: string;
  subject: string;
  action: 'add' | 'remove' | 'promote' | 'demote';
  author: Party | null;
  members: Party[];
  /** The instance itself was added (uazapi says `JoinedGroup`). */
  joinedByMe: boolean;
}

const GROUP_LISTS = { add: ['Join', 'JoinLid'], remove: ['Leave', 'LeaveLid'], promote: ['Promote', 'PromoteLid'], demote: ['Demote', 'DemoteLid'] } as const;

/** `groups`: participants changed, in the shape of the real captures (groups/*.json). */
export function groupsEvent(facts: GroupParticipantsFacts, who: InstanceIdentity): NewOutboxEvent {
  const [pnList, lidList] = GROUP_LISTS[facts.action];
  const lists: Record<string, string[] | null> = { Join: null, Leave: null, Promote: null, Demote: null };
  lists[pnList] = facts.members.map((member) => member.pn || member.jid);
  lists[lidList] = facts.members.map((member) => member.lid).filter(Boolean);
  const sender = facts.author;
  return {
    eventType: 'groups',
    chatId: facts.groupJid,
    payload: {
      EventType: 'groups',
      event: {
        JID: facts.groupJid,
        Notify: facts.subject,
        Sender: sender ? sender.pn || sender.jid : '',
        SenderPN: sender?.pn ?? '',
        Timestamp: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
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
        JoinReason: '',
        ...lists,
        sender_pn: sender?.pn ?? '',
        sender_lid: sender?.lid ?? '',
      },
      instanceName: who.instanceName,
      owner: who.owner,
      type: facts.joinedByMe ? 'JoinedGroup' : 'Group',
    },
  };
}

/** `call`: an offer, and how it ended (reject, timeout, accept, terminate). */
export function callEvent(call: { id: string; from: string; chatId: string; isGroup?: boolean; groupJid?: string; isVideo?: boolean; status: string; date: Date; offline: boolean }, caller: Party, who: InstanceIdentity): NewOutboxEvent {
  return {
    eventType: 'call',
    chatId: call.chatId,
    payload: {
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
    },
  };
}

/** `labels`: a label of the account changed (the refresh `request_id` is '' for changes the phone made). */
export function labelsEvent(label: { id: string; name: string; color: number; deleted: boolean; predefinedId?: string }, who: InstanceIdentity, requestId = ''): NewOutboxEvent {
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
export function chatLabelsEvent(facts: { chatId: string; labelId: string; action: 'add' | 'remove'; labels: string[] | null }, who: InstanceIdentity, requestId = ''): NewOutboxEvent {
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

/** `newsletter_messages`: a post of a followed channel (views and reactions come with /newsletter/messages, not as events). */
export function newsletterMessagesEvent(row: MessageRow, serverId: string, who: InstanceIdentity): NewOutboxEvent {
  return {
    eventType: 'newsletter_messages',
    chatId: row.chatId,
    payload: {
      EventType: 'newsletter_messages',
      newsletter: row.chatId,
      server_id: serverId,
      message: toMessageRecord(row, who.owner),
      instanceName: who.instanceName,
      owner: who.owner,
    },
  };
}
