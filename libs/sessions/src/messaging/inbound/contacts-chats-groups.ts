import { type ChatRow, type ContactRow } from '@gw/persistence';
import { recordId } from '@gw/platform';
import type { BaileysEventMap, Contact, GroupMetadata } from '../../baileys';
import { chatsEvent, contactsEvent, groupSettingEvent, groupsEvent, joinedGroupEvent } from '../event-payloads';
import { isLid, isPhoneJid, userJid } from '../identity-resolver';
import { chatTimers } from '../../outbound/chat-timers';
import { readNotes } from '../chat-notes';
import { answerWhileRead } from '../answer-while-read';
import { readQuickReplies } from '../quick-replies';
import { chatWriteKey, contactWriteKey, senderObservationKeys, type InboundContext } from './inbound-context';
import { observePushName } from './message-places';

/** A group change Baileys does not report (see ContactChatGroupEvents.onGroupChange). */
export interface GroupChange {
  author?: string;
  authorPn?: string;
  picture?: { remove: boolean; id: string };
  link?: { change: 'link' | 'unlink'; type: string; reason: string; jid: string; name: string; defaultSub: boolean };
  ephemeralSeconds?: number;
}

/** How long a JoinedGroup event waits for the group's metadata before it goes out with what is known. */
const GROUP_METADATA_TIMEOUT_MS = 5_000;
/** How long WhatsApp is given to answer a picture's URL. */
const PICTURE_URL_TIMEOUT_MS = 5_000;

/** Contacts, LID pairs, chat settings and groups of one socket. */
export class ContactChatGroupEvents {
  constructor(private readonly context: InboundContext) {}

  /** Whether onContacts writes at most once for these (no picture changed): it may then run pipelined (InboundQueue). */
  static writesOnce(contacts: Array<Partial<Contact>>): boolean {
    return !contacts.some(isPictureChange);
  }

  async onContacts(contacts: Array<Partial<Contact>>): Promise<void> {
    const me = this.context.identities.me();
    const pictures = contacts.filter(isPictureChange);
    if (pictures.length) await this.onPictures(pictures.map((contact) => ({ jid: userJid(contact.id), removed: contact.imgUrl === 'removed' })));
    const observations: Array<{ pn: string; lid: string; contactName?: string; pushName?: string; verifiedName?: string; notifyOnly: boolean }> = [];
    for (const contact of contacts) {
      const id = userJid(contact.id);
      if (!id || (!isLid(id) && !isPhoneJid(id)) || id === me.pn || id === me.lid) continue;
      const alternate = isLid(id) ? contact.phoneNumber : contact.lid;
      const party = await this.context.identities.party(id, alternate);
      observations.push({
        pn: party.pn,
        lid: party.lid,
        contactName: contact.name || undefined,
        pushName: contact.notify || undefined,
        verifiedName: contact.verifiedName || undefined,
        notifyOnly: isNotifyOnly(contact),
      });
    }
    if (!observations.length) return;
    // Every one of them a push name that a committed message write stored already: nothing to write.
    if (
      observations.every(
        (observation) => observation.notifyOnly && this.context.senders.covers(null, [observation.pn, observation.lid], observation.pushName as string),
      )
    )
      return;
    const who = await this.context.who();
    // What it touches: these contacts and their 1:1 chats (a saved name). Named, it shares a wave with writes
    // about other messages and chats: a received message's push name comes again as this event right after
    // it, and without keys it went in a wave of its own between every two messages of a busy account. A push
    // name alone is observed as the message's write observes its sender (senderObservationKeys, once).
    const keys = observations.flatMap((observation) =>
      observation.notifyOnly
        ? senderObservationKeys([observation.pn, observation.lid], observation.pushName as string)
        : [observation.pn, observation.lid].filter(Boolean).flatMap((jid) => [contactWriteKey(jid), chatWriteKey(jid)]),
    );
    await this.context.withRetry('contacts', { count: observations.length }, () =>
      this.context.write(async (tx, events) => {
        const changed: ContactRow[] = [];
        const chats: ChatRow[] = [];
        for (const observation of observations) {
          const ids = [observation.pn, observation.lid];
          // The push name a received message brought, which the message's own write stored already.
          if (observation.notifyOnly && this.context.senders.covers(tx, ids, observation.pushName as string)) continue;
          this.context.senders.forget(ids);
          const { contact, changed: isNew } = observation.notifyOnly
            ? await observePushName(this.context, tx, observation, observation.pushName as string)
            : await this.context.services.contacts.within(tx).observe(this.context.instanceId, {
                jid: observation.pn,
                lid: observation.lid,
                contactName: observation.contactName,
                pushName: observation.pushName,
                verifiedName: observation.verifiedName,
              });
          if (!isNew) continue;
          changed.push(contact);
          if (observation.contactName) {
            const chat = await this.context.services.chats
              .within(tx)
              .applyState(this.context.instanceId, contact.jid, { waContactName: observation.contactName });
            if (chat) chats.push(chat);
          }
        }
        if (changed.length) events.push(contactsEvent(changed, who));
        if (chats.length) events.push(chatsEvent(chats, who));
      }, keys),
    );
  }

