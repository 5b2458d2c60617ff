/**
 * A channel (newsletter) as the API answers it: whatsmeow's NewsletterMetadata as uazapiGO serialises it
 * (snake_case, states and roles in lower case, counts and times as strings), built by the session worker
 * from WhatsApp's `w:mex` answer.
 */
export interface NewsletterMetadata {
  /** `<digits>@newsletter`. */
  id: string;
  state: { type: string };
  thread_metadata: {
    /** Unix seconds, as a string. */
    creation_time: string;
    /** The invite key: https://whatsapp.com/channel/<invite>. */
    invite: string;
    name: NewsletterText;
    description: NewsletterText;
    subscribers_count: string;
    /** `verified` | `unverified`. */
    verification: string;
    picture: NewsletterPicture | null;
    preview: NewsletterPicture;
    settings: { reaction_codes: { value: string } };
  };
  /** The instance's view of the channel: `mute` on | off, `role` owner | admin | subscriber | guest. */
  viewer_metadata: { mute: string; role: string } | null;
}

export interface NewsletterText {
  text: string;
  id: string;
  update_time: string;
}

export interface NewsletterPicture {
  url: string;
  id: string;
  type: string;
  direct_path: string;
}

export interface NewsletterCreateRequest {
  instanceId: string;
  name: string;
  description: string;
  /** The channel's picture: loaded and checked before the channel is made. */
  picture?: { url: string } | { fileId: string };
}

/** One channel: `<digits>@newsletter`. */
export interface NewsletterJidRequest {
  instanceId: string;
  jid: string;
}

/** A channel's invite key (what follows https://whatsapp.com/channel/). */
export interface NewsletterInviteRequest {
  instanceId: string;
  key: string;
}

export interface NewsletterListReply {
  newsletters: NewsletterMetadata[];
}

/** A new name (1 to 100 characters); owner or admins only. */
export interface NewsletterNameRequest {
  instanceId: string;
  jid: string;
  name: string;
}

/** A new description ('' removes it); owner or admins only. */
export interface NewsletterDescriptionRequest {
  instanceId: string;
  jid: string;
  description: string;
}

/** What the instance does as a follower: follow, unfollow, mute or unmute. */
export type NewsletterSubscriptionAction = 'follow' | 'unfollow' | 'mute' | 'unmute';

export interface NewsletterSubscriptionRequest {
  instanceId: string;
  jid: string;
  action: NewsletterSubscriptionAction;
}

/** A page of a channel's posts: the newest `count`, or the `count` before the post `before` (a server id). */
export interface NewsletterMessagesRequest {
  instanceId: string;
  jid: string;
  count: number;
  before?: number;
}

/** A channel post as WhatsApp lists it, with its views and reactions at the time of the read. */
export interface NewsletterPostRecord {
  serverid: number;
  messageid: string;
  type: string;
  /** RFC 3339. */
  timestamp: string;
  viewsCount: number;
  /** Emoji → how many reacted with it. */
  reactionCounts: Record<string, number>;
  /** The post's content (a WhatsApp Message, camelCase fields), when WhatsApp sent it. */
  message: Record<string, unknown> | null;
}

/** `/newsletter/subscribe`: live updates of the channel for a while; the seconds WhatsApp granted. */
export interface NewsletterLiveReply {
  seconds: number;
}

/** A post named by its message id or its server id (at least one); looked for in the newest `count` × `maxPages` posts. */
export interface NewsletterPostTarget {
  instanceId: string;
  jid: string;
  messageId?: string;
  serverId?: number;
  /** Posts read per page while looking for it. */
  count: number;
  maxPages: number;
}

/** `/newsletter/messages/edit`: the post's new text (or caption). */
export interface NewsletterPostEditRequest extends NewsletterPostTarget {
  text: string;
}

/** What an edit or a deletion did, as the reference answers it. */
export interface NewsletterPostChangeReply {
  jid: string;
  targetmessageid: string;
  targetserverid: number;
  /** The id of the stanza sent to WhatsApp (a channel post is edited or deleted under its own id). */
  messageid: string;
  /** The server id WhatsApp acknowledged. */
  serverid: number;
}

/** `/newsletter/viewed`: the posts the instance saw. */
export interface NewsletterViewedRequest {
  instanceId: string;
  jid: string;
  serverIds: number[];
}

/** `/newsletter/reaction`: '' takes the instance's reaction back. */
export interface NewsletterReactionRequest {
  instanceId: string;
  jid: string;
  serverId: number;
  reaction: string;
  /** The reaction stanza's id (else generated). */
  reactionId?: string;
}

/** Where a picture comes from: a URL (fetched through the SSRF guard) or a staged upload; `remove` deletes the picture. */
export type PictureSource = { url: string } | { fileId: string } | { remove: true };

export interface NewsletterPictureRequest {
  instanceId: string;
  jid: string;
  picture: PictureSource;
}

/** Who may react to the channel's posts. */
export type NewsletterReactionCodes = 'all' | 'basic' | 'none' | 'blocklist';

export interface NewsletterSettingsRequest {
  instanceId: string;
  jid: string;
  reactionCodes: NewsletterReactionCodes;
}

/** `/newsletter/search`: the channel directory, browsed (`view`) or searched (`searchText`), a page at a time. */
export interface NewsletterSearchRequest {
  instanceId: string;
  limit: number;
  view: string;
  countryCodes: string[];
  searchText?: string;
  after?: string;
}

export interface NewsletterSearchReply {
  /** The cursor of the next page (null on the last). */
  after: string | null;
  data: NewsletterMetadata[];
}

/** Admin invites and admins: invite, revoke an invite or remove an admin (`user`: the person's JID). */
export interface NewsletterAdminRequest {
  instanceId: string;
  jid: string;
  action: 'invite' | 'revoke' | 'remove';
  user: string;
}

/** `/newsletter/owner/transfer`: to an admin; `quitAdmin` then steps the instance down. */
export interface NewsletterOwnerRequest {
  instanceId: string;
  jid: string;
  user: string;
  quitAdmin: boolean;
}
