import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { InstanceResponse } from '../../common/dto/instance.response';

/** A WhatsApp id as the connection reports it. */
@ApiSchema({ name: 'InstanceJid', description: 'The WhatsApp id (JID) of the connected account' })
export class InstanceJidResponse {
  @ApiProperty({ description: 'The user part: the phone number', example: '5511999999999' })
  user!: string;
  @ApiProperty({ type: 'integer', description: 'The agent (0)' })
  agent!: number;
  @ApiProperty({ type: 'integer', description: 'The device (0: the phone itself)' })
  device!: number;
  @ApiProperty({ description: 'The server (`s.whatsapp.net`)', example: 's.whatsapp.net' })
  server!: string;
}

/** `POST /instance/create` (and `/instance/init`): the new instance, disconnected, with its token. */
@ApiSchema({ name: 'InstanceCreated', description: 'The instance created: disconnected, with the token every other instance route asks for' })
export class InstanceCreatedResponse {
  @ApiProperty({ description: 'What happened, in words', example: 'Instance created successfully' })
  response!: string;
  @ApiProperty({ type: () => InstanceResponse, description: 'The new instance' })
  instance!: InstanceResponse;
  @ApiProperty({ description: 'Always false: a new instance is not connected to WhatsApp' })
  connected!: boolean;
  @ApiProperty({ description: 'Always false: no WhatsApp account is logged in yet' })
  loggedIn!: boolean;
  @ApiProperty({ description: "The instance's name" })
  name!: string;
  @ApiProperty({ description: "The instance's token (the `token` header of its routes): keep it" })
  token!: string;
  @ApiProperty({ description: 'What to do next, in words' })
  info!: string;
}

/** `POST /instance/connect`: the connection started, its QR code or pairing code in `instance`. */
@ApiSchema({ name: 'InstanceConnection', description: 'The connection started: the QR code or pairing code is in `instance`' })
export class InstanceConnectionResponse {
  @ApiProperty({ description: 'The instance is connected to WhatsApp' })
  connected!: boolean;
  @ApiProperty({ description: 'A WhatsApp account is logged in on the instance' })
  loggedIn!: boolean;
  @ApiProperty({ type: () => InstanceJidResponse, nullable: true, description: 'The WhatsApp id, once logged in (null before)' })
  jid!: InstanceJidResponse | null;
  @ApiProperty({ type: () => InstanceResponse, description: 'The instance, with its QR code (`qrcode`) or pairing code (`paircode`) while pairing' })
  instance!: InstanceResponse;
  @ApiPropertyOptional({ description: 'Correlates the connect with its events: the `x-request-id` sent, or one made up' })
  request_id?: string;
  @ApiPropertyOptional({
    description: 'Present when there is no QR code, pairing code or connection yet: why',
    example: 'cannot reach WhatsApp: connect ECONNREFUSED 157.240.0.53:443',
  })
  reason?: string;
}

/** The connection's state inside `GET /instance/status`. */
@ApiSchema({ name: 'InstanceConnectionState', description: "The instance's connection to WhatsApp now" })
export class InstanceConnectionStateResponse {
  @ApiProperty({ description: 'The instance is connected to WhatsApp' })
  connected!: boolean;
  @ApiProperty({ description: 'Connected, with a WhatsApp account logged in' })
  loggedIn!: boolean;
  @ApiProperty({ type: () => InstanceJidResponse, nullable: true, description: 'The WhatsApp id of the account while connected (null otherwise)' })
  jid!: InstanceJidResponse | null;
}

/** `GET /instance/status` and `GET /status`. */
@ApiSchema({ name: 'InstanceStatus', description: 'The instance and its connection to WhatsApp' })
export class InstanceStatusResponse {
  @ApiProperty({ type: () => InstanceResponse, description: 'The instance, with the QR code or pairing code while connecting' })
  instance!: InstanceResponse;
  @ApiProperty({ type: () => InstanceConnectionStateResponse, description: 'The connection now' })
  status!: InstanceConnectionStateResponse;
  @ApiPropertyOptional({ description: 'Present when the instance is disconnected, or connecting without a QR code or pairing code: why' })
  reason?: string;
}