  /**
   * Another device (the phone) changed the app-state collection chat notes live in: the notes are read again (what
   * came since the last read: here, outside the socket's queue, ADR 0065; null when unread) and each chat whose note
   * changed is stored with its `chats` event (storeNotes, on the queue). Baileys drops notes.
   */
  async readNotesChange(): Promise<Awaited<ReturnType<typeof readNotes>> | null> {
    try {
      return await readNotes(this.context.socket, false);
    } catch (error) {
      this.context.logger.debug({ err: error }, 'chat notes not read after a server sync');
      return null;
    }
  }

  /** Each chat whose note changed is stored with its `chats` event (on the socket's queue). */
  async storeNotes(notes: Awaited<ReturnType<typeof readNotes>>): Promise<void> {
    // One note per chat: the newest.
    const byChat = new Map<string, string>();
    for (const note of [...notes].sort((a, b) => a.createdAt - b.createdAt)) byChat.set(userJid(note.chatJid) || note.chatJid, note.text);
    if (!byChat.size) return;
    const who = await this.context.who();
    await this.context.withRetry('chat notes', { count: byChat.size }, () =>
      this.context.write(async (tx, events) => {
        const chats: ChatRow[] = [];
        for (const [jid, text] of byChat) {
          const chat = await this.context.services.chats.within(tx).applyState(this.context.instanceId, jid, { notes: text });
          if (chat) chats.push(chat);
        }
        if (chats.length) events.push(chatsEvent(chats, who));
      }),
    );
  }

  /**
   * Another device (the Business app on the phone) changed the app-state collection quick replies live in:
   * they are read again (what came since the last read: here, outside the socket's queue, ADR 0065; null when
   * unread) and the stored replies made to agree with the phone's (storeQuickReplies, on the queue), as
   * `/quickreply/showall` does, without waiting for it. Baileys drops quick replies.
   */
  async readQuickRepliesChange(): Promise<Awaited<ReturnType<typeof readQuickReplies>> | null> {
    try {
      return await readQuickReplies(this.context.socket);
    } catch (error) {
      this.context.logger.debug({ err: error }, 'quick replies not read after a server sync');
      return null;
    }
  }

  /** The stored quick replies made to agree with the phone's (on the socket's queue). */
  async storeQuickReplies(replies: Awaited<ReturnType<typeof readQuickReplies>>): Promise<void> {
    const phone = replies.map((reply) => ({ waId: reply.waId, shortCut: reply.shortcut, text: reply.message }));
    await this.context.withRetry('quick replies', { count: phone.length }, () =>
      this.context.write(async (tx) => {
        await this.context.services.quickReplies.within(tx).syncFromWhatsApp(this.context.instanceId, phone);
      }),
    );
  }

  /**
   * The instance's own picture as WhatsApp serves it now becomes its `profilePicUrl` ('' when it has
   * none): at login, and when the phone or another device changed it.
   */
  async onOwnPicture(): Promise<void> {
    const me = this.context.identities.me();
    if (!me.pn) return;
    let url: string;
    try {
      // Not waited for while the socket is not read (a reconnect's flood in front of the answer: ADR 0065).
      const answer = await this.whileRead(this.context.socket.profilePictureUrl(me.pn, 'image', PICTURE_URL_TIMEOUT_MS), PICTURE_URL_TIMEOUT_MS);
      if (answer === null) return;
      url = answer ?? '';
    } catch (error) {
      // WhatsApp's 404: no picture. Anything else says nothing about it.
      if ((error as { data?: unknown })?.data !== 404) return this.context.logger.debug({ err: error }, 'own picture not read');
      url = '';
    }
    // The same as stored (most logins): nothing to write (issue #38: a statement less per connect).
    const stored = this.context.ownPicture;
    if (stored?.url === url) return;
    // Under the lease, as every write of the session's state (one statement; the row it answers is not needed here).
    await this.context.services.instances.applySessionChange(this.context.lease, { profilePicUrl: url });
    if (stored) stored.url = url;
  }

