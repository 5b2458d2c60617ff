/** Instance connection status as the API shows it. */
/** `hibernated` (uazapi 2.1.1): paused on purpose, no socket and no lease, credentials kept; `/instance/connect` wakes it without a QR. */
export type InstanceStatus = 'disconnected' | 'connecting' | 'connected' | 'hibernated';

/** Browser profiles a connect may ask for; `auto` keeps a saved valid profile or picks one. */
export const BROWSER_CHOICES = ['auto', 'safari', 'firefox', 'edge', 'chrome'] as const;
export type BrowserChoice = (typeof BROWSER_CHOICES)[number];
export type BrowserProfile = Exclude<BrowserChoice, 'auto'>;

/** The Instance record of the API (field names as uazapiGO spells them, `plataform` included). */
export interface InstanceRecord {
  id: string;
  token: string;
  status: InstanceStatus;
  paircode: string;
  qrcode: string;
  name: string;
  profileName: string;
  profilePicUrl: string;
  isBusiness: boolean;
  plataform: string;
  systemName: string;
  owner: string;
  lastDisconnect: string;
  lastDisconnectReason: string;
  adminField01: string;
  adminField02: string;
  openai_apikey: string;
  chatbot_enabled: boolean;
  chatbot_ignoreGroups: boolean;
  chatbot_stopConversation: string;
  chatbot_stopMinutes: number;
  chatbot_stopWhenYouSendMsg: number;
  fieldsMap: Record<string, string>;
  msg_delay_min: number;
  msg_delay_max: number;
  currentPresence: string;
  currentTime: string;
  created: string;
  updated: string;
}

/** How a new pairing requests history, derived from `history_days` (see the spec's five rules). */
export interface HistoryRequest {
  days: number;
  fullSync: boolean;
}

/** The JID object of the status endpoint. */
export interface JidObject {
  user: string;
  agent: number;
  device: number;
  server: string;
}
