import { ApiProperty, ApiSchema } from '@nestjs/swagger';

/** A delivery that failed for good, as the webhooks' and the event sinks' error logs list it. */
@ApiSchema({ name: 'WebhookError', description: 'A delivery to a webhook or event sink that failed for good' })
export class WebhookErrorResponse {
  @ApiProperty({ format: 'date-time', description: 'When the delivery gave up' })
  created!: string;
  @ApiProperty({ description: 'Where it was delivered (the URL, with the event path when `addUrlEvents` is on; a broker with its password masked)' })
  url!: string;
  @ApiProperty({ enum: ['local', 'global'], description: "`local`: the instance's own webhook or sink; `global`: the operator's" })
  type!: 'local' | 'global';
  @ApiProperty({ description: 'The event delivered (`messages`, `connection`…)' })
  event!: string;
  @ApiProperty({ description: "The message's type, for a message event (what `addUrlTypesMessages` appends)" })
  message_type!: string;
  @ApiProperty({ type: 'integer', description: 'The HTTP status the receiver answered the last try with (0: no answer)' })
  status_code!: number;
  @ApiProperty({ type: 'integer', description: 'How many tries were made' })
  attempts!: number;
  @ApiProperty({ description: 'Why the last try failed' })
  error!: string;
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'The body that was being delivered' })
  payload!: Record<string, unknown>;
}
