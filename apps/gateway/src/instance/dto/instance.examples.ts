import { DISCONNECTED_INSTANCE_EXAMPLE, INSTANCE_EXAMPLE } from '../../common/dto/common.examples';
import { EXPORTED_REASON } from '../session-move.service';
import type {
  HistorySyncStatusResponse,
  InstanceConnectionResponse,
  InstanceCreatedResponse,
  InstanceDisconnectedResponse,
  InstanceResetResponse,
  InstanceStatusResponse,
  PrivacyResponse,
  ProxyChangedResponse,
  ProxyResponse,
  SessionExportedResponse,
  SessionImportedResponse,
  WaMessageLimitsResponse,
} from './instance.response';

/** The bodies the instance's routes answer, as the OpenAPI document shows them. */
export const INSTANCE_CREATED_EXAMPLE: InstanceCreatedResponse = {
  response: 'Instance created successfully',
  instance: DISCONNECTED_INSTANCE_EXAMPLE,
  connected: false,
  loggedIn: false,
  name: 'minha-instancia',
  token: DISCONNECTED_INSTANCE_EXAMPLE.token ?? '',
  info: 'The instance starts disconnected: call POST /instance/connect with its token to link a WhatsApp account.',
};

export const INSTANCE_CONNECTION_EXAMPLE: InstanceConnectionResponse = {
  connected: false,
  loggedIn: false,
  jid: null,
  instance: { ...DISCONNECTED_INSTANCE_EXAMPLE, status: 'connecting', qrcode: 'data:image/png;base64,iVBORw0KGgo…' },
  request_id: 'req_01HQ5Z8K3M',
};

export const INSTANCE_STATUS_EXAMPLE: InstanceStatusResponse = {
  instance: INSTANCE_EXAMPLE,
  status: { connected: true, loggedIn: true, jid: { user: '5511999999999', agent: 0, device: 0, server: 's.whatsapp.net' } },
};

export const INSTANCE_DISCONNECTED_EXAMPLE: InstanceDisconnectedResponse = {
  instance: DISCONNECTED_INSTANCE_EXAMPLE,
  response: 'Disconnected',
  info: 'The device has been disconnected from WhatsApp. A new QR code will be required for the next connection.',
};

export const INSTANCE_RESET_STARTED_EXAMPLE: InstanceResetResponse = {
  response: 'Instance reset started',
  resetting: true,
  instanceId: 'r183e2ef9597845',
  queuedRecoveryAttempted: true,
};
export const INSTANCE_RESET_IN_PROGRESS_EXAMPLE: InstanceResetResponse = {
  response: 'Instance reset already in progress',
  resetting: true,
  instanceId: 'r183e2ef9597845',
  queuedRecoveryAttempted: false,
};
export const INSTANCE_RESET_COOLDOWN_EXAMPLE: InstanceResetResponse = {
  response: 'Instance reset cooldown active (8s remaining)',
  resetting: false,
  instanceId: 'r183e2ef9597845',
  queuedRecoveryAttempted: false,
};

export const WA_MESSAGE_LIMITS_EXAMPLE: WaMessageLimitsResponse = {
  provider: 'whatsapp',
  reachable: true,
  can_send_new_messages: true,
  message: 'No WhatsApp restriction for starting new conversations was detected for the currently connected account.',
  message_ptbr: 'Nenhuma restrição de envio de novas conversas foi identificada no WhatsApp para a conta atualmente conectada.',
  diagnostics_endpoint: '/instance/wa_messages_limits',
  new_chat_message_capping: { available: true, status: 'NONE', used_quota: 3, total_quota: 1000, ote_status: 'NOT_ELIGIBLE', mv_status: 'NOT_ACTIVE' },
  reachout_timelock: { available: true, active: false, enforcement_type: 'DEFAULT' },
};

export const HISTORY_SYNC_STATUS_EXAMPLE: HistorySyncStatusResponse = {
  instanceId: 'r183e2ef9597845',
  request_id: 'req_01HQ5Z8K3M',
  paired: true,
  connected: true,
  history_days: 90,
  full_sync: false,
  status: 'completed',
  batches: 2,
  counts: { chats: 14, contacts: 30, messages: 412 },
  progress: 100,
  isLatest: true,
  first_batch_at: '2026-11-24T12:00:03.000Z',
  last_batch_at: '2026-11-24T12:00:09.000Z',
};

export const PRIVACY_EXAMPLE: PrivacyResponse = {
  groupadd: 'contacts',
  last: 'contacts',
  status: 'contacts',
  profile: 'all',
  readreceipts: 'all',
  online: 'all',
  calladd: 'all',
};
export const PRIVACY_CHANGED_EXAMPLE: PrivacyResponse = { ...PRIVACY_EXAMPLE, last: 'none', online: 'match_last_seen' };

export const PROXY_EXAMPLE: ProxyResponse = {
  mode: 'custom',
  effective_mode: 'custom',
  fallback: { active: false, reason: '', since: 0 },
  proxy_url: 'http://***:***@proxy.example:8080',
  proxy_fallback: 'internal',
  managed: false,
  last_test_at: 0,
  last_test_error: '',
  validation_error: false,
};

/** What `PROXY_EXAMPLE` becomes with mode internal through a proxy of the operator's managed pools. */
export const INTERNAL_PROXY_EXAMPLE: ProxyResponse = {
  ...PROXY_EXAMPLE,
  mode: 'internal',
  effective_mode: 'internal',
  effective_detail: 'managed_pool',
  proxy_url: '',
  proxy_fallback: '',
  managed: true,
};

export const PROXY_SET_EXAMPLE: ProxyChangedResponse = { details: 'Proxy configurado', proxy: PROXY_EXAMPLE, restart_requested: false };
export const PROXY_ROTATED_EXAMPLE: ProxyChangedResponse = {
  details: 'Proxy configurado',
  proxy: INTERNAL_PROXY_EXAMPLE,
  restart_requested: true,
  rotated: true,
};
export const PROXY_REMOVED_EXAMPLE: ProxyChangedResponse = {
  details: 'Proxy removido',
  proxy: { ...PROXY_EXAMPLE, mode: 'internal', effective_mode: 'internal', proxy_url: '', proxy_fallback: '' },
  restart_requested: false,
};

const BUNDLE_EXAMPLE = 'gwsession1.eyJ2IjoxLCJrZGYiOnsibmFtZSI6InNjcnlwdCIsIk4iOjEzMTA3MiwiciI6OCwicCI6MX19.q3J0c2Vzc2lvbi1jaXBoZXJ0ZXh0';

export const SESSION_EXPORTED_EXAMPLE: SessionExportedResponse = {
  response: 'Session exported',
  bundle: BUNDLE_EXAMPLE,
  instance: { ...DISCONNECTED_INSTANCE_EXAMPLE, lastDisconnectReason: EXPORTED_REASON },
  info: 'Keep the bundle and its passphrase safe: they are the WhatsApp session. Import it with POST /instance/import (admin token) on the new server; this instance can no longer connect, delete it when the move is done.',
};

export const SESSION_IMPORTED_EXAMPLE: SessionImportedResponse = {
  response: 'Session imported',
  instance: {
    ...DISCONNECTED_INSTANCE_EXAMPLE,
    lastDisconnectReason: 'imported from another server: POST /instance/connect connects it without a QR code',
  },
  token: DISCONNECTED_INSTANCE_EXAMPLE.token ?? '',
  connected: false,
  loggedIn: false,
  jid: '5511999999999:12@s.whatsapp.net',
  info: 'POST /instance/connect with this token connects it without a QR code. Delete the exported instance on the old server.',
};
