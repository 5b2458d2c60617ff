import type { CallPeer, ChatRepository, ContactRepository, MessageRepository, MessageRow, NewMessage, Tx } from '@gw/persistence';
import { recordId } from '@gw/platform';
import type { Party } from './identity-resolver';
import { NOT_SENT_BY_API } from './message-mapper';

/** The repositories a call message is written with. */
export interface CallRepositories {
  messages: MessageRepository;
  contacts: ContactRepository;
  chats: ChatRepository;
}

/** A call as Baileys reports it (`call` event), the fields a call message needs. */
export interface CallFacts {
  id: string;
  from: string;
  chatId: string;
  isGroup?: boolean;
  groupJid?: string;
  isVideo?: boolean;
  status: string;
  date: Date;
  offline: boolean;
}

/**
 * A call is kept as a message of messageType `call` (spec, Message record) under the call's id: the offer
 * stores it, each later state (reject, timeout, accept, terminate) refreshes its `content.status`.
 * `callPeer` is the caller as the instance knows it (its name and picture, when known); it is written
 * once, with the offer. Written within `tx` with the worker's `repositories`.
 */
export async function storeCallWithin(
  repositories: CallRepositories,
  tx: Tx,
  instanceId: string,
  call: CallFacts,
  caller: Party,
): Promise<{ row: MessageRow; created: boolean }> {
  const isGroup = Boolean(call.isGroup && call.groupJid);
  const callerJid = caller.pn || caller.jid || call.from;
  const peer = await knownPeer(repositories, tx, instanceId, caller, callerJid);
  const message: NewMessage = {
    instanceId,
    id: recordId(7),
    messageId: call.id,
    chatId: isGroup ? call.groupJid! : callerJid,
    chatLid: isGroup ? '' : caller.lid,
    sender: caller.jid || callerJid,
    senderPn: caller.pn,
    senderLid: caller.lid,
    senderName: peer.name,
    isGroup,
    fromMe: false,
    messageType: 'call',
    type: 'call',
    mediaType: '',
    source: '',
    messageTimestamp: call.date instanceof Date && !Number.isNaN(call.date.getTime()) ? call.date.getTime() : Date.now(),
    status: '',
    text: '',
    quoted: '',
    edited: '',
    reaction: '',
    vote: '',
    buttonOrListId: '',
    content: { callId: call.id, isVideo: Boolean(call.isVideo), isGroup, groupJid: isGroup ? call.groupJid : '', status: call.status, offline: call.offline },
    raw: null,
    ...NOT_SENT_BY_API,
    callPeer: peer,
  };
  return repositories.messages.within(tx).upsert(message);
}

/** The caller's saved, push or business name and its chat picture, as far as the instance knows them. */
async function knownPeer(repositories: CallRepositories, tx: Tx, instanceId: string, caller: Party, callerJid: string): Promise<CallPeer> {
  const ids = [caller.pn, caller.lid, caller.jid].filter(Boolean);
  const contact = await repositories.contacts.within(tx).knownNames(instanceId, ids);
  const imagePreviewUrl = await repositories.chats.within(tx).imagePreview(instanceId, ids);
  return {
    jid: callerJid,
    name: contact ? contact.contactName || contact.pushName || contact.verifiedName || '' : '',
    imagePreviewUrl,
  };
}
