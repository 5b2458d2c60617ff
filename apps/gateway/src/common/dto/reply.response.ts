import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';

/** The plain acknowledgement many actions answer with. */
@ApiSchema({ name: 'Response', description: 'The plain acknowledgement of an action: what was done, in words' })
export class ReplyResponse {
  @ApiProperty({ description: 'What was done', example: 'Chat presence sent successfully' })
  response!: string;
}

/** `DELETE /instance` and other acknowledgements with a detail. */
@ApiSchema({ name: 'ResponseWithInfo', description: 'The acknowledgement of an action, with a detail' })
export class ReplyWithInfoResponse {
  @ApiProperty({ description: 'What was done', example: 'Instance Deleted' })
  response!: string;
  @ApiPropertyOptional({ description: 'A detail of what was done, or of what follows from it' })
  info?: string;
}

/** The `{code, message, data}` error of a few routes (uazapiGO's shape for them, e.g. GET /quick-replies/{id}'s 401). */
@ApiSchema({ name: 'CodedError', description: 'An error in the `{code, message, data}` shape a few routes answer as uazapiGO does' })
export class CodedErrorResponse {
  @ApiProperty({ type: 'integer', description: "The HTTP status again, as the body's code", example: 401 })
  code!: number;
  @ApiProperty({ description: 'What went wrong, in words', example: 'Invalid token' })
  message!: string;
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'Details of the error (empty when there are none)' })
  data!: Record<string, unknown>;
}
