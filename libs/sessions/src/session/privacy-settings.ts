import { ErrorCode, PRIVACY_SETTING_VALUES, PRIVACY_SETTINGS, RpcError, privacySettingsOf, type PrivacySettings, type StatusPrivacy } from '@gw/contracts';
import { getBinaryNodeChild, getBinaryNodeChildren, type BinaryNode, type WASocket } from '../baileys';

type Setter = (socket: WASocket, value: string) => Promise<void>;

/* eslint-disable @typescript-eslint/no-explicit-any -- Baileys types each setter with its own literal union */
const SETTERS: Record<keyof PrivacySettings, Setter> = {
  groupadd: (s, v) => s.updateGroupsAddPrivacy(v as any),
  last: (s, v) => s.updateLastSeenPrivacy(v as any),
  status: (s, v) => s.updateStatusPrivacy(v as any),
  profile: (s, v) => s.updateProfilePicturePrivacy(v as any),
  readreceipts: (s, v) => s.updateReadReceiptsPrivacy(v as any),
  online: (s, v) => s.updateOnlinePrivacy(v as any),
  calladd: (s, v) => s.updateCallPrivacy(v as any),
};
/* eslint-enable @typescript-eslint/no-explicit-any */

/** Checks every key and value before anything is sent, so a bad request changes nothing. */
export function validatePrivacySettings(settings: PrivacySettings): Array<[keyof PrivacySettings, string]> {
  if (typeof settings !== 'object' || settings === null) throw new RpcError(ErrorCode.BadRequest, 'settings must be an object');
  const entries = Object.entries(settings);
  if (entries.length === 0) throw new RpcError(ErrorCode.BadRequest, 'no privacy setting given');
  const checked: Array<[keyof PrivacySettings, string]> = [];
  for (const [key, value] of entries) {
    const setting = PRIVACY_SETTINGS.find((name) => name === key);
    if (!setting) throw new RpcError(ErrorCode.BadRequest, `unknown privacy setting: ${key}`);
    const values: readonly string[] = PRIVACY_SETTING_VALUES[setting];
    if (typeof value !== 'string' || !values.includes(value))
      throw new RpcError(ErrorCode.BadRequest, `invalid value for ${key}: must be one of ${values.join(', ')}`);
    checked.push([setting, value]);
  }
  return checked;
}

/** The settings WhatsApp reports that the API names (uazapiGO's seven), each with a value it documents. */
export async function readPrivacySettings(socket: WASocket): Promise<PrivacySettings> {
  return privacySettingsOf(await socket.fetchPrivacySettings(true));
}

/** Applies each setting in turn, then returns the full settings as WhatsApp reports them. */
export async function writePrivacySettings(socket: WASocket, settings: PrivacySettings): Promise<PrivacySettings> {
  for (const [key, value] of validatePrivacySettings(settings)) await SETTERS[key](socket, value);
  return readPrivacySettings(socket);
}

const STATUS_AUDIENCES = new Set<StatusPrivacy['type']>(['contacts', 'blacklist', 'whitelist']);

/**
 * The status (story) audience the phone keeps: `<iq xmlns="status" type="get"><privacy/></iq>`
 * answers one `<list type=… default=…>` per stored audience, with `<user jid=…/>` entries; the
 * default one applies. Baileys has no helper for it (its `status` privacy setting is who sees the
 * About text, not the stories).
 */
export async function readStatusPrivacy(socket: Pick<WASocket, 'query'>): Promise<StatusPrivacy> {
  let result: BinaryNode;
  try {
    result = await socket.query({ tag: 'iq', attrs: { xmlns: 'status', to: 's.whatsapp.net', type: 'get' }, content: [{ tag: 'privacy', attrs: {} }] });
  } catch (error) {
    // 404 item-not-found: the account never stored an audience, so WhatsApp's default applies (whatsmeow
    // broadcast.go:102-104, GetStatusPrivacy answers DefaultStatusPrivacy, contacts).
    if ((error as { data?: unknown })?.data === 404) return { type: 'contacts', list: [] };
    throw error;
  }
  const lists = getBinaryNodeChildren(getBinaryNodeChild(result, 'privacy'), 'list');
  const chosen = lists.find((list) => list.attrs.default === 'true') ?? lists[0];
  // Nothing stored: WhatsApp's default, every saved contact.
  if (!chosen) return { type: 'contacts', list: [] };
  const type = chosen.attrs.type as StatusPrivacy['type'];
  if (!STATUS_AUDIENCES.has(type)) throw new Error(`unknown status audience type ${chosen.attrs.type}`);
  return {
    type,
    list: getBinaryNodeChildren(chosen, 'user')
      .map((user) => user.attrs.jid)
      .filter((jid): jid is string => typeof jid === 'string' && jid.includes('@')),
  };
}
