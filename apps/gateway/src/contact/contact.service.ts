import { Inject, Injectable } from '@nestjs/common';
import { Bus } from '@gw/bus';
import { ErrorCode, RpcError, Subjects, type InstanceRpc } from '@gw/contracts';
import { parseChatTarget, type ChatTarget } from '@gw/domain';
import { ChatRepository, ContactRepository, LidMappingRepository, toChatRecord, type ChatRow, type ContactRow } from '@gw/persistence';
import { ApiError } from '../common/api-error';
import { pageWindow } from '../common/paging';
import { chatsEvent } from '../chat/chat.service';
import { BUS } from '../runtime/tokens';
import { SessionClient } from '../session/session.client';
import { CONTACT_SCOPES, CONTACT_SCOPE_MESSAGE, INVALID_NUMBER, type ChatCheckDto, type ContactAddDto, type ContactListDto } from './dto/contact.dto';
import type { ChatDetailsDto, ChatNameAndImageDto, ContactNumberDto, ContactScopeName } from './dto/contact.dto';
import type { ChatCheckResponse, ChatDetailsResponse, ChatNameAndImageResponse, ContactAddedResponse, ContactPageResponse } from './dto/contact.response';
import type { ContactRemovedResponse, ContactResponse } from './dto/contact.response';
import type { RequestInstance } from '../common/request-instance';

const view = (row: ContactRow): ContactResponse => ({
  jid: row.jid,
  contact_name: row.contactName,
  contact_FirstName: row.contactName.trim().split(/\s+/)[0] ?? '',
});

/** The user JID of a number for the address book: a phone number or `…@s.whatsapp.net`; never a LID or a group. */
export function addressBookJid(dto: ContactNumberDto): string {
  const target = parseChatTarget(dto.number ?? dto.phone ?? '');
  if (!target || target.kind !== 'user') throw ApiError.badRequest(INVALID_NUMBER);
  return target.jid;
}

const phoneOf = (jid: string) => jid.split('@')[0];

/** Errors the worker answers that are the caller's state (no session, not connected, app state not synced yet) pass; anything else is `failure`. */
function failedAs(failure: string) {
  return (error: unknown): never => {
    if (error instanceof RpcError && ([ErrorCode.NoSession, ErrorCode.NotConnected, ErrorCode.Conflict, ErrorCode.Timeout] as ErrorCode[]).includes(error.code))
      throw error;
    if (error instanceof ApiError) throw error;
    throw new ApiError('internal', failure);
  };
}

/** The phone's address book and the contacts the instance knows: `/contacts`, `/contact/*`, `/chat/check`. */
@Injectable()
export class ContactService {
  constructor(
    private readonly contacts: ContactRepository,
    private readonly sessions: SessionClient,
    private readonly chats: ChatRepository,
    private readonly lidMappings: LidMappingRepository,
    @Inject(BUS) private readonly bus: Bus,
  ) {}

  async listAll(instance: RequestInstance, scope: unknown): Promise<ContactResponse[]> {
    const page = await this.contacts.page(instance.id, this.scopeOf(scope), null, 0);
    return page.rows.map(view);
  }

  async page(instance: RequestInstance, dto: ContactListDto): Promise<ContactPageResponse> {
    const { limit, offset, pagination } = pageWindow(dto, 100);
    const page = await this.contacts.page(instance.id, dto.contactScope ?? 'address_book', limit, offset);
    return { contacts: page.rows.map(view), totalDeviceContacts: page.totalAll, pagination: pagination(page.total) };
  }

  async add(instance: RequestInstance, dto: ContactAddDto): Promise<ContactAddedResponse> {
    const jid = addressBookJid(dto);
    const name = dto.name.trim();
    await this.sessions.request(instance.id, 'contact.add', { instanceId: instance.id, jid, name }).catch(failedAs('error adding contact'));
    return { success: true, message: 'Contact added successfully', contact: { jid, name, phone: phoneOf(jid) } };
  }

  async remove(instance: RequestInstance, dto: ContactNumberDto): Promise<ContactRemovedResponse> {
    const jid = addressBookJid(dto);
    const known = await this.contacts.find(instance.id, jid);
    if (!known || (!known.inAddressBook && !known.contactName)) throw ApiError.notFound('Contact not found in the address book');
    await this.sessions.request(instance.id, 'contact.remove', { instanceId: instance.id, jid }).catch(failedAs('error removing contact'));
    return { success: true, message: 'Contact removed successfully', removed_contact: { jid, phone: phoneOf(jid) } };
  }

  async check(instance: RequestInstance, dto: ChatCheckDto): Promise<ChatCheckResponse[]> {
    if (dto.numbers.length === 0) throw ApiError.badRequest('Missing numbers in payload');
    const targets = dto.numbers.map((query) => ({ query, target: parseChatTarget(query) }));
    const jids = [...new Set(targets.flatMap(({ target }) => (target?.kind === 'user' ? [target.jid] : [])))];
    const { results } = await this.sessions.request(instance.id, 'contact.check', { instanceId: instance.id, jids });
    const byJid = new Map(results.map((result) => [result.query, result]));
    return targets.map(({ query, target }) => {
      if (!target || target.kind !== 'user') return { query, jid: '', lid: '', isInWhatsapp: false, verifiedName: '', groupName: '', error: INVALID_NUMBER };
      const found = byJid.get(target.jid);
      return { query, jid: found?.jid || target.jid, lid: found?.lid ?? '', isInWhatsapp: found?.exists ?? false, verifiedName: '', groupName: '', error: '' };
    });
  }

