/**
 * How `/files/<id>` serves what a WhatsApp contact sent. The bytes and their mimetype come from a stranger,
 * and the answer comes from the API's own origin: a `text/html` or `image/svg+xml` shown inline would run
 * the stranger's script next to the tokens a browser client keeps for this origin. So only types a
 * browser displays without running anything are inline; every other type (HTML, XHTML, SVG, XML,
 * JavaScript, and whatever we do not know) is a download, and every answer carries `nosniff` and a
 * sandboxing CSP, so neither a lying type nor a browser's guess can turn a file into a page.
 */

/** Sent on every /files answer, the 404s included. */
export const FILE_SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  // No script, no plugin, no fetch, a unique opaque origin: even a page that slipped through is inert.
  'content-security-policy': "default-src 'none'; sandbox",
} as const;

/**
 * Types a browser displays without running anything. Images are listed one by one because SVG is an
 * image that runs script; audio and video are media players whatever the subtype.
 */
const PASSIVE_TYPES = new Set([
  'image/png',
  'image/jpeg',
  'image/jpg',
  'image/gif',
  'image/webp',
  'image/avif',
  'image/bmp',
  'image/heic',
  'image/heif',
  'image/tiff',
  'image/x-icon',
  'image/vnd.microsoft.icon',
  'application/pdf',
  'text/plain',
  'application/octet-stream',
]);
const PASSIVE_FAMILIES = /^(audio|video)\/[a-z0-9][a-z0-9!#$&^_.+-]*$/;

/** `type/subtype` as RFC 9110 spells a media type (no spaces, no control characters). */
const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/;
/** Parameters a header may carry as sent: `; codecs=opus`, `; charset=utf-8`. */
const PARAMETERS = /^(\s*;\s*[a-z0-9!#$&^_.+-]+=("[^"\\\r\n]*"|[a-z0-9!#$&^_.+-]+))*\s*$/i;

export interface FileServing {
  contentType: string;
  contentDisposition: string;
}

/** The content type and disposition a stored file is answered with. */
export function fileServing(mimetype: string, fileName: string | undefined): FileServing {
  const separator = mimetype.indexOf(';');
  const essence = (separator < 0 ? mimetype : mimetype.slice(0, separator)).trim().toLowerCase();
  const parameters = separator < 0 ? '' : mimetype.slice(separator);
  // A type that is not a type (or parameters that are not parameters) is served as bytes, never echoed.
  const wellFormed = MEDIA_TYPE.test(essence) && PARAMETERS.test(parameters);
  const contentType = wellFormed ? `${essence}${parameters.trim() ? parameters.trim().replace(/^;?\s*/, '; ') : ''}` : 'application/octet-stream';
  // A malformed type is served as octet-stream, which is passive: bytes a browser will not sniff.
  const inline = !wellFormed || PASSIVE_TYPES.has(essence) || PASSIVE_FAMILIES.test(essence);
  return { contentType, contentDisposition: dispositionHeader(inline ? 'inline' : 'attachment', fileName) };
}

/** `inline` or `attachment`, with the name as an ASCII fallback and as RFC 8187 UTF-8 when it has more. */
function dispositionHeader(kind: 'inline' | 'attachment', fileName: string | undefined): string {
  const name = safeFileName(fileName);
  if (!name) return kind;
  const ascii = name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\%]/g, '_');
  if (/^[\x20-\x7e]*$/.test(name)) return `${kind}; filename="${ascii}"`;
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}

/** The last path segment, without control characters or leading dots, at most 200 characters. */
function safeFileName(fileName: string | undefined): string | undefined {
  if (!fileName) return undefined;
  const base = fileName.split(/[/\\]/).pop() ?? '';
  // eslint-disable-next-line no-control-regex
  const clean = Array.from(base.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, '').replace(/^[.\s]+/, ''))
    .slice(0, 200)
    .join('')
    .trim();
  // A lone surrogate cannot be percent-encoded (encodeURIComponent throws): it becomes U+FFFD.
  return clean.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd') || undefined;
}
