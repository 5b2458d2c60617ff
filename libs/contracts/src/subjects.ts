import type { BrowserChoice, HistoryRequest, InstanceStatus, JidObject } from './instance';
import type { ChatPresenceRequest, HistoryOnDemandRequest, SendRequest } from './send';
import type { SendReply } from './message';
import type { BlockRequest, BlocklistReply, ChatLabelsRequest, LabelEditRequest, LabelRefreshReply, LabelRefreshRequest } from './contact-state';
import type { GroupCreateRequest, GroupInfoReply, GroupInfoRequest, GroupListReply, GroupObject } from './group';
import type {
  GroupInviteRequest,
  GroupJidRequest,
  GroupJoinApprovalRequest,
  GroupJoinReply,
  GroupParticipantsReply,
  GroupParticipantsRequest,
  GroupResetInviteReply,
} from './group';
import type { ChatModifyRequest } from './chat-state';
import type { ContactCheckRequest, ContactCheckResult, ContactRemoveRequest, ContactSaveRequest } from './contact';
import type { GroupDescriptionRequest, GroupEphemeralRequest, GroupMemberAddModeRequest, GroupNameRequest, GroupSettingRequest } from './group';
import type { NewsletterCreateRequest, NewsletterDescriptionRequest, NewsletterInviteRequest, NewsletterJidRequest } from './newsletter';
import type { NewsletterListReply, NewsletterMetadata, NewsletterNameRequest, NewsletterSubscriptionRequest } from './newsletter';
import type { NewsletterMessagesRequest, NewsletterPostRecord } from './newsletter';
import type {
  BusinessCategoryRecord,
  BusinessProfileRecord,
  BusinessProfileRequest,
  BusinessProfileUpdateReply,
  BusinessProfileUpdateRequest,
} from './business';
import type { CallOfferRequest, CallRejectRequest, CatalogProduct, CatalogReply, CatalogRequest, ProductRequest, ProductVisibilityRequest } from './business';
import type { InstanceResetReply, QuickReplySaveRequest, WaMessageLimitsReply, WhatsAppQuickReply } from './business';
import type { NewsletterAdminRequest, NewsletterLiveReply, NewsletterOwnerRequest, NewsletterPictureRequest, NewsletterPostChangeReply } from './newsletter';
import type { NewsletterPostEditRequest, NewsletterPostTarget, NewsletterReactionRequest, NewsletterSearchReply, NewsletterSearchRequest } from './newsletter';
import type { NewsletterSettingsRequest, NewsletterViewedRequest } from './newsletter';
import type { CommunityCreateRequest, CommunityGroupsReply, CommunityGroupsRequest, GroupImageRequest } from './group';

/**
 * Every subject on the bus. Dot-delimited strings; `<id>` is an instance id. The worker that holds an
 * instance's lease subscribes `instance.<id>.*`; when nobody does, a request fails with "no responders"
 * (mapped to ErrorCode.NoSession) instead of timing out.
 */
export const Subjects = {
  /** Request to the holder of one instance. */
  instance: (instanceId: string, op: InstanceOp) => `instance.${instanceId}.${op}` as const,
  /** Queue-group request: any session worker with capacity claims the instance and answers. */
  place: 'sessions.place',
  /** Broadcast to every session worker: reconnect every session gracefully. */
  restartAll: 'sessions.restart',
  /** Notification that outbox rows were written for an instance (payload: OutboxNotice). */
  outbox: (instanceId: string) => `events.${instanceId}` as const,
  outboxWildcard: 'events.*',
  /** Wakes the dispatchers: an async send was queued for the instance, or its queue changed (payload: QueueNotice). */
  queue: (instanceId: string) => `queue.${instanceId}` as const,
  queueWildcard: 'queue.*',
  /** Tells the relays a broker sink was deleted, disabled or changed: they close the connections no enabled sink uses (no payload). */
  sinksChanged: 'sinks.changed',
  /** A draining session worker handed these instances over (payload: LeasesHandedOver): the others adopt them now. */
  leasesHandedOver: 'sessions.handed-over',
  /**
   * Published by the session worker that starts serving an instance, once it subscribed `instance.<id>.>` (no
   * payload): requests waiting out a hand-over or a takeover try again at once instead of at their next retry.
   */
  instanceArrived: (instanceId: string) => `arrived.${instanceId}` as const,
  /**
   * Published by a session worker whose bus is back on a NATS server after losing one (payload: HolderRejoined). A
   * request to one of its instances routed through the lost server, or its reply, was lost with it: a request that
   * is safe to repeat goes again now instead of waiting out its timeout (issue #39: a NATS node killed).
   */
  holderRejoined: 'sessions.rejoined',
} as const;

