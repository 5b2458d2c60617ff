import { Inject, Injectable } from '@nestjs/common';
import { Bus } from '@gw/bus';
import { ErrorCode, RpcError, Subjects, type ChatsEventPayload, type InstanceRpc } from '@gw/contracts';
import { parseChatTarget } from '@gw/domain';
import {
  BlocklistRepository,
  CHAT_FIELDS,
  ChatRepository,
  LabelRepository,
  LidMappingRepository,
  MessageRepository,
  toChatRecord,
  type ChatComparison,
  type ChatField,
  type ChatFilter,
  type ChatIdentity,
  type ChatRow,
  type NewOutboxEvent,
} from '@gw/persistence';
import { recordId } from '@gw/platform';
import { ApiError, rpcErrorMessage } from '../common/api-error';
import { pageWindow } from '../common/paging';
import { BUS } from '../runtime/tokens';
import { SessionClient } from '../session/session.client';
import type { BlockDto, ChatLabelsDto } from './dto/chat.dto';
import { LEAD_FIELDS, type EditLeadDto } from './dto/edit-lead.dto';
import type { FindChatsDto } from './dto/find-chats.dto';
import { ephemeralDuration } from '../group/group.service';
import type {
  ChatArchiveDto,
  ChatDeleteDto,
  ChatEphemeralDto,
  ChatMuteDto,
  ChatNotesDto,
  ChatNotesEditDto,
  ChatNotesRefreshDto,
  ChatPinDto,
  ChatReadDto,
} from './dto/chat-state.dto';
import type { ChatPageResponse, ChatResponse } from '../common/dto/chat.response';
import type { ReplyResponse } from '../common/dto/reply.response';
import type {
  BlocklistResponse,
  ChatDeletedResponse,
  ChatEphemeralResponse,
  ChatLabelsResponse,
  ChatNotesEditedResponse,
  ChatNotesResponse,
} from './dto/chat.response';
import type { RequestInstance } from '../common/request-instance';

type ChatModify = InstanceRpc['chat.modify']['request'];

const NOTES_OF_GROUPS = 'notes are kept for 1:1 chats: give a phone number, a user JID or a LID';

/** The chat's JIDs, its number first (a new note is made on it). */
const jidsOf = (identity: ChatIdentity): string[] => [identity.pn, identity.lid].filter(Boolean);

/** A worker failure that is not the caller's (no session, history sync, WhatsApp's refusal pass as they are) answered as 500 `message`. */
function internalAs(message: string) {
  return (error: unknown): never => {
    if (error instanceof RpcError && error.code === ErrorCode.Internal) throw new ApiError('internal', message);
    throw error;
  };
}

const INVALID_CHAT = 'Invalid id: give the chat as wa_chatid (…@s.whatsapp.net, …@lid, …@g.us), wa_fastid (owner:number) or an international phone number';

/** A chat's labels (`/chat/labels`), the blocklist (`/chat/block`, `/chat/blocklist`) and the lead store (`/chat/editLead`, `/chat/find`). */
@Injectable()
export class ChatService {
  constructor(
    private readonly labels: LabelRepository,
    private readonly blocklistEntries: BlocklistRepository,
    private readonly sessions: SessionClient,
    private readonly chatRows: ChatRepository,
    private readonly lidMappings: LidMappingRepository,
    private readonly messageRows: MessageRepository,
    @Inject(BUS) private readonly bus: Bus,
  ) {}

  /** Pins or unpins the chat in the phone's chat list (app state). */
  async pin(instance: RequestInstance, dto: ChatPinDto): Promise<ReplyResponse> {
    await this.modifyChat(instance, dto.number, dto.pin ? 'pin' : 'unpin');
    return { response: dto.pin ? 'Chat pinned' : 'Chat unpinned' };
  }

