// Small helpers for reading and building binary nodes (the XMPP-like stanzas WhatsApp speaks).
import type { BinaryNode } from './baileys';

export type { BinaryNode };

export const S_WHATSAPP_NET = 's.whatsapp.net';

export function children(node: BinaryNode | undefined, tag?: string): BinaryNode[] {
  if (!node || !Array.isArray(node.content)) {
    return [];
  }
  return tag ? node.content.filter((c) => c.tag === tag) : node.content;
}

export function child(node: BinaryNode | undefined, tag: string): BinaryNode | undefined {
  return children(node, tag)[0];
}

/** Content as bytes; token-encoded strings come back from the decoder as `string`. */
export function contentBytes(node: BinaryNode | undefined): Buffer | undefined {
  if (!node || node.content === undefined || Array.isArray(node.content)) {
    return undefined;
  }
  return typeof node.content === 'string' ? Buffer.from(node.content, 'utf-8') : Buffer.from(node.content);
}

export function childBytes(node: BinaryNode | undefined, tag: string): Buffer | undefined {
  return contentBytes(child(node, tag));
}

export function contentString(node: BinaryNode | undefined): string | undefined {
  return contentBytes(node)?.toString('utf-8');
}

export function readUIntBE(buf: Buffer | undefined): number | undefined {
  if (!buf || buf.length === 0 || buf.length > 6) {
    return undefined;
  }
  return buf.readUIntBE(0, buf.length);
}

export function encodeBigEndian(value: number, bytes = 4): Buffer {
  const buf = Buffer.alloc(bytes);
  buf.writeUIntBE(value, 0, bytes);
  return buf;
}

export function node(tag: string, attrs: Record<string, string | undefined> = {}, content?: BinaryNode['content']): BinaryNode {
  const clean: Record<string, string> = {};
  for (const [k, v] of Object.entries(attrs)) {
    if (v !== undefined) {
      clean[k] = v;
    }
  }
  return content === undefined ? { tag, attrs: clean } : { tag, attrs: clean, content };
}

export function iqResult(request: BinaryNode, content?: BinaryNode[]): BinaryNode {
  return node('iq', { from: S_WHATSAPP_NET, type: 'result', id: request.attrs.id }, content);
}

export function iqError(request: BinaryNode, code: number, text: string): BinaryNode {
  return node('iq', { from: S_WHATSAPP_NET, type: 'error', id: request.attrs.id }, [node('error', { code: String(code), text })]);
}

export function unixNow(): number {
  return Math.floor(Date.now() / 1000);
}

/** Compact XML-ish rendering for logs and error messages. */
export function nodeToString(n: BinaryNode, depth = 0): string {
  const attrs = Object.entries(n.attrs)
    .map(([k, v]) => ` ${k}="${v}"`)
    .join('');
  if (n.content === undefined) {
    return `<${n.tag}${attrs}/>`;
  }
  if (Array.isArray(n.content)) {
    if (depth > 4) {
      return `<${n.tag}${attrs}>…</${n.tag}>`;
    }
    return `<${n.tag}${attrs}>${n.content.map((c) => nodeToString(c, depth + 1)).join('')}</${n.tag}>`;
  }
  const body = typeof n.content === 'string' ? n.content : `[${n.content.length} bytes]`;
  return `<${n.tag}${attrs}>${body}</${n.tag}>`;
}
