/** The phone's address book and WhatsApp's directory: the ops of the gateway's `contact/` area and `/chat/check`. */

/** Saves (or renames) a contact in the phone's address book: an app-state `contactAction`. */
export interface ContactSaveRequest {
  instanceId: string;
  /** Phone-number JID (`<digits>@s.whatsapp.net`). */
  jid: string;
  name: string;
}

/** Removes a contact from the phone's address book. */
export interface ContactRemoveRequest {
  instanceId: string;
  /** Phone-number JID (`<digits>@s.whatsapp.net`). */
  jid: string;
}

/** Asks WhatsApp which phone numbers have an account (usync). */
export interface ContactCheckRequest {
  instanceId: string;
  /** Phone-number JIDs. */
  jids: string[];
}

/** One number of a check: whether it is on WhatsApp, its JID and LID (empty when not, or unknown). */
export interface ContactCheckResult {
  /** The JID asked about. */
  query: string;
  exists: boolean;
  jid: string;
  lid: string;
}
