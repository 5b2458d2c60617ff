import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { CAMPAIGN_STATUSES, type CampaignStatus } from '@gw/persistence';
import { MessageResponse } from '../../common/dto/message.response';

/** A campaign (`/sender/listfolders`): the folder its messages are kept in, with its counts. */
@ApiSchema({ name: 'MessageQueueFolder', description: 'A mass-sending campaign: the folder its messages are kept in, its pace and its counts' })
export class MessageQueueFolderResponse {
  @ApiProperty({ description: "The campaign's unique id (`folder_id` in the other `/sender/*` routes)", example: 'f4a1b2c3d4e5f' })
  id!: string;
  @ApiProperty({ description: 'Additional information about the campaign (its `info`)' })
  info!: string;
  @ApiProperty({
    enum: CAMPAIGN_STATUSES,
    description: "The campaign's current status: `scheduled` (waiting for its time), `sending`, `paused`, `done`, or `deleting`",
  })
  status!: CampaignStatus;
  @ApiProperty({ type: 'integer', description: 'When the campaign starts (or started), in Unix milliseconds' })
  scheduled_for!: number;
  @ApiProperty({ type: 'integer', description: 'The shortest pause between two messages, in seconds' })
  delayMin!: number;
  @ApiProperty({ type: 'integer', description: 'The longest pause between two messages, in seconds' })
  delayMax!: number;
  @ApiProperty({ type: 'integer', description: 'How many messages were delivered' })
  log_delivered!: number;
  @ApiProperty({ type: 'integer', description: 'How many messages failed' })
  log_failed!: number;
  @ApiProperty({ type: 'integer', description: 'How many messages were played (audio and video)' })
  log_played!: number;
  @ApiProperty({ type: 'integer', description: 'How many messages were read' })
  log_read!: number;
  @ApiProperty({ type: 'integer', description: "How many messages were sent successfully (the reference's spelling)" })
  log_sucess!: number;
  @ApiProperty({ type: 'integer', description: 'How many messages the campaign holds' })
  log_total!: number;
  @ApiProperty({ description: "The instance owner's phone number" })
  owner!: string;
  @ApiProperty({ format: 'date-time', description: 'When the campaign was created' })
  created!: string;
  @ApiProperty({ format: 'date-time', description: 'When the campaign last changed' })
  updated!: string;
}

/** `POST /sender/simple` and `POST /sender/advanced`: the campaign created, its messages queued. */
@ApiSchema({ name: 'CampaignCreated', description: 'The campaign created: its folder id and how many messages were queued' })
export class CampaignCreatedResponse {
  @ApiProperty({ description: "The unique id of the campaign's folder", example: 'f4a1b2c3d4e5f' })
  folder_id!: string;
  @ApiProperty({ type: 'integer', description: 'How many messages were scheduled' })
  count!: number;
  @ApiProperty({ enum: ['queued'], description: "The operation's status" })
  status!: 'queued';
}

/** `POST /sender/edit`: the campaign's status after the action. */
@ApiSchema({ name: 'CampaignEdited', description: "The campaign's status after the action (`stop`, `continue` or `delete`)" })
export class CampaignEditedResponse {
  @ApiProperty({
    enum: ['paused', 'scheduled', 'deleting'],
    description: '`paused` after `stop`, `scheduled` after `continue`, `deleting` after `delete` (the deletion goes on in the background)',
  })
  status!: 'paused' | 'scheduled' | 'deleting';
  @ApiPropertyOptional({ description: 'A confirmation (`continue`), or that the deletion is asynchronous (`delete`)', example: 'Folder resumed successfully' })
  message?: string;
}

/** `POST /sender/cleardone`. */
@ApiSchema({ name: 'CampaignCleanup', description: 'The cleanup of the finished campaigns started' })
export class CampaignCleanupResponse {
  @ApiProperty({ description: "The operation's status", example: 'cleanup started' })
  status!: string;
}

/** `DELETE /sender/clearall`. */
@ApiSchema({ name: 'CampaignsCleared', description: 'Every campaign of the instance deleted, with its messages' })
export class CampaignsClearedResponse {
  @ApiProperty({ description: "The operation's status", example: 'processed' })
  status!: string;
  @ApiProperty({ type: 'integer', description: 'How many messages were deleted', example: 150 })
  messages_deleted!: number;
  @ApiProperty({ type: 'integer', description: 'How many campaign folders were deleted', example: 3 })
  folders_deleted!: number;
}

/** Where a page of `POST /sender/listmessages` sits; `page`, `pageSize` and `lastPage` only when the request was paged that way. */
@ApiSchema({ name: 'CampaignMessagesPagination', description: "Where a page of a campaign's messages sits" })
export class CampaignMessagesPagination {
  @ApiProperty({ type: 'integer', description: 'How many messages were found' })
  totalRecords!: number;
  @ApiProperty({ type: 'integer', description: 'The limit applied to this page' })
  limit!: number;
  @ApiProperty({ type: 'integer', description: 'The offset actually used for this page' })
  offset!: number;
  @ApiPropertyOptional({ type: 'integer', description: 'The page number (1 is the first), when `page`/`pageSize` were sent' })
  page?: number;
  @ApiPropertyOptional({ type: 'integer', description: 'The page size, when `page`/`pageSize` were sent' })
  pageSize?: number;
  @ApiPropertyOptional({ type: 'integer', description: 'The number of the last page, when `page`/`pageSize` were sent' })
  lastPage?: number;
}

/** `POST /sender/listmessages`: a page of a campaign's messages. */
@ApiSchema({ name: 'CampaignMessages', description: "A page of a campaign's messages" })
export class CampaignMessagesResponse {
  @ApiProperty({ type: () => MessageResponse, isArray: true, description: "The campaign's messages of this page" })
  messages!: MessageResponse[];
  @ApiProperty({ type: () => CampaignMessagesPagination, description: 'Where the page sits' })
  pagination!: CampaignMessagesPagination;
}