  /**
   * A contact's (or group's) picture changed or was removed (WhatsApp's picture notification, Baileys'
   * contacts.update imgUrl): the chat's `image` and `imagePreview` become the URLs WhatsApp answers now.
   */
  private async onPictures(changes: Array<{ jid: string; removed: boolean }>): Promise<void> {
    const me = this.context.identities.me();
    // '' when WhatsApp says there is none (its 404); null when the answer says nothing (a timeout, or the
    // socket not read: a flood in front of the answer, ADR 0065): the stored picture is then left as it is.
    const url = (jid: string, type: 'image' | 'preview') =>
      this.whileRead(this.context.socket.profilePictureUrl(jid, type, PICTURE_URL_TIMEOUT_MS), PICTURE_URL_TIMEOUT_MS).then(
        (found) => (found === null ? null : (found ?? '')),
        (error: unknown) => ((error as { data?: unknown })?.data === 404 ? '' : null),
      );
    if (changes.some(({ jid }) => jid && (jid === me.pn || jid === me.lid))) await this.onOwnPicture();
    const states: Array<{ jid: string; image: string; imagePreview: string }> = [];
    for (const { jid, removed } of changes) {
      if (!jid || jid === me.pn || jid === me.lid) continue;
      if (removed) {
        states.push({ jid, image: '', imagePreview: '' });
        continue;
      }
      const image = await url(jid, 'image');
      const imagePreview = image === null ? null : await url(jid, 'preview');
      if (image === null || imagePreview === null) {
        this.context.logger.debug({ jid }, 'contact picture not read: the stored one stays');
        continue;
      }
      states.push({ jid, image, imagePreview });
    }
    if (!states.length) return;
    const who = await this.context.who();
    await this.context.withRetry('contacts.update picture', { count: states.length }, () =>
      this.context.write(async (tx, events) => {
        const chats: ChatRow[] = [];
        for (const { jid, ...state } of states) {
          const chat = await this.context.services.chats.within(tx).applyState(this.context.instanceId, jid, state);
          if (chat) chats.push(chat);
        }
        if (chats.length) events.push(chatsEvent(chats, who));
      }),
    );
  }

  /**
   * The instance saved (`name`) or removed (null) a contact in the phone's address book. Baileys tells
   * a saved name as contacts.upsert, but a removal only as an upsert without a name, so the op says it.
   */
  async onAddressBook(jid: string, name: string | null): Promise<void> {
    const who = await this.context.who();
    await this.context.write(async (tx, events) => {
      const contact = await this.context.services.contacts.within(tx).setAddressBook(this.context.instanceId, jid, name);
      if (!contact) return;
      events.push(contactsEvent([contact], who));
      const chat = await this.context.services.chats.within(tx).applyState(this.context.instanceId, contact.jid, { waContactName: name ?? '' });
      if (chat) events.push(chatsEvent([chat], who));
    });
  }

  /** A LID ↔ number pair: stored, and a contact or chat known under both becomes one. */
  async onLidMapping(lid: string, pn: string): Promise<void> {
    this.context.identities.learn(lid, pn);
    const pair = { lid: userJid(lid), pn: userJid(pn) };
    if (!isLid(pair.lid) || !isPhoneJid(pair.pn)) return;
    await this.context.withRetry('lid-mapping.update', pair, () =>
      this.context.write(async (tx) => {
        const chats = this.context.services.chats.within(tx);
        const known = (await chats.findByJid(this.context.instanceId, pair.pn)) ?? (await chats.findByJid(this.context.instanceId, pair.lid));
        if (known) await chats.observe(this.context.instanceId, { waChatId: pair.pn, waChatLid: pair.lid }, () => recordId(14));
      }),
    );
  }

