import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';

/** `POST /call/make`. */
@ApiSchema({ name: 'CallMade', description: "A call started: the contact's phone rings" })
export class CallMadeResponse {
  @ApiProperty({ enum: ['Call successful'], description: 'The call was started' })
  response!: 'Call successful';
  @ApiProperty({ description: "The call's id on WhatsApp" })
  callId!: string;
  @ApiProperty({ description: 'The contact called, as a JID (number@s.whatsapp.net)' })
  number!: string;
  @ApiPropertyOptional({ type: 'integer', description: 'After how many seconds the call hangs up, when `call_duration` was given' })
  call_duration?: number;
}

/** `POST /call/reject`. */
@ApiSchema({ name: 'CallRejected', description: 'An incoming call turned down' })
export class CallRejectedResponse {
  @ApiProperty({ enum: ['Call rejected'], description: 'The call was rejected' })
  response!: 'Call rejected';
  @ApiProperty({ description: "The call's id (the id of its stored `call` message)" })
  id!: string;
  @ApiProperty({ description: 'Who was calling: their phone number JID when known, else the chat' })
  number!: string;
}
