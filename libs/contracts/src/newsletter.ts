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
