import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';

/** A label of the instance, as its phone's app state last said (`GET /labels`). */
@ApiSchema({ name: 'Label', description: 'A label of the instance (WhatsApp Business), as its phone last said' })
export class LabelResponse {
  @ApiProperty({ description: 'The label as `<owner>:<labelid>`', example: '5511999999999:10' })
  id!: string;
  @ApiProperty({ description: "The label's name", example: 'Cliente VIP' })
  name!: string;
  @ApiProperty({ type: 'integer', description: "The label's colour, 0 to 19 (WhatsApp's palette)", example: 2 })
  color!: number;
  @ApiProperty({ description: 'The colour as `#RRGGBB` (empty for a colour outside the palette)', example: '#FF9DFF' })
  colorHex!: string;
  @ApiProperty({ description: "The label's id on WhatsApp (what `/label/edit` and `/chat/labels` take)", example: '10' })
  labelid!: string;
  @ApiProperty({ description: "The instance's phone number", example: '5511999999999' })
  owner!: string;
  @ApiProperty({ format: 'date-time', description: 'When the gateway first stored the label' })
  created!: string;
  @ApiProperty({ format: 'date-time', description: 'When the gateway last stored a change of the label' })
  updated!: string;
}

/** `POST /labels/refresh`: the re-read started, or one is already running. */
@ApiSchema({ name: 'LabelRefresh', description: 'A reread of the labels from WhatsApp: started, or already running' })
export class LabelRefreshResponse {
  @ApiProperty({ description: 'Always true: the request was taken' })
  success!: boolean;
  @ApiProperty({
    description: "The reread's id: the `x-request-id` sent (or one made up), or the running reread's; the labels events of the reread carry it",
  })
  request_id!: string;
  @ApiProperty({ enum: ['started', 'in_progress'], description: '`started` now, or `in_progress`: an earlier reread is still running' })
  status!: 'started' | 'in_progress';
  @ApiProperty({ description: 'What happened, in words' })
  message!: string;
  @ApiProperty({ description: 'Whether the complete (heavier) reread was asked for' })
  force!: boolean;
  @ApiProperty({ description: 'The same as `force` (the reference names it both ways)' })
  fullSync!: boolean;
}

/** `POST /label/edit`. */
@ApiSchema({ name: 'LabelEdited', description: 'A label created, edited or deleted' })
export class LabelEditedResponse {
  @ApiProperty({ enum: ['Label created', 'Label edited'], description: 'What was done (a deletion is an edit)' })
  response!: 'Label created' | 'Label edited';
  @ApiPropertyOptional({ description: 'The new label\'s id, when one was created (`labelid: "new"`)' })
  labelid?: string;
}
