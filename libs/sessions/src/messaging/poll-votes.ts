import { createHash } from 'node:crypto';
import { unwrapMessage, type ProtoMessage } from '@gw/domain';
import type { MessageRow } from '@gw/persistence';
import { decryptPollVote } from '../baileys';
import type { Party } from './identity-resolver';
import { reviveMessage } from './raw-message';

/** What decrypting the votes of one poll needs, from its stored creation message. */
export interface PollCreation {
  messageId: string;
  secret: Uint8Array;
  options: string[];
  creator: Party;
}

interface EncryptedVote {
  encPayload?: Uint8Array | null;
  encIv?: Uint8Array | null;
}

const CREATION_FIELDS = ['pollCreationMessage', 'pollCreationMessageV2', 'pollCreationMessageV3', 'pollCreationMessageV5'];

/** The poll of a stored creation message (its raw WAMessage), or null when it is none. */
export function pollCreationOf(row: MessageRow, me: Party): PollCreation | null {
  if (!row.raw) return null;
  const stored = reviveMessage(row.raw);
  const message = (stored.message ?? {}) as ProtoMessage;
  const inner = unwrapMessage(message);
  const field = CREATION_FIELDS.find((name) => inner[name]);
  if (!field) return null;
  const poll = inner[field] as { options?: Array<{ optionName?: string | null }> | null };
  const context = (message.messageContextInfo ?? inner.messageContextInfo) as { messageSecret?: Uint8Array | null } | undefined;
  const secret = context?.messageSecret;
  if (!secret || !secret.length) return null;
  const creator: Party = row.fromMe ? me : { jid: row.sender, pn: row.senderPn, lid: row.senderLid };
  return { messageId: row.messageId, secret: Uint8Array.from(secret), options: (poll.options ?? []).map((option) => option.optionName ?? ''), creator };
}

function forms(party: Party): string[] {
  return [...new Set([party.pn, party.lid, party.jid].filter(Boolean))];
}

/**
 * The option names a vote selects, or null when it cannot be decrypted. The key depends on the JIDs
 * the voter's phone used for the creator and for itself; with LIDs in play either form may have been
 * used, so each combination is tried (AES-GCM rejects the wrong ones).
 */
export function decryptVote(vote: EncryptedVote, creation: PollCreation, voter: Party): string[] | null {
  if (!vote.encPayload || !vote.encIv) return null;
  const byHash = new Map(creation.options.map((name) => [createHash('sha256').update(name).digest('hex'), name]));
  for (const pollCreatorJid of forms(creation.creator)) {
    for (const voterJid of forms(voter)) {
      try {
        const decrypted = decryptPollVote(
          { encPayload: vote.encPayload, encIv: vote.encIv },
          { pollEncKey: creation.secret, pollCreatorJid, pollMsgId: creation.messageId, voterJid },
        );
        return (decrypted.selectedOptions ?? []).map((hash) => byHash.get(Buffer.from(hash).toString('hex')) ?? '').filter(Boolean);
      } catch {
        // wrong pair of JIDs: try the next
      }
    }
  }
  return null;
}