  /** Archives or unarchives the chat, up to its last message. */
  async archive(instance: RequestInstance, dto: ChatArchiveDto): Promise<ReplyResponse> {
    await this.modifyChat(instance, dto.number, dto.archive ? 'archive' : 'unarchive');
    return { response: 'Chat updated successfully' };
  }

  /** Marks the chat read (its unread count goes to 0) or unread, up to its last message. */
  async read(instance: RequestInstance, dto: ChatReadDto): Promise<ReplyResponse> {
    await this.modifyChat(instance, dto.number, dto.read ? 'read' : 'unread');
    return { response: 'Chat read status updated successfully' };
  }

  /** Mutes the chat for `muteEndTime` hours from now (-1 for ever), or unmutes it (0). */
  async mute(instance: RequestInstance, dto: ChatMuteDto): Promise<ReplyResponse> {
    const hours = dto.muteEndTime;
    await this.modifyChat(instance, dto.number, hours === 0 ? 'unmute' : 'mute', hours === -1 ? -1 : Date.now() + hours * 3_600_000);
    return { response: 'Chat mute settings updated successfully' };
  }

  /**
   * Deletes or clears the chat on WhatsApp (clearing wins when both are asked; a group's chat is only cleared) and its
   * stored row and messages, as asked. A WhatsApp failure is answered as its error unless stored data was to go too:
   * then it is listed in `errors` and the rest is done.
   */
  async deleteChat(instance: RequestInstance, dto: ChatDeleteDto): Promise<ChatDeletedResponse> {
    const { jid, isGroup } = this.chatJid(dto.number);
    if (!dto.deleteChatDB && !dto.deleteMessagesDB && !dto.deleteChatWhatsApp && !dto.clearChatWhatsApp)
      throw ApiError.badRequest('set at least one of deleteChatDB, deleteMessagesDB, deleteChatWhatsApp, clearChatWhatsApp');
    const actions: string[] = [];
    const errors: string[] = [];
    const clear = dto.clearChatWhatsApp === true || (dto.deleteChatWhatsApp === true && isGroup);
    if (clear || dto.deleteChatWhatsApp) {
      try {
        await this.modifyChat(instance, dto.number, clear ? 'clear' : 'delete');
        actions.push(
          clear
            ? dto.clearChatWhatsApp
              ? 'Chat cleared on WhatsApp'
              : 'Group chat cleared on WhatsApp (a group chat is not deleted)'
            : 'Chat deleted from WhatsApp',
        );
      } catch (error) {
        if (!(error instanceof RpcError) || (!dto.deleteChatDB && !dto.deleteMessagesDB)) throw error;
        errors.push(`Error ${clear ? 'clearing' : 'deleting'} chat on WhatsApp: ${rpcErrorMessage(error.code, error.message)}`);
      }
    }
    const jids = await this.bothJids(instance, jid, isGroup);
    if (dto.deleteChatDB) actions.push((await this.chatRows.deleteByJids(instance.id, jids)) ? 'Chat deleted from database' : 'Chat not found in database');
    if (dto.deleteMessagesDB) actions.push(`Messages associated with chat deleted from database: ${await this.messageRows.deleteForChat(instance.id, jids)}`);
    return { response: 'Chat deletion process completed', actions, errors };
  }

  /**
   * `POST /chat/ephemeral`: turns disappearing messages of a 1:1 chat on (1, 7 or 90 days) or off, with
   * the protocol message WhatsApp sends to the contact; the chat (made if the contact had none yet)
   * keeps the timer in `wa_ephemeralExpiration` and its `chats` event follows.
   */
  async ephemeral(instance: RequestInstance, dto: ChatEphemeralDto): Promise<ChatEphemeralResponse> {
    const identity = await this.userChat(instance, dto.number, 'disappearing messages of a group are set with /group/ephemeral');
    let timer: { seconds: number; label: string };
    try {
      timer = ephemeralDuration(dto.duration);
    } catch {
      throw ApiError.badRequest('invalid duration. Allowed values: 0, off, 1d, 7d, 90d');
    }
    const { seconds, label } = timer;
    await this.sessions.request(instance.id, 'chat.ephemeral', { instanceId: instance.id, chatJid: identity.pn || identity.lid, seconds });
    const written = await this.chatRows.writeState(
      instance.id,
      identity,
      { ephemeralExpiration: seconds },
      { create: () => recordId(14), announce: (row) => chatsEvent(instance, row) },
    );
    this.wake(instance, written?.lastEventId);
    return {
      response: 'Ephemeral timer updated successfully',
      chat: written ? toChatRecord(written.chat, instance.owner ?? '') : null,
      ephemeral: { enabled: seconds > 0, seconds, label: seconds > 0 ? label : 'off' },
    };
  }

