/** WhatsApp Business, calls, and the instance's reset and new-chat limits: the requests and replies of their worker ops. */

/** A business category as WhatsApp names it (uazapi's `{id, localized_display_name}`). */
export interface BusinessCategoryRecord {
  id: string;
  localized_display_name: string;
}

/** A business profile as WhatsApp describes it (whatsmeow's BusinessProfile, uazapi's field names). */
export interface BusinessProfileRecord {
  jid: string;
  tag: string;
  description: string;
  address: string;
  email: string;
  websites: string[];
  categories: BusinessCategoryRecord[];
  business_hours_timezone: string;
}

export interface BusinessProfileRequest {
  instanceId: string;
  /** A user JID (phone number form). */
  jid: string;
}

export type BusinessProfileField = 'description' | 'address' | 'email';

export interface BusinessProfileUpdateRequest {
  instanceId: string;
  /** Only the fields to change; each is its own change at WhatsApp (one can fail while the others hold). */
  fields: Partial<Record<BusinessProfileField, string>>;
}

export type BusinessFieldResult = { status: 'updated' } | { status: 'error'; error: string };

export interface BusinessProfileUpdateReply {
  results: Partial<Record<BusinessProfileField, BusinessFieldResult>>;
}

/** One product of a catalogue as WhatsApp describes it (whatsmeow's Product fields). */
export interface CatalogProduct {
  id: string;
  name: string;
  description: string;
  /** WhatsApp's price: an integer string (amount × 1000), '' when it has none. */
  price: string;
  currency: string;
  salePrice: string;
  retailerId: string;
  url: string;
  availability: string;
  isHidden: boolean;
  status: string;
  canAppeal: boolean;
  maxAvailable: number;
  images: Array<{ id: string; requestImageUrl: string; originalImageUrl: string }>;
}

export interface CatalogRequest {
  instanceId: string;
  jid: string;
  /** WhatsApp's opaque cursor of the next page. */
  after?: string;
  limit: number;
}

export interface CatalogReply {
  jid: string;
  cartEnabled: boolean;
  products: CatalogProduct[];
  /** '' on the last page. */
  after: string;
}

export interface ProductRequest {
  instanceId: string;
  jid: string;
  id: string;
}

export interface ProductVisibilityRequest {
  instanceId: string;
  id: string;
  hidden: boolean;
}

/** What WhatsApp tells the account about starting new chats; each block is null when its query failed (`error` says why). */
export interface WaMessageLimitsReply {
  capping: {
    status: string;
    usedQuota: number | null;
    totalQuota: number | null;
    cycleStart: string;
    cycleEnd: string;
    serverSentAt: string;
    oteStatus: string;
    mvStatus: string;
  } | null;
  cappingError: string;
  timelock: { active: boolean; until: string; enforcementType: string } | null;
  timelockError: string;
}

/**
 * What a reset did: `started` (the socket closed and reconnects from the stored credentials),
 * `in_progress` (a reset is still reconnecting), `cooldown` (the last one was `remainingMs` ago too
 * recently) or `not_resettable` (the session is pairing, not a linked device yet).
 */
export interface InstanceResetReply {
  outcome: 'started' | 'in_progress' | 'cooldown' | 'not_resettable';
  /** The session's phase after it (idle, pairing, linking, connecting, open, ended). */
  phase: string;
  remainingMs: number;
}

export interface CallOfferRequest {
  instanceId: string;
  /** The callee's user JID (phone number form). */
  jid: string;
  video: boolean;
  /** Seconds the call rings before the instance hangs up; 0 = until WhatsApp times it out. */
  durationSeconds: number;
}

export interface CallRejectRequest {
  instanceId: string;
  callId: string;
  /** The caller's JID as the offer named it. */
  from: string;
}

/** A WhatsApp Business quick reply as the phone's app state keeps it (`quick_reply` mutations). */
export interface WhatsAppQuickReply {
  /** The mutation index's id: WhatsApp's own id of the reply. */
  waId: string;
  shortcut: string;
  message: string;
  keywords: string[];
}

export interface QuickReplySaveRequest {
  instanceId: string;
  /** The reply's WhatsApp id to edit it; absent to create one. */
  waId?: string;
  shortcut: string;
  message: string;
}
