/** Example bodies of `/admin/restart` and `/admin/token/rotate`. */
import type { AdminTokenRotatedResponse, RestartScheduledResponse } from './admin.response';

export const RESTART_SCHEDULED_EXAMPLE: RestartScheduledResponse = {
  message: 'Restart scheduled: every session reconnects gracefully from its stored credentials',
};

export const ADMIN_TOKEN_ROTATED_EXAMPLE: AdminTokenRotatedResponse = {
  success: true,
  message: 'Admin token rotated successfully',
  admin_token: '9f2c4e6a8b0d1f3a5c7e9b1d3f5a7c9e1b3d5f7a9c1e3b5d7f9a1c3e5b7d9f1a',
  license_sync_triggered: false,
  license_synced: false,
  timestamp: 1767268800000,
};
