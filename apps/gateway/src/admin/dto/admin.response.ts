import { ApiProperty, ApiSchema } from '@nestjs/swagger';

/** `POST /admin/restart`. */
@ApiSchema({ name: 'RestartScheduled', description: 'Every session reconnects from its stored credentials' })
export class RestartScheduledResponse {
  @ApiProperty({
    enum: ['Restart scheduled: every session reconnects gracefully from its stored credentials'],
    description: 'What was done, in words',
  })
  message!: string;
}

/** `POST /admin/token/rotate`: the new admin token (the old one stops working at once). */
@ApiSchema({ name: 'AdminTokenRotated', description: 'The new admin token; the old one no longer works' })
export class AdminTokenRotatedResponse {
  @ApiProperty({ description: 'Always true: the token was rotated' })
  success!: boolean;
  @ApiProperty({ enum: ['Admin token rotated successfully'], description: 'What was done, in words' })
  message!: string;
  @ApiProperty({ description: 'The new admin token: send it as the `admintoken` header from now on' })
  admin_token!: string;
  @ApiProperty({ description: 'A license sync was started (always false: this gateway has no license server)' })
  license_sync_triggered!: boolean;
  @ApiProperty({ description: 'The license was synced (always false: this gateway has no license server)' })
  license_synced!: boolean;
  @ApiProperty({ type: 'integer', format: 'int64', description: 'When the token was rotated (Unix time in milliseconds)' })
  timestamp!: number;
}
