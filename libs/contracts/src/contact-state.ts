/** Requests and replies of the label and blocklist ops (`instance.<id>.labels.refresh`, `…blocklist.*`). */

export interface LabelRefreshRequest {
  instanceId: string;
  /** The caller's X-Request-ID, or one the gateway made; ignored when a refresh is already running. */
  requestId: string;
  /** Re-read the label collections from scratch instead of from the last version seen. */
  force: boolean;
}

export interface LabelRefreshReply {
  status: 'started' | 'in_progress';
  /** The refresh's id: this request's, or the running refresh's when one was running. */
  requestId: string;
  force: boolean;
}

export interface BlocklistReply {
  /** Phone-number JIDs (a LID while the number is unknown). */
  blockList: string[];
}

export interface BlockRequest {
  instanceId: string;
  /** Phone-number JID or LID of the contact. */
  jid: string;
  block: boolean;
}

/** Creates, edits or deletes a label in the app state (Baileys addLabel). */
export interface LabelEditRequest {
  instanceId: string;
  labelId: string;
  name: string;
  /** Colour index 0–19. */
  color: number;
  deleted: boolean;
}

/** Puts labels on and takes labels off one chat (Baileys addChatLabel / removeChatLabel). */
export interface ChatLabelsRequest {
  instanceId: string;
  chatJid: string;
  add: string[];
  remove: string[];
}
