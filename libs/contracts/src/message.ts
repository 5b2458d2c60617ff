/**
 * The API's Message record (spec "Message record"; extra fields as the real captures carry them), as
 * the worker answers a `send` with it and the gateway returns it. Field names are the API's, not our
 * column names. A type literal, not an interface: it stays assignable to `Record<string, unknown>`
 * for code that treats a record as a plain JSON object (event payloads, webhook bodies).
 */
export type MessageRecord = {
  id: string;
  messageid: string;
  chatid: string;
  chatlid: string;
  sender: string;
  sender_pn: string;
  sender_lid: string;
  senderName: string;
  isGroup: boolean;
  fromMe: boolean;
  messageType: string;
  type: string;
  mediaType: string;
  source: string;
  messageTimestamp: number;
  status: string;
  text: string;
  quoted: string;
  edited: string;
  reaction: string;
  vote: string;
  convertOptions: string;
  buttonOrListid: string;
  owner: string;
  error: string;
  content: unknown;
  wasSentByApi: boolean;
  pinned: boolean;
  sendFunction: string;
  sendPayload: unknown;
  fileURL: string;
  send_folder_id: string;
  track_source: string;
  track_id: string;
  /** The known contact of a call, on call messages only (spec: "when `messageType` is `call`"). */
  callPeer?: MessageCallPeer;
  /**
   * Present (true) when the sender is known only by its LID: WhatsApp sent no phone number with the
   * message and none is known yet (`sender_pn` is ''); filled in on the stored record once one is learned.
   */
  sender_pn_unresolved?: true;
  /** An object as the spec types it; empty unless an AI agent recorded its round on the message. */
  ai_metadata: Record<string, unknown>;
};

/** `callPeer` of a call message: the caller as the instance knows it. */
export interface MessageCallPeer {
  jid: string;
  name: string;
  imagePreviewUrl: string;
}

/** A status (story) send also answers who it went to and who was dropped as not on WhatsApp. */
export type StatusSendFields = {
  statusRecipients: string[];
  statusDiscarded: Array<{ input: string; reason: string }>;
};

/** The `send` op's reply: the stored message, plus the audience when it was a status. */
export type SendReply = MessageRecord & Partial<StatusSendFields>;