  /** `POST /chat/notes`: the chat's note as stored (also while the instance is away). */
  async notes(instance: RequestInstance, dto: ChatNotesDto): Promise<ChatNotesResponse> {
    const chat = await this.storedUserChat(instance, await this.userChat(instance, dto.number, NOTES_OF_GROUPS));
    return { chat: toChatRecord(chat, instance.owner ?? ''), wa_notes: chat.notes, source: 'local' as const };
  }

  /** `POST /chat/notes/refresh`: reads the chat's note from WhatsApp's app state, stores it (with a `chats` event when it changed) and answers it. */
  async refreshNotes(instance: RequestInstance, dto: ChatNotesRefreshDto): Promise<ChatNotesResponse> {
    const identity = await this.userChat(instance, dto.number, NOTES_OF_GROUPS);
    const { note } = await this.sessions
      .request(instance.id, 'chat.notes.read', { instanceId: instance.id, chatJids: jidsOf(identity), force: dto.force === true })
      .catch(internalAs(`failed to fetch regular_low app state`));
    const chat = await this.writeNotes(instance, identity, note?.text ?? '');
    return { chat: toChatRecord(chat, instance.owner ?? ''), wa_notes: chat.notes, source: 'appstate_reload' as const };
  }

  /** `POST /chat/notes/edit`: writes the chat's note to WhatsApp's app state (the phone and other devices see it), then stores it; '' removes it. */
  async editNotes(instance: RequestInstance, dto: ChatNotesEditDto): Promise<ChatNotesEditedResponse> {
    const identity = await this.userChat(instance, dto.number, NOTES_OF_GROUPS);
    await this.storedUserChat(instance, identity);
    const { note } = await this.sessions
      .request(instance.id, 'chat.notes.edit', { instanceId: instance.id, chatJids: jidsOf(identity), text: dto.notes })
      .catch(internalAs('error editing chat notes'));
    const chat = await this.writeNotes(instance, identity, note.text);
    return { response: 'Chat notes updated', chat: toChatRecord(chat, instance.owner ?? ''), wa_notes: chat.notes, source: 'api' as const };
  }

  private async writeNotes(instance: RequestInstance, identity: ChatIdentity, notes: string): Promise<ChatRow> {
    const written = await this.chatRows.writeState(instance.id, identity, { notes }, { announce: (row) => chatsEvent(instance, row) });
    if (!written) throw ApiError.notFound('chat not found');
    this.wake(instance, written.lastEventId);
    return written.chat;
  }

  /** The stored chat of a contact, else 404 `chat not found`. */
  private async storedUserChat(instance: RequestInstance, identity: ChatIdentity): Promise<ChatRow> {
    const chat =
      (identity.pn ? await this.chatRows.findByJid(instance.id, identity.pn) : null) ??
      (identity.lid ? await this.chatRows.findByJid(instance.id, identity.lid) : null);
    if (!chat) throw ApiError.notFound('chat not found');
    return chat;
  }