/** `POST /instance/disconnect` and `POST /instance/hibernate`. */
@ApiSchema({ name: 'InstanceDisconnected', description: 'The instance disconnected (or hibernated), as it now is' })
export class InstanceDisconnectedResponse {
  @ApiProperty({ type: () => InstanceResponse, description: 'The instance, after the change' })
  instance!: InstanceResponse;
  @ApiProperty({ description: 'What happened, in words', example: 'Disconnected' })
  response!: string;
  @ApiProperty({ description: 'What it means for the next connection, in words' })
  info!: string;
}

/** `POST /instance/reset`: started, already in progress, or in cooldown (403 and 409 carry the same fields beside `error`). */
@ApiSchema({ name: 'InstanceReset', description: "A reset of the instance's runtime: started, already in progress, or in cooldown" })
export class InstanceResetResponse {
  @ApiProperty({ description: 'What happened, in words (the cooldown with its seconds left)', example: 'Instance reset started' })
  response!: string;
  @ApiProperty({ description: 'A reset is running now (started by this request or an earlier one)' })
  resetting!: boolean;
  @ApiProperty({ description: "The instance's id" })
  instanceId!: string;
  @ApiPropertyOptional({ description: 'The async queue held sends, and its dispatchers were woken to send them after the reconnect' })
  queuedRecoveryAttempted?: boolean;
}

const STORED_LIMIT_DESCRIPTION =
  "WhatsApp's live query failed (`lookup_error`): the limit the instance learnt from a refused send (463/475) or WhatsApp's notification, while it lasts";

/** The new-chat message capping inside `GET /instance/wa_messages_limits`. */
@ApiSchema({ name: 'NewChatMessageCapping', description: "WhatsApp's cap on messages that start new conversations, per cycle" })
export class NewChatMessageCappingResponse {
  @ApiProperty({ description: 'WhatsApp answered the query' })
  available!: boolean;
  @ApiPropertyOptional({ description: "The cap's status as WhatsApp names it (`NONE`, `CAPPED`…)", example: 'NONE' })
  status?: string;
  @ApiPropertyOptional({ type: 'integer', nullable: true, description: 'New-conversation messages used in this cycle (null when WhatsApp did not say)' })
  used_quota?: number | null;
  @ApiPropertyOptional({ type: 'integer', nullable: true, description: 'New-conversation messages allowed in this cycle (null when WhatsApp did not say)' })
  total_quota?: number | null;
  @ApiPropertyOptional({ format: 'date-time', description: 'When the cycle started' })
  cycle_start?: string;
  @ApiPropertyOptional({ format: 'date-time', description: 'When the cycle ends' })
  cycle_end?: string;
  @ApiPropertyOptional({ format: 'date-time', description: "When WhatsApp's server sent the answer" })
  server_sent_at?: string;
  @ApiPropertyOptional({ description: "WhatsApp's one-time-exception status of the account (`NOT_ELIGIBLE`…)" })
  ote_status?: string;
  @ApiPropertyOptional({ description: "WhatsApp's message-volume status of the account (`NOT_ACTIVE`…)" })
  mv_status?: string;
  @ApiPropertyOptional({ description: 'Why the query failed (with `available: false`)' })
  lookup_error?: string;
  @ApiPropertyOptional({ enum: ['stored'], description: STORED_LIMIT_DESCRIPTION })
  source?: 'stored';
}

/** The reach-out time lock inside `GET /instance/wa_messages_limits`. */
@ApiSchema({ name: 'ReachoutTimelock', description: "WhatsApp's temporary lock on starting new conversations" })
export class ReachoutTimelockResponse {
  @ApiProperty({ description: 'WhatsApp answered the query' })
  available!: boolean;
  @ApiPropertyOptional({ description: 'The account may not start new conversations now' })
  active?: boolean;
  @ApiPropertyOptional({ format: 'date-time', description: 'When the lock ends' })
  until?: string;
  @ApiPropertyOptional({ description: "The lock's kind as WhatsApp names it (`DEFAULT`…)" })
  enforcement_type?: string;
  @ApiPropertyOptional({ description: 'Why the query failed (with `available: false`)' })
  lookup_error?: string;
  @ApiPropertyOptional({ enum: ['stored'], description: STORED_LIMIT_DESCRIPTION })
  source?: 'stored';
}