/** Payload of `Subjects.holderRejoined`. */
export interface HolderRejoined {
  workerId: string;
  /** The instances it holds. */
  instanceIds: string[];
}

/** Payload of `Subjects.leasesHandedOver`. */
export interface LeasesHandedOver {
  /** The worker that drains (it ignores its own notice). */
  workerId: string;
  instanceIds: string[];
  /**
   * The heir it chose for each instance (ADR 0058), by the others' room when its drain began (a rebalance's move:
   * when the move began). Absent from an older worker's notice: the heirs then choose by rendezvous hashing.
   */
  heirs?: Record<string, string>;
}

export type InstanceOp = keyof InstanceRpc;

export interface ConnectRequest {
  instanceId: string;
  /** Digits only; present → pairing code, absent → QR. */
  phone?: string;
  browser: BrowserChoice;
  systemName?: string;
  history: HistoryRequest;
  requestId: string;
}

export interface ConnectReply {
  status: InstanceStatus;
  loggedIn: boolean;
  jid: JidObject | null;
  qrcode: string;
  paircode: string;
  requestId: string;
  /** Why there is no QR code, pairing code or connection yet (e.g. `cannot reach WhatsApp: connect ECONNREFUSED …`). */
  reason?: string;
}

export interface StatusReply {
  status: InstanceStatus;
  loggedIn: boolean;
  jid: JidObject | null;
  /**
   * Asked with `awaiting` (the key of a request the asker still waits for: heldRequestKey): whether this holder took
   * that request (running or answered). Absent when not asked, or from a holder that keeps no keys.
   */
  received?: boolean;
  /** Asked with `awaiting`: whether this holder has sent that request's answer (the asker still waiting lost it). */
  answered?: boolean;
}

/**
 * The key under which a holder keeps a request it took, for the requests that carry their own id (a send: its
 * message id), so that the asker's holder check can ask whether it arrived (`status`'s `awaiting`); null for others.
 */
export function heldRequestKey(op: string, data: unknown): string | null {
  const id = data && typeof data === 'object' ? (data as { messageId?: unknown }).messageId : undefined;
  return op === 'send' && typeof id === 'string' && id.length > 0 ? `${op}:${id}` : null;
}

export interface PresenceRequest {
  presence: 'available' | 'unavailable';
}

/** Who may do something: everyone, saved contacts, saved contacts except those blocked from it, or no one. */
export type PrivacyAudience = 'all' | 'contacts' | 'contact_blacklist' | 'none';

/**
 * The account's privacy settings, under the names uazapiGO answers them (`privacy.get` answers those WhatsApp
 * reported; `privacy.set` takes the ones to change and answers them all again).
 */
export interface PrivacySettings {
  /** Who may add the account to groups. */
  groupadd?: PrivacyAudience;
  /** Who may see when the account was last seen. */
  last?: PrivacyAudience;
  /** Who may see the account's status (the text under its name). */
  status?: PrivacyAudience;
  /** Who may see the account's profile picture. */
  profile?: PrivacyAudience;
  /** Read receipts are sent (`all`) or not (`none`). */
  readreceipts?: 'all' | 'none';
  /** Who may see the account online: everyone, or those who may see its last seen. */
  online?: 'all' | 'match_last_seen';
  /** Who may call the account: everyone, or known contacts. */
  calladd?: 'all' | 'known';
}

