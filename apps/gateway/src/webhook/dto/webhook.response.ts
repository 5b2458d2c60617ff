import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';

/** A webhook's configuration (`/webhook`, `/globalwebhook`). */
@ApiSchema({ name: 'Webhook', description: "A webhook: where the events go, which ones, and the delivery's options" })
export class WebhookResponse {
  @ApiProperty({ description: "The webhook's id" })
  id!: string;
  @ApiProperty({ description: 'Deliveries are on' })
  enabled!: boolean;
  @ApiProperty({ description: 'Where the events are posted' })
  url!: string;
  @ApiProperty({ type: [String], description: 'The events it receives (`messages`, `connection`…)' })
  events!: string[];
  @ApiProperty({ type: [String], description: 'The messages it leaves out (e.g. `wasSentByApi`, against loops)' })
  excludeMessages!: string[];
  @ApiProperty({ description: "The event's name is appended to the URL (`<url>/<event>`)" })
  addUrlEvents!: boolean;
  @ApiProperty({ description: "A message's type is appended to the URL too (`<url>/<event>/<type>`)" })
  addUrlTypesMessages!: boolean;
  @ApiProperty({ description: "The instance's token is sent with each event" })
  includeToken!: boolean;
  @ApiPropertyOptional({ description: 'The signing secret (whsec_…): answered once, when set or generated' })
  secret?: string;
  @ApiPropertyOptional({ description: 'Why deliveries stopped (e.g. the receiver answered 410)' })
  disabledReason?: string;
  @ApiPropertyOptional({ description: "The instance's id (absent on the global webhook)" })
  instance_id?: string;
  @ApiProperty({ format: 'date-time', description: 'When the webhook was created' })
  created!: string;
  @ApiProperty({ format: 'date-time', description: 'When the webhook last changed' })
  updated!: string;
}
