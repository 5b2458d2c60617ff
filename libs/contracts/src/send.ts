/**
 * The send contract between the gateway (or the dispatcher) and the session worker holding the
 * instance: `instance.<id>.send`. Ids are fixed before the request, so a retry of the same request is
 * recognised by the worker and never relayed twice.
 */
export interface LinkPreviewData {
  url: string;
  matchedText: string;
  title: string;
  description: string;
  /** JPEG thumbnail, base64 ('' when none). */
  thumbnailBase64: string;
  /** Upload the image as a large preview. */
  large: boolean;
  /** Large previews: the image the worker uploads as the high-quality thumbnail (a URL it fetches through the SSRF guard, or a staged upload). */
  image?: { url: string } | { fileId: string };
}

/**
 * A protocol node sent beside a built message (Baileys' `additionalNodes`), in the shape of Baileys'
 * BinaryNode, which contracts cannot import: both sides assign it to the other without a cast.
 */
export interface WireNode {
  tag: string;
  attrs: { [key: string]: string };
  content?: WireNode[] | string | Uint8Array;
}

export type MediaKind = 'image' | 'video' | 'audio' | 'document' | 'sticker';

/** A file for a header of a built message: `path` leads from the message to the header object. */
export interface ProtoAttachment {
  path: Array<string | number>;
  mediaType: 'image' | 'video' | 'document';
  source: { url: string } | { fileId: string };
  mimetype: string;
  fileName: string;
}

export type OutboundContent =
  | { kind: 'text'; text: string; linkPreview: LinkPreviewData | null }
  | {
      kind: 'media';
      mediaType: MediaKind;
      /** Where the bytes are: a URL the worker fetches (SSRF-guarded) or a staged upload. */
      source: { url: string } | { fileId: string };
      mimetype: string;
      caption: string;
      fileName: string;
      ptt: boolean;
      gifPlayback: boolean;
      ptv: boolean;
      viewOnce: boolean;
      thumbnailBase64: string;
    }
  | { kind: 'contacts'; displayName: string; vcards: string[] }
  | { kind: 'location'; latitude: number; longitude: number; name: string; address: string }
  /** A WAProto message already built (interactive, payment, …), relayed as is. */
  | {
      kind: 'proto';
      message: Record<string, unknown>;
      messageType: string;
      nodes?: WireNode[];
      /** Media the worker uploads and puts in a header of the message (cards, menus with an image). */
      attachments?: ProtoAttachment[];
    }
  | { kind: 'reaction'; targetMessageId: string; emoji: string }
  | { kind: 'edit'; targetMessageId: string; text: string }
  | { kind: 'delete'; targetMessageId: string }
  | { kind: 'pin'; targetMessageId: string; pin: boolean; durationSeconds: number };

export interface SendRecordFields {
  sendFunction: string;
  sendPayload: Record<string, unknown>;
  trackSource: string;
  trackId: string;
  sendFolderId: string;
  /** Where the sent file can be fetched (the URL given, or the gateway's /files link of a base64 upload); '' without one. */
  fileUrl?: string;
  /** A message the chatbot sends: `{agent_id, turn}` (the message record's `ai_metadata`). */
  aiMetadata?: Record<string, unknown>;
}

export interface SendRequest {
  instanceId: string;
  /** Our id (`r` + 7 hex). */
  recordId: string;
  /** The provider message id. */
  messageId: string;
  chatJid: string;
  content: OutboundContent;
  /** Provider id (or our id) of the message replied to. */
  quotedId?: string;
  mentions?: string[];
  mentionAll?: boolean;
  forwarded?: boolean;
  /** Typing (recording for audio) shown for this long before sending. */
  delayMs?: number;
  readChat?: boolean;
  readMessages?: boolean;
  record: SendRecordFields;
  /** A status (story) to `status@broadcast`: its recipients (PN JIDs) and how a text status looks. */
  status?: StatusBroadcast;
  /**
   * Set by the callers that send the same request again later (the async queue, chatbot rounds, the
   * Chatwoot bridge): a send whose connection went away before the message reached WhatsApp is handed
   * back (NotConnected) instead of Failed.
   */
  queued?: boolean;
  /**
   * A sync send's: the time (Unix ms) after which the worker must not begin it — store nothing, relay
   * nothing — and answers Timeout instead. Its caller stops waiting a while later and then answers from
   * the ledger: the message's row if the worker began it in time, else "not sent" (it never will be), so
   * a client told 504 can send again without a duplicate. The async queue sets none (it keeps the request).
   */
  notAfter?: number;
  /**
   * An async send's: the W3C `traceparent` of the HTTP request that accepted it (tracing on), stored
   * with the queued request so the dispatcher's send continues that trace. The worker ignores it.
   */
  traceparent?: string;
}

export interface StatusBroadcast {
  /** Phone-number JIDs; the worker drops those not on WhatsApp and answers which (statusDiscarded). */
  recipients: string[];
  /** Background of a text status, ARGB. */
  backgroundArgb?: number;
  /** Font of a text status (WAProto ExtendedTextMessage.FontType). */
  font?: number;
}

/**
 * `instance.<id>.history.request`: ask the phone for older messages of a chat (`history`: the ones
 * before `key`, at most `count`) or for one message again (`exact`: a placeholder resend of `key`).
 * The messages arrive later, as history sync or message events.
 */
export interface HistoryOnDemandRequest {
  instanceId: string;
  mode: 'history' | 'exact';
  key: { remoteJid: string; fromMe: boolean; id: string; participant?: string };
  /** `history`: the anchor's timestamp (ms). */
  timestampMs: number;
  count: number;
}

/** Presence of a chat: typing, recording, paused. */
export interface ChatPresenceRequest {
  instanceId: string;
  chatJid: string;
  presence: 'composing' | 'recording' | 'paused';
  delayMs: number;
}