  /** Chat settings from the phone (app state): archive, pin, mute, read or unread; a disappearing-messages change. Other message-driven updates are ignored. */
  async onChatUpdates(updates: BaileysEventMap['chats.update']): Promise<void> {
    const changes = updates
      .map((update) => ({
        jid: userJid(update.id) || update.id || '',
        state: {
          archived: typeof update.archived === 'boolean' ? update.archived : undefined,
          pinned: update.pinned === undefined ? undefined : Boolean(update.pinned),
          muteEndTime: update.muteEndTime === undefined ? undefined : Number(update.muteEndTime ?? 0),
          unreadCount: update.unreadCount === 0 ? 0 : undefined,
          // Baileys' -1: marked unread (by the API, the phone or another device).
          markedUnread: update.unreadCount === -1 ? true : undefined,
          ephemeralExpiration: update.ephemeralExpiration === undefined ? undefined : Number(update.ephemeralExpiration ?? 0),
        },
      }))
      .filter((change) => change.jid && Object.values(change.state).some((value) => value !== undefined));
    if (!changes.length) return;
    const who = await this.context.who();
    await this.context.withRetry('chats.update', { count: changes.length }, () =>
      this.context.write(async (tx, events) => {
        const chats: ChatRow[] = [];
        for (const change of changes) {
          const chat = await this.context.services.chats.within(tx).applyState(this.context.instanceId, change.jid, change.state);
          if (chat) chats.push(chat);
        }
        if (chats.length) events.push(chatsEvent(chats, who));
      }),
    );
    // A disappearing-messages timer changed (by the contact, the phone or a send of ours): sends read the stored one again.
    if (changes.some((change) => change.state.ephemeralExpiration !== undefined)) chatTimers.forget(this.context.instanceId);
  }

  /** Someone joined, left, was promoted or demoted: a `groups` event in the captures' shape. */
  async onGroupParticipants(update: BaileysEventMap['group-participants.update']): Promise<void> {
    if (!update.id || update.action === 'modify') return;
    const group = await this.context.groupInfo(update.id);
    const author = update.author ? await this.context.identities.party(update.author, update.authorPn) : null;
    const members = await Promise.all((update.participants ?? []).map((participant) => this.context.identities.party(participant.id, participant.phoneNumber)));
    const me = this.context.identities.me();
    const who = await this.context.who();
    const joinedByMe = update.action === 'add' && members.some((member) => (member.pn && member.pn === me.pn) || (member.lid && member.lid === me.lid));
    // The instance itself joined: `JoinedGroup` carries the whole group, as WhatsApp describes it now.
    const metadata = joinedByMe ? await this.groupMetadata(update.id) : null;
    await this.context.withRetry('group-participants.update', { group: update.id }, () =>
      this.context.write(async (_manager, events) => {
        events.push(
          joinedByMe
            ? joinedGroupEvent({ groupJid: update.id, author, me, metadata, subject: group?.subject ?? '', members }, who)
            : groupsEvent(
                { groupJid: update.id, subject: group?.subject ?? '', action: update.action as 'add' | 'remove' | 'promote' | 'demote', author, members },
                who,
              ),
        );
      }),
    );
  }

  /** WhatsApp's answer to a query asked inside the socket's queue: null after `timeoutMs`, or once the socket is not read (ADR 0065). */
  private whileRead<T>(query: Promise<T>, timeoutMs: number): Promise<T | null> {
    return answerWhileRead(query, timeoutMs, () => this.context.readingStuck());
  }

  /** The group's full metadata, fresh (null when WhatsApp does not answer in time, or while the socket is not read). */
  private async groupMetadata(groupJid: string): Promise<GroupMetadata | null> {
    try {
      return await this.whileRead(this.context.socket.groupMetadata(groupJid), GROUP_METADATA_TIMEOUT_MS);
    } catch (error) {
      this.context.logger.debug({ err: error, groupJid }, 'group metadata unavailable for JoinedGroup');
      return null;
    }
  }

  /** Group subject and announce changes: the cached name and the chat row follow. */
  async onGroupUpdates(updates: BaileysEventMap['groups.update']): Promise<void> {
    await this.onGroupSettings(updates);
    const changes = updates.filter((update) => update.id && (update.subject !== undefined || update.announce !== undefined));
    for (const update of changes)
      if (update.subject !== undefined) this.context.services.groups.rename(this.context.instanceId, update.id!, update.subject ?? '');
    if (!changes.length) return;
    const who = await this.context.who();
    await this.context.withRetry('groups.update', { count: changes.length }, () =>
      this.context.write(async (tx, events) => {
        const chats: ChatRow[] = [];
        for (const update of changes) {
          const chat = await this.context.services.chats.within(tx).applyState(this.context.instanceId, update.id!, {
            waName: update.subject ?? undefined,
            groupFlags: update.announce === undefined ? undefined : { announce: Boolean(update.announce) },
          });
          if (chat) chats.push(chat);
        }
        if (chats.length) events.push(chatsEvent(chats, who));
      }),
    );
  }