/** `GET /instance/wa_messages_limits`: WhatsApp's new-chat message capping and reach-out time lock for the account. */
@ApiSchema({
  name: 'WaMessageLimits',
  description: 'What WhatsApp says about the account starting new conversations: the message capping and the reach-out time lock',
})
export class WaMessageLimitsResponse {
  @ApiProperty({ description: 'Who was asked: always `whatsapp`', example: 'whatsapp' })
  provider!: string;
  @ApiProperty({ description: 'WhatsApp answered at least one of the two queries' })
  reachable!: boolean;
  @ApiProperty({ type: 'boolean', nullable: true, description: 'The account may start new conversations now (null when WhatsApp answered too little to say)' })
  can_send_new_messages!: boolean | null;
  @ApiPropertyOptional({
    enum: ['WHATSAPP_REACHOUT_TIMELOCK', 'WHATSAPP_NEW_CHAT_MESSAGE_CAPPING'],
    description: 'The restriction in force, when there is one',
  })
  error_key?: 'WHATSAPP_REACHOUT_TIMELOCK' | 'WHATSAPP_NEW_CHAT_MESSAGE_CAPPING';
  @ApiProperty({ description: 'The diagnosis, in English' })
  message!: string;
  @ApiProperty({ description: 'The diagnosis, in Portuguese' })
  message_ptbr!: string;
  @ApiPropertyOptional({ description: 'What WhatsApp reported about the restriction in force, in English' })
  provider_message?: string;
  @ApiPropertyOptional({ description: 'What WhatsApp reported about the restriction in force, in Portuguese' })
  provider_message_ptbr?: string;
  @ApiProperty({ description: 'The route giving this diagnosis', example: '/instance/wa_messages_limits' })
  diagnostics_endpoint!: string;
  @ApiProperty({ type: () => NewChatMessageCappingResponse, description: 'The new-chat message capping' })
  new_chat_message_capping!: NewChatMessageCappingResponse;
  @ApiProperty({ type: () => ReachoutTimelockResponse, description: 'The reach-out time lock' })
  reachout_timelock!: ReachoutTimelockResponse;
}

/** The counts inside `GET /instance/history-sync/status`. */
@ApiSchema({ name: 'HistorySyncCounts', description: 'What the history sync has brought so far' })
export class HistorySyncCountsResponse {
  @ApiProperty({ type: 'integer', description: 'Chats received' })
  chats!: number;
  @ApiProperty({ type: 'integer', description: 'Contacts received' })
  contacts!: number;
  @ApiProperty({ type: 'integer', description: 'Messages received' })
  messages!: number;
}

/** `GET /instance/history-sync/status`: the pairing's history (its `request_id`, as connect answered it) and how far it came. */
@ApiSchema({ name: 'HistorySyncStatus', description: 'The history WhatsApp sends after pairing, and how far it has come' })
export class HistorySyncStatusResponse {
  @ApiProperty({ description: "The instance's id" })
  instanceId!: string;
  @ApiProperty({ description: "The pairing's `request_id`, as `/instance/connect` answered it (empty before a pairing)" })
  request_id!: string;
  @ApiProperty({ description: 'A WhatsApp account is linked to the instance' })
  paired!: boolean;
  @ApiProperty({ description: 'The instance is connected now' })
  connected!: boolean;
  @ApiProperty({ type: 'integer', description: 'How many days of history the pairing asked for' })
  history_days!: number;
  @ApiProperty({ description: 'The pairing asked for the full history' })
  full_sync!: boolean;
  @ApiProperty({
    enum: ['none', 'waiting', 'in_progress', 'completed'],
    description: '`none`: no pairing yet; `waiting`: no batch arrived; `in_progress`; `completed`: the last batch arrived (or nothing came for a minute)',
  })
  status!: 'none' | 'waiting' | 'in_progress' | 'completed';
  @ApiProperty({ type: 'integer', description: 'Batches received' })
  batches!: number;
  @ApiProperty({ type: () => HistorySyncCountsResponse, description: 'What the batches held' })
  counts!: HistorySyncCountsResponse;
  @ApiProperty({ type: 'integer', nullable: true, description: 'The progress WhatsApp reported, in percent (null when it did not)' })
  progress!: number | null;
  @ApiProperty({ description: 'WhatsApp said the last batch was sent' })
  isLatest!: boolean;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, description: 'When the first batch arrived (null before)' })
  first_batch_at!: string | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, description: 'When the last batch arrived (null before)' })
  last_batch_at!: string | null;
}