  /**
   * The stored Chat record of a chat (by number, user JID, LID or group JID; one chat whether stored by
   * number or LID), with `common_groups` and the picture of the size asked for (`imagePreview` with
   * `preview`, else `image`). 404 when the instance has no such chat.
   */
  async details(instance: RequestInstance, dto: ChatDetailsDto): Promise<ChatDetailsResponse> {
    const chat = await this.findChat(instance, dto.number);
    if (!chat) throw ApiError.notFound('Chat not found');
    const fresh = await this.freshPicture(instance, chat, dto.preview ? 'preview' : 'image');
    const common_groups = await this.commonGroups(instance, fresh);
    const { image, imagePreview, ...record } = toChatRecord(fresh, instance.owner ?? '');
    return { ...record, common_groups, ...(dto.preview ? { imagePreview } : { image: image || imagePreview }) };
  }

  /**
   * `POST /chat/GetNameAndImageURL` (uazapi 2.0, called by published integrations): the names and the
   * picture `/chat/details` knows (the picture of the size asked for as WhatsApp serves it now). A number
   * the instance has no chat with answers empty names and the picture WhatsApp serves for it ('' while
   * WhatsApp cannot be asked); nothing is stored for it.
   */
  async nameAndImage(instance: RequestInstance, dto: ChatNameAndImageDto): Promise<ChatNameAndImageResponse> {
    const type = dto.preview ? 'preview' : 'image';
    const chat = await this.findChat(instance, dto.number);
    if (chat) {
      const { name, wa_name, wa_contactName, image, imagePreview } = toChatRecord(await this.freshPicture(instance, chat, type), instance.owner ?? '');
      return { name, wa_name, wa_contactName, image, imagePreview };
    }
    const jid = (parseChatTarget(dto.number) as ChatTarget).jid;
    const url = await this.sessions.request(instance.id, 'chat.picture', { instanceId: instance.id, chatJid: jid, type }).then(
      (reply) => reply.url,
      (error: unknown) => {
        if (error instanceof RpcError) return '';
        throw error;
      },
    );
    return { name: '', wa_name: '', wa_contactName: '', image: type === 'image' ? url : '', imagePreview: type === 'preview' ? url : '' };
  }

  /** The chat of a number, user JID, LID or group JID (one chat whether stored by number or LID); 400 for anything else. */
  private async findChat(instance: RequestInstance, number: string): Promise<ChatRow | null> {
    const target = parseChatTarget(number);
    if (!target || target.kind === 'newsletter') throw ApiError.badRequest(INVALID_NUMBER);
    let chat = await this.chats.findByJid(instance.id, target.jid);
    if (!chat && target.kind === 'user') {
      const lid = await this.lidMappings.lidForPn(instance.id, target.jid);
      if (lid) chat = await this.chats.findByJid(instance.id, lid);
    }
    if (!chat && target.kind === 'lid') {
      const pn = await this.lidMappings.pnForLid(instance.id, target.jid);
      if (pn) chat = await this.chats.findByJid(instance.id, pn);
    }
    return chat;
  }

  /**
   * The chat with its picture of the size asked for as WhatsApp serves it now ('' when it has none or
   * its owner hides it), stored with a `chats` event when it changed; the stored one while WhatsApp
   * cannot be asked (not connected, no answer).
   */
  private async freshPicture(instance: RequestInstance, chat: ChatRow, type: 'image' | 'preview'): Promise<ChatRow> {
    let url: string;
    try {
      ({ url } = await this.sessions.request(instance.id, 'chat.picture', { instanceId: instance.id, chatJid: chat.waChatId || chat.waChatLid, type }));
    } catch (error) {
      if (error instanceof RpcError) return chat;
      throw error;
    }
    const written = await this.chats.writeState(
      instance.id,
      { pn: chat.waChatId, lid: chat.waChatLid, isGroup: chat.isGroup },
      type === 'image' ? { image: url } : { imagePreview: url },
      { announce: (row) => chatsEvent(instance, row) },
    );
    if (written?.lastEventId) this.bus.publish(Subjects.outbox(instance.id), { instanceId: instance.id, lastId: written.lastEventId });
    return written?.chat ?? chat;
  }

  /**
   * The groups the instance is in that the contact is in too, as uazapi writes them: `Name(jid)`, comma
   * separated (WhatsApp's own list, by number or LID). '' for a group chat, and while the instance is
   * not connected (nobody can say).
   */
  private async commonGroups(instance: RequestInstance, chat: ChatRow): Promise<string> {
    if (chat.isGroup) return '';
    const contact = new Set([chat.waChatId, chat.waChatLid].filter(Boolean));
    let groups: InstanceRpc['group.list']['reply']['groups'];
    try {
      ({ groups } = await this.sessions.request(instance.id, 'group.list', { instanceId: instance.id }));
    } catch (error) {
      if (error instanceof RpcError && ([ErrorCode.NoSession, ErrorCode.NotConnected] as ErrorCode[]).includes(error.code)) return '';
      throw error;
    }
    return groups
      .filter((group) => group.Participants.some((member) => [member.JID, member.LID, member.PhoneNumber].some((jid) => jid && contact.has(jid))))
      .map((group) => `${group.Name}(${group.JID})`)
      .join(',');
  }

  private scopeOf(scope: unknown): ContactScopeName {
    if (scope === undefined || scope === '') return 'address_book';
    if (typeof scope === 'string' && (CONTACT_SCOPES as readonly string[]).includes(scope)) return scope as ContactScopeName;
    throw ApiError.badRequest(CONTACT_SCOPE_MESSAGE);
  }
}