/** Each privacy setting and the values it takes. */
type PrivacySettingValues = { readonly [K in keyof PrivacySettings]-?: readonly NonNullable<PrivacySettings[K]>[] };
export const PRIVACY_SETTING_VALUES: PrivacySettingValues = {
  groupadd: ['all', 'contacts', 'contact_blacklist', 'none'],
  last: ['all', 'contacts', 'contact_blacklist', 'none'],
  status: ['all', 'contacts', 'contact_blacklist', 'none'],
  profile: ['all', 'contacts', 'contact_blacklist', 'none'],
  readreceipts: ['all', 'none'],
  online: ['all', 'match_last_seen'],
  calladd: ['all', 'known'],
};

/** The privacy settings' names. */
export const PRIVACY_SETTINGS = Object.keys(PRIVACY_SETTING_VALUES) as ReadonlyArray<keyof PrivacySettings>;

/** `value` when it is one of `values`. */
function oneOf<T extends string>(values: readonly T[], value: unknown): T | undefined {
  return values.find((candidate) => candidate === value);
}

/** The privacy settings `source` gives, each with a value it takes; anything else is left out. */
export function privacySettingsOf(source: { readonly [K in keyof PrivacySettings]?: unknown }): PrivacySettings {
  const values = PRIVACY_SETTING_VALUES;
  const settings: PrivacySettings = {};
  const groupadd = oneOf(values.groupadd, source.groupadd);
  if (groupadd) settings.groupadd = groupadd;
  const last = oneOf(values.last, source.last);
  if (last) settings.last = last;
  const status = oneOf(values.status, source.status);
  if (status) settings.status = status;
  const profile = oneOf(values.profile, source.profile);
  if (profile) settings.profile = profile;
  const readreceipts = oneOf(values.readreceipts, source.readreceipts);
  if (readreceipts) settings.readreceipts = readreceipts;
  const online = oneOf(values.online, source.online);
  if (online) settings.online = online;
  const calladd = oneOf(values.calladd, source.calladd);
  if (calladd) settings.calladd = calladd;
  return settings;
}

/**
 * Who sees the account's status updates (stories), as the phone keeps it: every saved contact
 * (`contacts`), saved contacts except `list` (`blacklist`), or only `list` (`whitelist`). `list` holds
 * user JIDs (phone numbers or LIDs).
 */
export interface StatusPrivacy {
  type: 'contacts' | 'blacklist' | 'whitelist';
  list: string[];
}

