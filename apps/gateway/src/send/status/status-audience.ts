import { Injectable } from '@nestjs/common';
import { ErrorCode, RpcError } from '@gw/contracts';
import { ContactRepository, LidMappingRepository, type ContactRow } from '@gw/persistence';
import { ApiError } from '../../common/api-error';
import { SessionClient } from '../../session/session.client';
import type { StatusDebug } from '../../common/dto/message.response';
import type { RequestInstance } from '../../common/request-instance';

/** Why an explicit recipient of a status was left out (the reasons uazapi's `debug` reports). */
export type DiscardReason = 'invalid_format' | 'lid_unresolved' | 'not_on_whatsapp' | 'outside_status_audience' | 'duplicate';

export interface StatusAudienceInput {
  contacts: ContactRow[];
  /**
   * The status audience the phone keeps: `contacts` (saved contacts), `blacklist` (saved contacts
   * except `list`), `whitelist` (only `list`); `fallback` when it could not be read (then `contacts`).
   */
  privacy: { type: string; list?: string[]; fallback: boolean; error?: string };
  /** `recipients` of the request, as given (absent: the whole audience). */
  explicit?: string[];
  maxRecipients?: number;
  /** Phone-number JID of a LID, from the instance's LID mappings (null when unknown). */
  pnForLid(lid: string): Promise<string | null>;
}

export interface StatusRecipients {
  /** Phone-number JIDs to send to, in order. */
  recipients: string[];
  /** Recipient JID → what the client wrote (to name it in `discarded_recipients` later). */
  inputs: Map<string, string>;
  debug: StatusDebug;
}

const PN_SUFFIX = '@s.whatsapp.net';

/** A contact saved in the address book: the ones a "my contacts" status privacy reaches. */
function inAudience(contact: ContactRow): boolean {
  return contact.jid.endsWith(PN_SUFFIX) && (contact.inAddressBook || contact.contactName !== '');
}

/** A listed user's phone-number JID (device part dropped, a LID resolved where known), or null. */
async function phoneJidOf(jid: string, pnForLid: (lid: string) => Promise<string | null>): Promise<string | null> {
  const resolved = await resolveRecipient(jid, pnForLid);
  return 'jid' in resolved ? resolved.jid : null;
}

/**
 * The audience the status privacy allows, as phone-number JIDs: the saved contacts (`contacts`), the
 * saved contacts but those listed (`blacklist`), or the listed users only (`whitelist`). Listed
 * entries may be LIDs; a whitelisted LID with no known phone number cannot be sent to and is counted.
 */
async function audienceOf(input: StatusAudienceInput): Promise<{ jids: string[]; members: Set<string>; unresolved: number }> {
  const listed = input.privacy.list ?? [];
  const members = new Set<string>();
  if (input.privacy.type === 'whitelist') {
    const jids: string[] = [];
    let unresolved = 0;
    for (const entry of listed) {
      const jid = await phoneJidOf(entry, input.pnForLid);
      if (!jid) {
        unresolved++;
        continue;
      }
      if (members.has(jid)) continue;
      members.add(jid);
      jids.push(jid);
    }
    return { jids, members, unresolved };
  }
  const excluded = new Set<string>();
  if (input.privacy.type === 'blacklist') {
    for (const entry of listed) {
      excluded.add(entry.trim().replace(/:\d+@/, '@'));
      const jid = await phoneJidOf(entry, input.pnForLid);
      if (jid) excluded.add(jid);
    }
  }
  const saved = input.contacts.filter((contact) => inAudience(contact) && !excluded.has(contact.jid) && !(contact.lid && excluded.has(contact.lid)));
  for (const contact of saved) members.add(contact.jid);
  return { jids: saved.map((contact) => contact.jid), members, unresolved: 0 };
}

/**
 * Who a status goes to. Without `explicit` it is the audience the status privacy allows (see
 * audienceOf). With `explicit`, each entry is checked (format, LID
 * resolved to a phone number, duplicates, inside the audience) and the valid ones are kept in the
 * given order; `maxRecipients` then caps either list deterministically (the first N).
 */
