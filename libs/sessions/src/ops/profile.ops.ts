import { ErrorCode, RpcError } from '@gw/contracts';
import { jidNormalizedUser } from '@whiskeysockets/baileys';
import type { InboundMessageObserver } from '../messaging/inbound-message.observer';
import type { MediaSource } from '../outbound/media-source';
import type { OpHandlers, OpRequestParsers } from './op-handler';
import { loadPicture, pictureSourceOf } from './picture-source';
import { patchAppState } from './socket-handler';

/** The ops of the gateway's `profile/` area: the instance's own push name and picture. */
export type ProfileOps = 'profile.name' | 'profile.image';

/** WhatsApp's limit on a push name. */
export const MAX_PROFILE_NAME = 25;
/** The largest picture source taken (the reference answers 413 above it); Baileys makes the 640×640 JPEG WhatsApp takes. */
export const MAX_PROFILE_PICTURE_BYTES = 5 * 1024 * 1024;
/** How long the picture's URL is waited for after a change (the change itself is done by then). */
const PICTURE_URL_TIMEOUT_MS = 5_000;

/** WhatsApp's answer to a profile change (an IQ error, Baileys' Boom) as the bus's Refused; ours stay as they are. */
function profileRefusal(what: string) {
  return (error: unknown): never => {
    if (error instanceof RpcError) throw error;
    const { isBoom, data, message } = (error ?? {}) as { isBoom?: boolean; data?: unknown; message?: string };
    if (isBoom && typeof data === 'number')
      throw new RpcError(
        data === 403 || data === 401 ? ErrorCode.Forbidden : ErrorCode.Refused,
        `${what}: WhatsApp refused it (${data}): ${message || 'error'}`,
      );
    // sharp could not read the picture (not an image after all, or a truncated one).
    if (/unsupported image format|Input buffer|corrupt|premature end/i.test(message ?? ''))
      throw new RpcError(ErrorCode.BadRequest, 'invalid image format: send a JPEG, PNG or WebP picture');
    throw new RpcError(ErrorCode.Internal, `${what}: ${message ?? String(error)}`);
  };
}

export const profileRequests = {
  'profile.name': (raw, instanceId) => {
    const name = typeof raw.name === 'string' ? raw.name.trim() : '';
    if (!name || [...name].length > MAX_PROFILE_NAME) throw new RpcError(ErrorCode.BadRequest, `name must have 1 to ${MAX_PROFILE_NAME} characters`);
    return { instanceId, name };
  },
  'profile.image': (raw, instanceId) => ({ instanceId, picture: pictureSourceOf(raw.picture, 'image') }),
} satisfies OpRequestParsers<ProfileOps>;

export function profileOps(inbound: InboundMessageObserver, media?: MediaSource): OpHandlers<ProfileOps> {
  return {
    'profile.name': async (session, request) => {
      const socket = session.openSocket();
      // An app-state patch (critical_block setting_pushName): Baileys tells its own creds.update, which the session stores.
      await patchAppState(inbound, session, () => socket.updateProfileName(request.name)).catch(profileRefusal('error updating profile name'));
      return { name: request.name };
    },
    'profile.image': async (session, request) => {
      const socket = session.openSocket();
      const me = socket.user?.id ? jidNormalizedUser(socket.user.id) : '';
      if (!me) throw new RpcError(ErrorCode.NotConnected, 'instance is not connected');
      if ('remove' in request.picture) {
        await socket.removeProfilePicture(me).catch(profileRefusal('error removing profile image'));
        return { removed: true, url: '' };
      }
      const picture = await loadPicture(media, request.instanceId, request.picture, 'image', MAX_PROFILE_PICTURE_BYTES);
      await socket.updateProfilePicture(me, picture).catch(profileRefusal('error updating profile image'));
      const url = await socket.profilePictureUrl(me, 'image', PICTURE_URL_TIMEOUT_MS).catch(() => undefined);
      return { removed: false, url: url ?? '' };
    },
  };
}