const PRIVACY_VALUES = ['all', 'contacts', 'contact_blacklist', 'none'] as const;
type PrivacyValue = (typeof PRIVACY_VALUES)[number];

/** `GET|POST /instance/privacy`: who may see or do what. */
@ApiSchema({ name: 'Privacy', description: "The connected account's privacy settings: who may see or do what" })
export class PrivacyResponse {
  @ApiPropertyOptional({ enum: PRIVACY_VALUES, description: 'Who may add the account to groups' })
  groupadd?: PrivacyValue;
  @ApiPropertyOptional({ enum: PRIVACY_VALUES, description: 'Who may see when the account was last seen' })
  last?: PrivacyValue;
  @ApiPropertyOptional({ enum: PRIVACY_VALUES, description: "Who may see the account's status (the text under its name)" })
  status?: PrivacyValue;
  @ApiPropertyOptional({ enum: PRIVACY_VALUES, description: "Who may see the account's profile picture" })
  profile?: PrivacyValue;
  @ApiPropertyOptional({ enum: ['all', 'none'], description: 'Read receipts are sent (`all`) or not (`none`)' })
  readreceipts?: 'all' | 'none';
  @ApiPropertyOptional({ enum: ['all', 'match_last_seen'], description: 'Who may see the account online: everyone, or those who may see its last seen' })
  online?: 'all' | 'match_last_seen';
  @ApiPropertyOptional({ enum: ['all', 'known'], description: 'Who may call the account: everyone, or known contacts' })
  calladd?: 'all' | 'known';
}

/** The automatic fallback inside the proxy view. */
@ApiSchema({ name: 'ProxyFallback', description: 'A fallback from the configured proxy to another route' })
export class ProxyFallbackResponse {
  @ApiProperty({ description: 'True when the instance runs outside its configured route (this gateway never does: a failed proxy is not silently replaced)' })
  active!: boolean;
  @ApiProperty({ description: 'Why the current fallback is in use, in short, for diagnosis (empty when none)' })
  reason!: string;
  @ApiProperty({ type: 'integer', description: 'Since when the current fallback is in use, a Unix timestamp in milliseconds (0 when none)' })
  since!: number;
}

/** Where the instance's managed proxy is. */
@ApiSchema({ name: 'ProxyManagedLocation', description: "The place of the instance's proxy from the operator's managed pools" })
export class ProxyManagedLocationResponse {
  @ApiPropertyOptional({ description: 'The country' })
  country?: string;
  @ApiPropertyOptional({ description: 'The state' })
  state?: string;
  @ApiPropertyOptional({ description: 'The city' })
  city?: string;
}