/** Subject op → request and reply types for requests to the holder of one instance. */
export interface InstanceRpc {
  connect: { request: ConnectRequest; reply: ConnectReply };
  logout: { request: { instanceId: string }; reply: StatusReply };
  release: { request: { instanceId: string }; reply: { released: boolean } };
  /** Closes the socket without logout and gives the lease back, the credentials kept: the instance is `hibernated` until a connect. */
  hibernate: { request: { instanceId: string }; reply: { hibernated: boolean } };
  /** `awaiting`: a request key (heldRequestKey) the asker waits for; the reply then says whether it was `received`. */
  status: { request: { instanceId: string; awaiting?: string }; reply: StatusReply };
  presence: { request: { instanceId: string } & PresenceRequest; reply: { ok: true } };
  'privacy.get': { request: { instanceId: string }; reply: PrivacySettings };
  'privacy.set': { request: { instanceId: string; settings: PrivacySettings }; reply: PrivacySettings };
  'status.privacy': { request: { instanceId: string }; reply: StatusPrivacy };
  /** Replies with the stored Message record (with the audience of a status). */
  send: { request: SendRequest; reply: SendReply };
  'chat.presence': { request: ChatPresenceRequest; reply: { ok: true } };
  /** Read receipts for received messages. */
  read: { request: { instanceId: string; keys: Array<{ remoteJid: string; id: string; participant?: string }> }; reply: { ok: true } };
  /**
   * Downloads a received message's media into the file store; answers where it is. `maxBytes`: a media
   * larger than that (as the message declares it, or as it streams in) is refused `too_large` without
   * being held whole.
   */
  'media.download': {
    request: { instanceId: string; messageId: string; ttlMs: number; maxBytes?: number };
    reply: { fileId: string; mimetype: string; fileName: string; size: number };
  };
  /** History on demand / placeholder resend; answers the id of the request sent to the phone. */
  'history.request': { request: HistoryOnDemandRequest; reply: { requestId: string } };
  /** Re-reads the labels from the phone's app state; the events it causes carry the request id. */
  'labels.refresh': { request: LabelRefreshRequest; reply: LabelRefreshReply };
  /** Asks WhatsApp for the blocklist (the stored copy follows). */
  'blocklist.get': { request: { instanceId: string }; reply: BlocklistReply };
  'blocklist.set': { request: BlockRequest; reply: BlocklistReply };
  /** App-state label changes; answered once the resulting events are stored. */
  'label.edit': { request: LabelEditRequest; reply: { ok: true } };
  'chat.labels': { request: ChatLabelsRequest; reply: { ok: true } };
  /** Pins, archives, mutes, marks read, clears or deletes a chat in the phone's app state; answered once the `chats` change is stored. */
  'chat.modify': { request: ChatModifyRequest; reply: { ok: true } };
  /** `/chat/ephemeral`: the disappearing-messages protocol message to the contact. */
  'chat.ephemeral': { request: import('./chat-state').ChatEphemeralRequest; reply: { ok: true } };
  /** `/chat/notes/refresh`: the chat's note as WhatsApp's app state has it now (null: none). */
  'chat.notes.read': { request: import('./chat-state').ChatNotesReadRequest; reply: { note: import('./chat-state').ChatNote | null } };
  /** `/chat/notes/edit`: an app-state `note_edit` patch; answers the note as written. */
  'chat.notes.edit': { request: import('./chat-state').ChatNoteEditRequest; reply: { note: import('./chat-state').ChatNote } };
  /** `/chat/details`: the chat's picture URL ('' when it has none or its owner hides it). */
  'chat.picture': { request: import('./chat-state').ChatPictureRequest; reply: { url: string } };
  /** `/profile/name`: the push name WhatsApp took. */
  'profile.name': { request: import('./profile').ProfileNameRequest; reply: { name: string } };
  /** `/profile/image`: the instance's own picture set or removed. */
  'profile.image': { request: import('./profile').ProfileImageRequest; reply: import('./profile').ProfileImageReply };
  /** Creates a group with the instance as its super admin; answers the group as WhatsApp made it. */
  'group.create': { request: GroupCreateRequest; reply: GroupObject };
  /** One group the instance is in, read from WhatsApp (NotFound / Forbidden when it does not exist / the instance is not in it). */
  'group.info': { request: GroupInfoRequest; reply: GroupInfoReply };
  /** Every group the instance is in (cached, kept fresh by WhatsApp's group notifications; `force` reads WhatsApp). */
  'group.list': { request: import('./group').GroupListRequest; reply: GroupListReply };
  /** The group an invite code leads to, without joining (NotFound for a code WhatsApp does not know). */
  'group.inviteInfo': { request: GroupInviteRequest; reply: GroupObject };
  /** Joins by invite code; with join approval on, the request waits for an admin (`requested`). */
  'group.join': { request: GroupInviteRequest; reply: GroupJoinReply };
  'group.leave': { request: GroupJidRequest; reply: { ok: true } };
  /** A new invite code (the old one stops working); admins only (Forbidden). */
  'group.resetInvite': { request: GroupJidRequest; reply: GroupResetInviteReply };
  /** add/remove/promote/demote members, approve/reject join requests; admins only (Forbidden). */
  'group.participants': { request: GroupParticipantsRequest; reply: GroupParticipantsReply };
  /** Turns join approval on or off; admins only (Forbidden). */
  'group.joinApproval': { request: GroupJoinApprovalRequest; reply: GroupObject };
  /** Renames the group; admins only when the group is locked (Forbidden). */
  'group.name': { request: GroupNameRequest; reply: GroupObject };
  /** Sets or ('') removes the description; admins only when the group is locked (Forbidden). */
  'group.description': { request: GroupDescriptionRequest; reply: GroupObject };
  /** announce / locked on or off; admins only (Forbidden). */
  'group.setting': { request: GroupSettingRequest; reply: GroupObject };
  /** Who may add members; admins only (Forbidden). */
  'group.memberAddMode': { request: GroupMemberAddModeRequest; reply: GroupObject };
  /** Disappearing messages timer (0 off); admins only when the group is locked (Forbidden). */
  'group.ephemeral': { request: GroupEphemeralRequest; reply: GroupObject };
  /** Sets or removes the group's picture; admins only when the group is locked (Forbidden). */
  'group.image': { request: GroupImageRequest; reply: GroupObject };
  /** Creates a community (the instance its admin); answers its parent group. */
  'community.create': { request: CommunityCreateRequest; reply: GroupObject };
  /** Links or unlinks groups of a community; its admins only (Forbidden). */
  'community.groups': { request: CommunityGroupsRequest; reply: CommunityGroupsReply };
  /** Creates a channel owned by the instance; answers it as WhatsApp describes it. */
  'newsletter.create': { request: NewsletterCreateRequest; reply: NewsletterMetadata };
  /** One channel by JID (NotFound when WhatsApp does not know it). */
  'newsletter.info': { request: NewsletterJidRequest; reply: NewsletterMetadata };
  /** One channel by invite key (NotFound when WhatsApp does not know it). */
  'newsletter.link': { request: NewsletterInviteRequest; reply: NewsletterMetadata };
  /** The channels the instance follows or owns, read from WhatsApp. */
  'newsletter.list': { request: { instanceId: string }; reply: NewsletterListReply };
  /** Follow, unfollow, mute or unmute a channel (NotFound when it does not exist). */
  'newsletter.subscription': { request: NewsletterSubscriptionRequest; reply: { ok: true } };
  /** Renames the channel; owner or admins only (Forbidden). */
  'newsletter.name': { request: NewsletterNameRequest; reply: { ok: true } };
  /** Sets or ('') removes the description; owner or admins only (Forbidden). */
  'newsletter.description': { request: NewsletterDescriptionRequest; reply: { ok: true } };
  /** Deletes the channel; the owner only (Forbidden). */
  'newsletter.delete': { request: NewsletterJidRequest; reply: { ok: true } };
  /** A page of the channel's posts, each with its views and reactions (NotFound when the channel does not exist). */
  'newsletter.messages': { request: NewsletterMessagesRequest; reply: { posts: NewsletterPostRecord[] } };
  /** Live updates of the channel for a while (the seconds WhatsApp granted). */
  'newsletter.live': { request: NewsletterJidRequest; reply: NewsletterLiveReply };
  /** Edits a post (admins; NotFound when it is not among the newest posts looked at). */
  'newsletter.editPost': { request: NewsletterPostEditRequest; reply: NewsletterPostChangeReply };
  /** Deletes a post (admins; NotFound as for edits). */
  'newsletter.deletePost': { request: NewsletterPostTarget; reply: NewsletterPostChangeReply };
  /** View receipts for posts. */
  'newsletter.viewed': { request: NewsletterViewedRequest; reply: { ok: true } };
  /** Reacts to a post ('' takes the reaction back). */
  'newsletter.react': { request: NewsletterReactionRequest; reply: { ok: true } };
  /** Sets or removes the channel's picture; owner or admins only (Forbidden). */
  'newsletter.picture': { request: NewsletterPictureRequest; reply: { ok: true } };
  /** Who may react; owner or admins only (Forbidden). */
  'newsletter.settings': { request: NewsletterSettingsRequest; reply: { ok: true } };
  /** The channel directory. */
  'newsletter.search': { request: NewsletterSearchRequest; reply: NewsletterSearchReply };
  /** Invite an admin, revoke an invite, remove an admin. */
  'newsletter.admin': { request: NewsletterAdminRequest; reply: { ok: true } };
  /** Accepts an admin invite the instance got. */
  'newsletter.adminAccept': { request: NewsletterJidRequest; reply: { ok: true } };
  /** Hands the channel to one of its admins; the owner only (Forbidden). */
  'newsletter.owner': { request: NewsletterOwnerRequest; reply: { ok: true } };
  /** Saves a contact in the phone's address book (app state); answered once its contacts event is stored. */
  'contact.add': { request: ContactSaveRequest; reply: { ok: true } };
  /** Removes a contact from the phone's address book (app state); answered once its contacts event is stored. */
  'contact.remove': { request: ContactRemoveRequest; reply: { ok: true } };
  /** Which numbers are on WhatsApp, with their JID and LID (usync). */
  'contact.check': { request: ContactCheckRequest; reply: { results: ContactCheckResult[] } };
  /** A business profile read from WhatsApp (null when the account is no business). */
  'business.profile': { request: BusinessProfileRequest; reply: { profile: BusinessProfileRecord | null } };
  /** The business categories WhatsApp offers. */
  'business.categories': { request: { instanceId: string }; reply: { categories: BusinessCategoryRecord[] } };
  /** Changes the instance's own business profile, field by field (each field's outcome). */
  'business.updateProfile': { request: BusinessProfileUpdateRequest; reply: BusinessProfileUpdateReply };
  /** A page of a business's catalogue (NotFound when it has none). */
  'business.catalog': { request: CatalogRequest; reply: CatalogReply };
  /** One product of a business's catalogue (NotFound when there is none). */
  'business.product': { request: ProductRequest; reply: CatalogProduct };
  /** Deletes a product of the instance's own catalogue (NotFound when it has none of that id). */
  'business.productDelete': { request: { instanceId: string; id: string }; reply: { deleted: number } };
  /** Hides or shows a product of the instance's own catalogue; answers it as it is now. */
  'business.productVisibility': { request: ProductVisibilityRequest; reply: CatalogProduct };
  /** Closes the socket without logging out and reconnects from the stored credentials (or says why not now). */
  'instance.reset': { request: { instanceId: string; force?: boolean }; reply: InstanceResetReply };
  /** What WhatsApp says about the account starting new chats (message capping and reach-out time lock). */
  'instance.limits': { request: { instanceId: string }; reply: WaMessageLimitsReply };
  /** Places a voice (or video) call: the callee's phone rings; no media flows. */
  'call.offer': { request: CallOfferRequest; reply: { callId: string } };
  /** Rejects a call offered to the instance. */
  'call.reject': { request: CallRejectRequest; reply: { ok: true } };
  /** The WhatsApp Business quick replies the phone's app state holds. */
  'quickreply.read': { request: { instanceId: string }; reply: { quickReplies: WhatsAppQuickReply[] } };
  /** Writes a quick reply to the phone's app state (a new one when no waId); answers its WhatsApp id. */
  'quickreply.save': { request: QuickReplySaveRequest; reply: { waId: string } };
  /** Deletes a quick reply from the phone's app state. */
  'quickreply.remove': { request: { instanceId: string; waId: string }; reply: { ok: true } };
}

export interface PlaceRequest {
  instanceId: string;
  connect: ConnectRequest;
}

/** Sent after an outbox insert commits, so relays and SSE wake without polling. */
export interface OutboxNotice {
  instanceId: string;
  lastId: string;
  /**
   * The event types that commit wrote, when its writer knows them: a consumer that wants none of them
   * (the chatbot's follower and a receipt, say) skips the notice, instead of looking at the outbox for
   * nothing. Absent: anything may have been written (look).
   */
  types?: string[];
  /**
   * Every `messages` event of that commit is of a message sent through the API (our own copy of it): a
   * consumer that ignores those (the chatbot's follower) skips the notice. Absent: not known, or not so.
   */
  sentByApi?: boolean;
  /** The component whose write this is (`chatbot`: a round's end): a consumer that ignores its own writes skips it. */
  origin?: string;
}

/** Sent after an async-queue change commits (enqueue, reset, delay settings), so dispatchers wake without polling. */
export interface QueueNotice {
  instanceId: string;
  /**
   * The change concerns campaigns (a folder created, resumed, deleted, or one of its messages released): only these
   * wake the campaign schedulers. A plain async send's notice cannot move a folder on.
   */
  campaigns?: boolean;
}