  /**
   * The 1:1 chat `number` names (a phone number, a user JID or a LID) with the contact's other identifier
   * when WhatsApp revealed it; a group is a 400 `ofGroup`, anything else 400 `Could not parse phone`.
   */
  private async userChat(instance: RequestInstance, number: string, ofGroup: string): Promise<ChatIdentity> {
    const target = parseChatTarget(number);
    if (target?.kind === 'group') throw ApiError.badRequest(ofGroup);
    if (!target || (target.kind !== 'user' && target.kind !== 'lid')) throw ApiError.badRequest('Could not parse phone');
    if (target.kind === 'lid') return { pn: (await this.lidMappings.pnForLid(instance.id, target.jid)) ?? '', lid: target.jid, isGroup: false };
    return { pn: target.jid, lid: (await this.lidMappings.lidForPn(instance.id, target.jid)) ?? '', isGroup: false };
  }

  /** Wakes the relays for an event just written (they would find it on their next poll anyway). */
  private wake(instance: RequestInstance, lastId: string | null | undefined): void {
    if (lastId) this.bus.publish(Subjects.outbox(instance.id), { instanceId: instance.id, lastId });
  }

  /** The chat's number and LID, when WhatsApp revealed the other. */
  private async bothJids(instance: RequestInstance, jid: string, isGroup: boolean): Promise<string[]> {
    if (isGroup) return [jid];
    const other = jid.endsWith('@lid') ? await this.lidMappings.pnForLid(instance.id, jid) : await this.lidMappings.lidForPn(instance.id, jid);
    return other ? [jid, other] : [jid];
  }

  /** The chat `number` names (a phone number or chat JID), else 400 `Could not parse phone`. */
  private chatJid(number: string): { jid: string; isGroup: boolean } {
    const target = parseChatTarget(number);
    if (!target || target.kind === 'newsletter') throw ApiError.badRequest('Could not parse phone');
    return { jid: target.jid, isGroup: target.kind === 'group' };
  }

  /** An app-state change of the chat; archive, read, clear and delete cover it up to its last stored message. */
  private async modifyChat(instance: RequestInstance, number: string, action: ChatModify['action'], muteEndTime?: number) {
    const { jid } = this.chatJid(number);
    const ranged = action !== 'pin' && action !== 'unpin' && action !== 'mute' && action !== 'unmute';
    const lastMessages = ranged ? await this.lastMessages(instance, jid) : [];
    await this.sessions.request(instance.id, 'chat.modify', { instanceId: instance.id, chatJid: jid, action, muteEndTime, lastMessages });
  }

  /** The chat's newest stored message, as the key WhatsApp's app state names it by. */
  private async lastMessages(instance: RequestInstance, jid: string): Promise<ChatModify['lastMessages']> {
    const { rows } = await this.messageRows.find(instance.id, { chatId: jid, limit: 1, offset: 0 });
    return rows
      .filter((row) => row.messageId && row.messageTimestamp > 0)
      .map((row) => ({
        key: { remoteJid: jid, id: row.messageId, fromMe: row.fromMe, ...(row.isGroup && !row.fromMe && row.sender ? { participant: row.sender } : {}) },
        messageTimestamp: Math.floor(row.messageTimestamp / 1000),
      }));
  }

  /**
   * Writes the lead fields given (absent ones stay) of the chat `id` names, creating the chat when the
   * contact has none yet; answers the Chat record. What placeholders of later sends read.
   */
  async editLead(instance: RequestInstance, dto: EditLeadDto): Promise<ChatResponse> {
    const identity = await this.leadChat(instance, dto.id ?? dto.number ?? dto.phone ?? '');
    const lead: Record<string, unknown> = {};
    const given = { ...dto, lead_personalid: dto.lead_personalid ?? dto.lead_personalId } as Record<string, unknown>;
    for (const field of LEAD_FIELDS) if (given[field] !== undefined) lead[field] = given[field];
    const { chat, lastEventId } = await this.chatRows.writeLead(
      instance.id,
      identity,
      lead,
      () => recordId(14),
      (row) => chatsEvent(instance, row),
    );
    this.wake(instance, lastEventId);
    return toChatRecord(chat, instance.owner ?? '');
  }