  /** A rename, description, announce or locked change, an invite link reset or join approval turned on or off: a `groups` event naming the change. */
  private async onGroupSettings(updates: BaileysEventMap['groups.update']): Promise<void> {
    const changes = updates.filter(
      (update) =>
        update.id &&
        // Baileys emits every group it reads in full (groupFetchAllParticipating, at login and for /group/list): a read, not a change.
        !Array.isArray((update as Partial<GroupMetadata>).participants) &&
        (typeof update.inviteCode === 'string' ||
          typeof update.joinApprovalMode === 'boolean' ||
          typeof update.subject === 'string' ||
          'desc' in update ||
          typeof update.restrict === 'boolean' ||
          typeof update.announce === 'boolean' ||
          typeof update.memberAddMode === 'boolean'),
    );
    if (!changes.length) return;
    const who = await this.context.who();
    const facts = await Promise.all(
      changes.map(async (update) => ({
        groupJid: update.id!,
        subject: (await this.context.groupInfo(update.id!))?.subject ?? '',
        author: update.author ? await this.context.identities.party(update.author, update.authorPn) : null,
        inviteCode: typeof update.inviteCode === 'string' ? update.inviteCode : undefined,
        joinApproval: typeof update.joinApprovalMode === 'boolean' ? update.joinApprovalMode : undefined,
        name: typeof update.subject === 'string' ? update.subject : undefined,
        topic: 'desc' in update ? (update.desc ?? '') : undefined,
        locked: typeof update.restrict === 'boolean' ? update.restrict : undefined,
        announce: typeof update.announce === 'boolean' ? update.announce : undefined,
        memberAddMode: typeof update.memberAddMode === 'boolean' ? (update.memberAddMode ? ('all_member_add' as const) : ('admin_add' as const)) : undefined,
      })),
    );
    await this.context.withRetry('groups.update', { count: facts.length }, () =>
      this.context.write(async (_manager, events) => {
        for (const fact of facts) events.push(groupSettingEvent(fact, who));
      }),
    );
  }

  /**
   * What Baileys turns into no event: a group's picture set or removed (`picture` notification), a community link
   * made or undone (`link` / `unlink` in a w:gp2 notification), disappearing messages turned on or off (Baileys makes
   * a protocol message of it): a `groups` event naming the change.
   */
  async onGroupChange(groupJid: string, change: GroupChange): Promise<void> {
    if (!groupJid.endsWith('@g.us')) return;
    const group = await this.context.groupInfo(groupJid);
    const author = change.author ? await this.context.identities.party(change.author, change.authorPn) : null;
    const who = await this.context.who();
    await this.context.withRetry('group change', { group: groupJid }, () =>
      this.context.write(async (_manager, events) => {
        events.push(
          groupSettingEvent(
            {
              groupJid,
              subject: group?.subject ?? '',
              author,
              ...(change.picture ? { picture: change.picture } : {}),
              ...(change.link ? { link: change.link } : {}),
              ...(change.ephemeralSeconds === undefined ? {} : { ephemeralSeconds: change.ephemeralSeconds }),
            },
            who,
          ),
        );
      }),
    );
  }

  /** A join request created, withdrawn or rejected (told to the group's admins): a `groups` event naming it. */
  async onJoinRequest(update: BaileysEventMap['group.join-request']): Promise<void> {
    if (!update.id || !['created', 'revoked', 'rejected'].includes(update.action)) return;
    const group = await this.context.groupInfo(update.id);
    const member = await this.context.identities.party(update.participant, update.participantPn);
    const actor = update.author ? await this.context.identities.party(update.author, update.authorPn) : null;
    const who = await this.context.who();
    const request = { action: update.action as 'created' | 'revoked' | 'rejected', member, method: update.method ?? '' };
    await this.context.withRetry('group.join-request', { group: update.id }, () =>
      this.context.write(async (_manager, events) => {
        events.push(groupSettingEvent({ groupJid: update.id, subject: group?.subject ?? '', author: actor, request }, who));
      }),
    );
  }
}

/** An update that says nothing but a push name (`{ id, notify }`): what Baileys emits after each received message that has one. */
function isNotifyOnly(contact: Partial<Contact>): boolean {
  return (
    Boolean(contact.notify) &&
    Object.entries(contact).every(([field, value]) => field === 'id' || field === 'notify' || value === undefined || value === null || value === '')
  );
}

function isPictureChange(contact: Partial<Contact>): boolean {
  return Boolean(contact.id) && (contact.imgUrl === 'changed' || contact.imgUrl === 'removed');
}
