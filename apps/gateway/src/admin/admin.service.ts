import { Injectable } from '@nestjs/common';
import { SessionClient } from '../session/session.client';
import { AdminTokenService } from './admin-token.service';
import type { AdminTokenRotatedResponse, RestartScheduledResponse } from './dto/admin.response';

/** The operator's own routes: `/admin/restart`, `/admin/token/rotate` (the instance ones are InstanceService's). */
@Injectable()
export class AdminService {
  constructor(
    private readonly adminTokens: AdminTokenService,
    private readonly sessions: SessionClient,
  ) {}

  restart(): RestartScheduledResponse {
    this.sessions.restartAll();
    return { message: 'Restart scheduled: every session reconnects gracefully from its stored credentials' };
  }

  async rotateToken(): Promise<AdminTokenRotatedResponse> {
    const { token, rotatedAt } = await this.adminTokens.rotate();
    return {
      success: true,
      message: 'Admin token rotated successfully',
      admin_token: token,
      license_sync_triggered: false,
      license_synced: false,
      timestamp: rotatedAt,
    };
  }
}
