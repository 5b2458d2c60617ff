/**
 * Every way a client names a stored message — the API's `<owner>:<messageid>` form, our `r…` record
 * id or the bare provider id — reduced to what the store looks up (`id = $x OR message_id = $x`).
 * Used by every lookup by id (pin, edit, delete, react, markread, find, replyid, orderMessageId, …)
 * so that an id the API returned is accepted wherever an id is taken.
 */
export function normaliseMessageId(id: string): string {
  const trimmed = id.trim();
  const colon = trimmed.lastIndexOf(':');
  return colon >= 0 ? trimmed.slice(colon + 1) : trimmed;
}