export async function selectStatusRecipients(input: StatusAudienceInput): Promise<StatusRecipients> {
  const audience = await audienceOf(input);
  const members = audience.members;
  const debug: StatusDebug = {
    status_privacy_type: input.privacy.type,
    ...(input.privacy.type === 'contacts' ? {} : { status_privacy_list_count: (input.privacy.list ?? []).length }),
    ...(audience.unresolved ? { status_privacy_list_unresolved: audience.unresolved } : {}),
    audience_recipient_count: audience.jids.length,
    total_contacts_in_store: input.contacts.length,
    contacts_with_full_name: input.contacts.filter((contact) => contact.contactName !== '').length,
    contacts_with_push_name_only: input.contacts.filter((contact) => !contact.contactName && contact.pushName !== '').length,
    contacts_with_business_name_only: input.contacts.filter((contact) => !contact.contactName && !contact.pushName && contact.verifiedName !== '').length,
    used_default_privacy_fallback: input.privacy.fallback,
    ...(input.privacy.error ? { privacy_lookup_error: input.privacy.error } : {}),
    explicit_recipients: input.explicit !== undefined,
  };
  const inputs = new Map<string, string>();
  let recipients: string[];
  if (input.explicit === undefined) {
    recipients = [...audience.jids];
    for (const jid of recipients) inputs.set(jid, jid);
  } else {
    const discarded: Array<{ input: string; reason: DiscardReason }> = [];
    recipients = [];
    for (const raw of input.explicit) {
      const resolved = await resolveRecipient(raw, input.pnForLid);
      if ('reason' in resolved) {
        discarded.push({ input: raw, reason: resolved.reason });
        continue;
      }
      if (inputs.has(resolved.jid)) {
        discarded.push({ input: raw, reason: 'duplicate' });
        continue;
      }
      if (!members.has(resolved.jid)) {
        discarded.push({ input: raw, reason: 'outside_status_audience' });
        continue;
      }
      inputs.set(resolved.jid, raw);
      recipients.push(resolved.jid);
    }
    Object.assign(debug, {
      requested_recipient_count: input.explicit.length,
      resolved_recipient_count: recipients.length,
      discarded_recipient_count: discarded.length,
      discarded_recipients: discarded,
    });
  }
  // 0 means no cap: a status for nobody is not a send.
  const capped = input.maxRecipients !== undefined && input.maxRecipients > 0 && recipients.length > input.maxRecipients;
  if (input.maxRecipients !== undefined) debug.max_recipients = input.maxRecipients;
  if (capped) recipients = recipients.slice(0, input.maxRecipients);
  debug.selected_recipient_count = recipients.length;
  debug.partial_send = capped;
  return { recipients, inputs, debug };
}

/** A recipient as the client wrote it → its phone-number JID, or why not. */
async function resolveRecipient(raw: string, pnForLid: (lid: string) => Promise<string | null>): Promise<{ jid: string } | { reason: DiscardReason }> {
  const value = typeof raw === 'string' ? raw.trim() : '';
  const digits = value.replace(/[\s()+-]/g, '');
  if (/^\d{8,15}$/.test(digits) && !value.includes('@')) return { jid: `${digits}${PN_SUFFIX}` };
  const pn = /^(\d{8,15})(?::\d+)?@s\.whatsapp\.net$/.exec(value);
  if (pn) return { jid: `${pn[1]}${PN_SUFFIX}` };
  const lid = /^(\d{1,20})(?::\d+)?@lid$/.exec(value);
  if (lid) {
    const resolved = await pnForLid(`${lid[1]}@lid`);
    return resolved ? { jid: resolved.split(':')[0].replace(/@.*$/, '') + PN_SUFFIX } : { reason: 'lid_unresolved' };
  }
  return { reason: 'invalid_format' };
}

/** Who a status of an instance goes to: its saved contacts, the status privacy its phone keeps, its LID mappings. */
@Injectable()
export class StatusAudience {
  constructor(
    private readonly contacts: ContactRepository,
    private readonly lids: LidMappingRepository,
    private readonly sessions: SessionClient,
  ) {}

  /** The recipients (see selectStatusRecipients), among `explicit` when given, at most `maxRecipients` (0: no cap). */
  async select(instance: RequestInstance, explicit: string[] | undefined, maxRecipients: number | undefined): Promise<StatusRecipients> {
    return selectStatusRecipients({
      contacts: await this.contacts.listAll(instance.id),
      privacy: await this.privacy(instance),
      explicit,
      maxRecipients,
      pnForLid: (lid) => this.lids.pnForLid(instance.id, lid),
    });
  }

  /**
   * The status audience the phone keeps. When it cannot be read, nothing is sent: guessing ("all
   * saved contacts") would show the story to contacts the user excluded.
   */
  private async privacy(instance: RequestInstance): Promise<{ type: string; list: string[]; fallback: boolean }> {
    try {
      const { type, list } = await this.sessions.request(instance.id, 'status.privacy', { instanceId: instance.id });
      return { type, list, fallback: false };
    } catch (error) {
      // No session, no answer in time, a session moving: the usual statuses (409, 504, 503).
      if (error instanceof RpcError && error.code !== ErrorCode.Internal && error.code !== ErrorCode.BadRequest) throw error;
      throw new ApiError('upstream_failed', `could not read the status audience from WhatsApp (${(error as Error).message}); the status was not sent`);
    }
  }
}