  /** Chats matching the filters, a page of them in the order asked, with the totals uazapi answers. */
  async find(instance: RequestInstance, dto: FindChatsDto): Promise<ChatPageResponse> {
    const filters: ChatFilter[] = [];
    const values = dto as unknown as Record<string, string | boolean | undefined>;
    for (const field of Object.keys(CHAT_FIELDS) as ChatField[]) {
      const value = values[field];
      if (value !== undefined) filters.push(chatFilter(field, value));
    }
    const sort = dto.sort ?? '-wa_lastMsgTimestamp';
    const { limit, offset, pagination } = pageWindow(dto, 20);
    const found = await this.chatRows.search(instance.id, instance.owner ?? '', {
      filters,
      operator: dto.operator ?? 'AND',
      sort: { field: sort.replace(/^[+-]/, '') as ChatField, descending: sort.startsWith('-') },
      limit,
      offset,
    });
    return {
      chats: found.rows.map((row) => toChatRecord(row, instance.owner ?? '')),
      totalChatsStats: found.totals,
      pagination: pagination(found.totalRecords),
    };
  }

  /**
   * The chat `id` names: a stored chat's record id or `wa_fastid` (`owner:number`), else a JID or phone
   * number, with the other identifier of the contact (LID or phone number) when WhatsApp revealed it,
   * so that a phone number and its LID are one chat.
   */
  private async leadChat(instance: RequestInstance, id: string): Promise<ChatIdentity> {
    const value = id.trim();
    const stored = /^r[0-9a-f]{7,}$/.test(value)
      ? await this.chatRows.findById(instance.id, value)
      : /^[^@]*:[^@:]+$/.test(value)
        ? await this.chatRows.findByNumber(instance.id, value.slice(value.lastIndexOf(':') + 1).trim())
        : null;
    if (stored) return { pn: stored.waChatId, lid: stored.waChatLid, isGroup: stored.isGroup };
    const target = parseChatTarget(value.includes('@') ? value : value.slice(value.lastIndexOf(':') + 1));
    if (!target || target.kind === 'newsletter') throw ApiError.badRequest(INVALID_CHAT);
    if (target.kind === 'group') return { pn: target.jid, lid: '', isGroup: true };
    if (target.kind === 'lid') return { pn: (await this.lidMappings.pnForLid(instance.id, target.jid)) ?? '', lid: target.jid, isGroup: false };
    return { pn: target.jid, lid: (await this.lidMappings.lidForPn(instance.id, target.jid)) ?? '', isGroup: false };
  }

  /** Sets a chat's labels (`labelids`), or adds or removes one; every label must exist. */
  async setLabels(instance: RequestInstance, dto: ChatLabelsDto): Promise<ChatLabelsResponse> {
    const target = parseChatTarget(dto.number);
    if (!target || target.kind === 'newsletter')
      throw ApiError.badRequest('Invalid number: give an international phone number or a chat JID (@s.whatsapp.net, @lid, @g.us)');
    const modes = [dto.labelids !== undefined, dto.add_labelid !== undefined, dto.remove_labelid !== undefined].filter(Boolean).length;
    if (modes !== 1) throw ApiError.badRequest('use exactly one of labelids, add_labelid, remove_labelid');
    const wanted = dto.labelids ?? [dto.add_labelid ?? dto.remove_labelid ?? ''];
    const known = new Set((await this.labels.list(instance.id)).map((label) => label.labelId));
    const unknown = wanted.find((labelId) => !known.has(labelId));
    if (unknown !== undefined) throw ApiError.badRequest(`label ${unknown || '(empty)'} not found`);
    const request = (add: string[], remove: string[]) =>
      this.sessions.request(instance.id, 'chat.labels', { instanceId: instance.id, chatJid: target.jid, add, remove });
    if (dto.add_labelid !== undefined) {
      await request([dto.add_labelid], []);
      return { response: 'Label added to chat' };
    }
    if (dto.remove_labelid !== undefined) {
      await request([], [dto.remove_labelid]);
      return { response: 'Label removed from chat' };
    }
    const current = (await this.labels.chatLabels(instance.id, target.jid)) ?? [];
    const chosen = new Set(wanted);
    const add = [...chosen].filter((labelId) => !current.includes(labelId));
    const remove = current.filter((labelId) => !chosen.has(labelId));
    if (add.length || remove.length) await request(add, remove);
    return {
      response: 'Labels updated successfully',
      editions: [...add.map((id) => `Added label ${id} to chat`), ...remove.map((id) => `Removed label ${id} from chat`)],
    };
  }

