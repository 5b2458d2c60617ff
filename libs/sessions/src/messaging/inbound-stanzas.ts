import { getBinaryNodeChild, type BinaryNode } from '../baileys';
import type { GroupChange } from './inbound/contacts-chats-groups';
import type { NewsletterChange } from './inbound/newsletters';

/** What InboundSocketHandler reads from raw stanzas Baileys turns into no event (or the wrong one). */

/** A channel admin's edit (edit="3") or deletion (edit="8") of a post (Baileys reads it as the post again); else null. */
export function newsletterChangeOf(node: BinaryNode): NewsletterChange | null {
  const { from, id, edit } = node.attrs;
  if (!from?.endsWith('@newsletter') || !id || (edit !== '3' && edit !== '8')) return null;
  const plaintext = getBinaryNodeChild(node, 'plaintext')?.content;
  return {
    jid: from,
    messageId: id,
    serverId: node.attrs.server_id ?? '',
    edit: edit === '3' ? ('edited' as const) : ('deleted' as const),
    content: plaintext instanceof Uint8Array ? Buffer.from(plaintext) : undefined,
    t: Number(node.attrs.t) || Math.floor(Date.now() / 1000),
  };
}

/** A `picture` notification of a group, or a w:gp2 `link` / `unlink` (community) one, as a GroupChange; else null. */
export function groupChangeOf(node: BinaryNode): GroupChange | null {
  const { from, type, participant, participant_pn: participantPn } = node.attrs;
  if (!from?.endsWith('@g.us') || !Array.isArray(node.content)) return null;
  const first = node.content[0];
  if (!first) return null;
  if (type === 'picture' && (first.tag === 'set' || first.tag === 'delete')) {
    return { author: first.attrs.author ?? participant, authorPn: participantPn, picture: { remove: first.tag === 'delete', id: first.attrs.id ?? '' } };
  }
  if (type === 'w:gp2' && (first.tag === 'link' || first.tag === 'unlink')) {
    const group = getBinaryNodeChild(first, 'group');
    if (!group?.attrs.jid) return null;
    return {
      author: participant,
      authorPn: participantPn,
      link: {
        change: first.tag,
        type: first.attrs.link_type ?? first.attrs.unlink_type ?? '',
        reason: first.attrs.unlink_reason ?? '',
        jid: group.attrs.jid,
        name: group.attrs.subject ?? '',
        defaultSub: Boolean(getBinaryNodeChild(group, 'default_sub_group')),
      },
    };
  }
  return null;
}

/** The ids of a receipt's `list` (a receipt of several messages). */
export function receiptListIds(node: BinaryNode): string[] {
  const content = Array.isArray(node.content) ? node.content : [];
  const list = content.find((child) => child.tag === 'list');
  const items = Array.isArray(list?.content) ? list.content : [];
  return items.filter((item) => item.tag === 'item' && item.attrs.id).map((item) => item.attrs.id);
}