/** `GET /instance/proxy`: the proxy settings, credentials masked. */
@ApiSchema({ name: 'Proxy', description: "The instance's proxy settings and the route its connection really uses (credentials masked)" })
export class ProxyResponse {
  @ApiProperty({
    enum: ['custom', 'internal', 'none'],
    description: "What is configured: `custom` (your `proxy_url`), `internal` (the operator's managed proxies) or `none` (a direct connection)",
  })
  mode!: 'custom' | 'internal' | 'none';
  @ApiProperty({ enum: ['custom', 'internal', 'direct'], description: 'What the connection really uses' })
  effective_mode!: 'custom' | 'internal' | 'direct';
  @ApiPropertyOptional({ enum: ['managed_pool'], description: "internal through a proxy of the operator's managed pools" })
  effective_detail?: 'managed_pool';
  @ApiProperty({ type: () => ProxyFallbackResponse, description: 'The fallback from the configured proxy' })
  fallback!: ProxyFallbackResponse;
  @ApiProperty({ description: 'The custom proxy URL, credentials masked (empty unless `custom`)' })
  proxy_url!: string;
  @ApiProperty({ description: 'With `custom`: what is used when the proxy fails (`internal`, `never`, or another URL, masked); empty otherwise' })
  proxy_fallback!: string;
  @ApiProperty({ description: "A proxy of the operator's managed pools is assigned to the instance" })
  managed!: boolean;
  @ApiPropertyOptional({ type: () => ProxyManagedLocationResponse, description: 'Where the managed proxy is, when one is assigned' })
  managed_location?: ProxyManagedLocationResponse;
  @ApiProperty({ type: 'integer', description: 'When the proxy was last tested or last failed, a Unix timestamp in milliseconds (0: never)' })
  last_test_at!: number;
  @ApiProperty({ description: 'The last error stored for diagnosis (empty: none stored)' })
  last_test_error!: string;
  @ApiProperty({ description: 'A shortcut for `last_test_error` not being empty' })
  validation_error!: boolean;
}

/** `POST|DELETE /instance/proxy`. */
@ApiSchema({ name: 'ProxyChanged', description: "The instance's proxy settings saved" })
export class ProxyChangedResponse {
  @ApiProperty({ description: 'What happened, in words', example: 'Proxy configurado' })
  details!: string;
  @ApiProperty({ type: () => ProxyResponse, description: 'The proxy settings now' })
  proxy!: ProxyResponse;
  @ApiProperty({ description: 'The connection was asked to reconnect through the new setting at once' })
  restart_requested!: boolean;
  @ApiPropertyOptional({ description: '`rotate_now` (uazapi 2.1.1): another proxy of the pools was taken at once' })
  rotated?: boolean;
}

/** `POST /instance/export`: the session as one encrypted bundle; this instance stays as a tombstone. */
@ApiSchema({ name: 'SessionExported', description: 'The session exported as an encrypted bundle; this instance stays as a tombstone that cannot connect' })
export class SessionExportedResponse {
  @ApiProperty({ enum: ['Session exported'], description: 'What was done' })
  response!: 'Session exported';
  @ApiProperty({
    pattern: '^gwsession1\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$',
    description:
      "The encrypted session: the linked device's credentials and the instance's settings (webhooks and sinks with their secrets, proxy, chatbot, Chatwoot, delays, fields map). Give it, with the passphrase, to `POST /instance/import` on the new server; it is the only copy",
  })
  bundle!: string;
  @ApiProperty({ type: () => InstanceResponse, description: 'This instance as it stays here: disconnected, without credentials; connecting it is refused' })
  instance!: InstanceResponse;
  @ApiProperty({ description: 'What to do next' })
  info!: string;
}

/** `POST /instance/import`: a new instance with the bundle's linked device, disconnected. */
@ApiSchema({ name: 'SessionImported', description: "A new instance with the bundle's linked device, disconnected; connect it with its new token" })
export class SessionImportedResponse {
  @ApiProperty({ enum: ['Session imported'], description: 'What was done' })
  response!: 'Session imported';
  @ApiProperty({ type: () => InstanceResponse, description: 'The new instance: disconnected, with the linked device of the bundle' })
  instance!: InstanceResponse;
  @ApiProperty({ description: "The new instance's token (a new one: the old server's token is not carried over)" })
  token!: string;
  @ApiProperty({ enum: [false], description: 'Always false: `POST /instance/connect` connects it, without a QR code' })
  connected!: false;
  @ApiProperty({ enum: [false], description: 'Always false until it is connected' })
  loggedIn!: false;
  @ApiProperty({ description: 'The linked device (`user:device@s.whatsapp.net`) the bundle carried' })
  jid!: string;
  @ApiProperty({ description: 'What to do next' })
  info!: string;
}
