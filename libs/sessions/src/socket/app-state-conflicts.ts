import { ErrorCode, RpcError } from '@gw/contracts';
import { getBinaryNodeChildren, type BinaryNode, type WASocket } from '../baileys';

/** The text of the `<error>` put on a result whose upload WhatsApp refused as stale (the query throws with it). */
export const APP_STATE_CONFLICT = 'app state conflict';

/** Uploads refused with a 409 are sent again this many times (each after a resync); then the caller gets Conflict. */
export const CONFLICT_RETRIES = 3;

/** Where Baileys (rc14 Socket/socket.js) hands a received node to the query waiting for its id: `TAG:<id>` (its DEF_TAG_PREFIX). */
const TAG_PREFIX = 'TAG:';

type Emitter = { emit(event: string | symbol, ...args: unknown[]): boolean };

/**
 * Makes an app-state upload WhatsApp refused as stale fail instead of pass as stored.
 *
 * WhatsApp answers an upload whose base version is behind the collection's (another device changed it
 * meanwhile) with a result IQ whose collection says so: `<sync><collection name=… type="error"><error
 * code="409" text="conflict"/><patches>…</patches></collection></sync>` (whatsmeow issues #382 and #686;
 * whatsmeow's sendAppState fails on a collection of type error). Baileys 7.0.0-rc14's appPatch (chatModify,
 * labels, contacts, quick replies, notes) only looks for an `<error>` at the IQ's top level, so it took the
 * refused patch for stored: the API said ok, the change never reached WhatsApp, and the version Baileys
 * stored counted the refused patch, so the other device's change was never fetched either.
 *
 * The query waiting for the answer gets it from the `TAG:<id>` event: for a result with a 409 collection,
 * that event carries a copy of the node with an `<error code="409">` at its top level, so the query throws
 * (a Boom, `data` 409) and appPatch stores nothing (its key transaction rolls back). A copy, not the node
 * with an error pushed into it: rc14's getBinaryNodeChildren indexes a node's children once, in a WeakMap,
 * at its first look-up, so a child added to a node already looked at stays unseen (why a `frame` listener
 * that pushed the error did not make the query throw). Only 409s: only an upload conflicts, and a fetch's
 * collection error must not end the other collections' sync. The caller sends the change again
 * (`retryOnAppStateConflict`). Call before the socket connects; other wrappers of `emit` may come after.
 */
export function surfaceAppStateConflicts(socket: Pick<WASocket, 'ws'>): void {
  const ws = socket.ws as unknown as Emitter;
  const emit = ws.emit.bind(ws);
  ws.emit = (event, ...args) => {
    const refused = typeof event === 'string' && event.startsWith(TAG_PREFIX) ? refusedUpload(args[0]) : undefined;
    return refused ? emit(event, refused, ...args.slice(1)) : emit(event, ...args);
  };
}

/** The answer with the 409 at its top level, if it refuses an app-state upload as stale. */
function refusedUpload(frame: unknown): BinaryNode | undefined {
  const node = frame as BinaryNode | undefined;
  if (!node || node.tag !== 'iq' || node.attrs?.type !== 'result' || !Array.isArray(node.content)) return undefined;
  const content = node.content;
  if (content.some((child) => child.tag === 'error')) return undefined;
  const conflict = content
    .filter((child) => child.tag === 'sync')
    .flatMap((sync) => getBinaryNodeChildren(sync, 'collection'))
    .find((collection) => collection.attrs.type === 'error' && getBinaryNodeChildren(collection, 'error')[0]?.attrs.code === '409');
  if (!conflict) return undefined;
  const error: BinaryNode = { tag: 'error', attrs: { code: '409', text: `${APP_STATE_CONFLICT} (${conflict.attrs.name ?? 'collection'})` } };
  return { ...node, content: [...content, error] };
}

/** Whether an error is an app-state upload WhatsApp refused with a 409 (as `surfaceAppStateConflicts` raises it). */
export function isAppStateConflict(error: unknown): boolean {
  const { data, message } = (error ?? {}) as { data?: unknown; message?: unknown };
  return data === 409 && typeof message === 'string' && message.startsWith(APP_STATE_CONFLICT);
}

/**
 * Runs an app-state change (one upload: a chatModify, an addLabel…), again after a 409: Baileys' appPatch
 * resyncs the collection before it uploads, so the next try carries the other device's patches, is based
 * on the current version, and lands once. `change` runs whole each time: it must upload at most once, or
 * skip what landed. After CONFLICT_RETRIES refused tries the caller gets Conflict (409) naming the cause.
 */
export async function retryOnAppStateConflict<T>(change: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await change();
    } catch (error) {
      if (!isAppStateConflict(error)) throw error;
      if (attempt >= CONFLICT_RETRIES)
        throw new RpcError(ErrorCode.Conflict, 'WhatsApp refused the change: the app state kept changing on another device meanwhile, try again');
    }
  }
}