  async block(instance: RequestInstance, dto: BlockDto): Promise<BlocklistResponse> {
    const target = parseChatTarget(dto.number);
    if (!target || (target.kind !== 'user' && target.kind !== 'lid'))
      throw ApiError.badRequest('Invalid number: give an international phone number or a user JID (@s.whatsapp.net, @lid)');
    const reply = await this.sessions.request(instance.id, 'blocklist.set', { instanceId: instance.id, jid: target.jid, block: dto.block });
    return { response: dto.block ? 'Blocked successfully' : 'Unblocked successfully', blockList: reply.blockList };
  }

  /** WhatsApp's list while connected (the stored copy follows it); the stored copy otherwise. */
  async blocklist(instance: RequestInstance): Promise<BlocklistResponse> {
    try {
      return { blockList: (await this.sessions.request(instance.id, 'blocklist.get', { instanceId: instance.id })).blockList };
    } catch (error) {
      if (!(error instanceof RpcError) || (error.code !== ErrorCode.NoSession && error.code !== ErrorCode.NotConnected)) throw error;
      return { blockList: (await this.blocklistEntries.list(instance.id)).map((entry) => entry.jid) };
    }
  }
}

/** The `chats` event of a chat the API changed (the worker's for changes WhatsApp reports). */
export function chatsEvent(instance: RequestInstance, chat: ChatRow): NewOutboxEvent {
  const payload: ChatsEventPayload = {
    EventType: 'chats',
    chats: [toChatRecord(chat, instance.owner ?? '')],
    instanceName: instance.name,
    owner: instance.owner ?? '',
  };
  return { eventType: 'chats', chatId: chat.waChatId || chat.waChatLid, payload };
}

/** A `/chat/find` filter from what the client sent: a boolean, a number, or a value with uazapi's operator prefix. */
function chatFilter(field: ChatField, sent: string | boolean): ChatFilter {
  if (typeof sent === 'boolean') return { field, comparison: 'equals', value: sent };
  const [, prefix = '', rest] = /^(!~|!=|>=|<=|~|>|<)?([\s\S]*)$/.exec(sent) as RegExpExecArray;
  const kind = CHAT_FIELDS[field].kind;
  const ordered: Record<string, ChatComparison> = { '>=': 'gte', '>': 'gt', '<=': 'lte', '<': 'lt' };
  if (kind === 'number') {
    const value = Number(rest.trim());
    const comparison = ordered[prefix] ?? (prefix === '!=' || prefix === '!~' ? 'not_equals' : 'equals');
    return { field, comparison, value };
  }
  if (kind === 'list') {
    const comparison = ({ '': 'equals', '~': 'contains', '!=': 'not_equals', '!~': 'not_contains' } as Record<string, ChatComparison>)[prefix];
    if (!comparison) throw ApiError.badRequest(`${field} takes a value, or ~, !~ or != before it (not ${prefix})`);
    return { field, comparison, value: rest };
  }
  const comparison = ordered[prefix] ?? (prefix === '!=' ? 'not_equals' : prefix === '!~' ? 'not_contains' : 'contains');
  return { field, comparison, value: rest };
}
