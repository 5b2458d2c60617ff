import { ApiProperty, ApiSchema } from '@nestjs/swagger';

/** A text of a channel (its name or description) with its version. */
@ApiSchema({ name: 'NewsletterText', description: 'A text of the channel (its name or its description) and when it last changed' })
export class NewsletterTextResponse {
  @ApiProperty({ description: 'The text' })
  text!: string;
  @ApiProperty({ description: "The text's version id at WhatsApp" })
  id!: string;
  @ApiProperty({ description: 'When it last changed (Unix seconds, as a string)', example: '1779628800' })
  update_time!: string;
}

/** A picture of a channel (the full one or its preview). */
@ApiSchema({ name: 'NewsletterPicture', description: "The channel's picture (or its preview) on WhatsApp's media servers" })
export class NewsletterPictureResponse {
  @ApiProperty({ description: "The picture's URL (empty when the channel has none)" })
  url!: string;
  @ApiProperty({ description: "The picture's id at WhatsApp (empty when none)" })
  id!: string;
  @ApiProperty({ description: '`IMAGE` for the picture, `PREVIEW` for its preview', example: 'IMAGE' })
  type!: string;
  @ApiProperty({ description: "The picture's path on WhatsApp's media servers (empty when none)" })
  direct_path!: string;
}

/** The channel's state at WhatsApp. */
@ApiSchema({ name: 'NewsletterState', description: "The channel's state at WhatsApp" })
export class NewsletterStateResponse {
  @ApiProperty({ description: '`active`, `suspended` or `geosuspended`', example: 'active' })
  type!: string;
}

/** Which reactions the channel takes. */
@ApiSchema({ name: 'NewsletterReactionCodes', description: 'Which reactions the channel accepts' })
export class NewsletterReactionCodesResponse {
  @ApiProperty({ description: '`ALL`, `BASIC`, `NONE` or `BLOCKLIST`', example: 'ALL' })
  value!: string;
}

/** The channel's settings. */
@ApiSchema({ name: 'NewsletterSettings', description: "The channel's settings" })
export class NewsletterSettingsResponse {
  @ApiProperty({ type: () => NewsletterReactionCodesResponse, description: 'Which reactions the channel accepts' })
  reaction_codes!: NewsletterReactionCodesResponse;
}

/** What the channel is: its name, description, invite, pictures, followers and settings. */
@ApiSchema({ name: 'NewsletterThreadMetadata', description: 'The channel itself: its name, description, invite key, pictures, followers and settings' })
export class NewsletterThreadMetadataResponse {
  @ApiProperty({ description: 'When the channel was created (Unix seconds, as a string)', example: '1779628800' })
  creation_time!: string;
  @ApiProperty({ description: "The channel's invite key: its link is https://whatsapp.com/channel/<invite>", example: '0029VaAbCdEfGhIjKlMnOp' })
  invite!: string;
  @ApiProperty({ type: () => NewsletterTextResponse, description: "The channel's name" })
  name!: NewsletterTextResponse;
  @ApiProperty({ type: () => NewsletterTextResponse, description: "The channel's description" })
  description!: NewsletterTextResponse;
  @ApiProperty({ description: 'How many follow the channel (a number, as a string)', example: '0' })
  subscribers_count!: string;
  @ApiProperty({ description: '`verified` or `unverified`: WhatsApp verified the channel', example: 'unverified' })
  verification!: string;
  @ApiProperty({ type: () => NewsletterPictureResponse, nullable: true, description: "The channel's picture (null when WhatsApp sent none)" })
  picture!: NewsletterPictureResponse | null;
  @ApiProperty({ type: () => NewsletterPictureResponse, description: "The preview of the channel's picture" })
  preview!: NewsletterPictureResponse;
  @ApiProperty({ type: () => NewsletterSettingsResponse, description: "The channel's settings" })
  settings!: NewsletterSettingsResponse;
}

/** The instance's own view of a channel. */
@ApiSchema({ name: 'NewsletterViewerMetadata', description: "The connected account's relation to the channel" })
export class NewsletterViewerMetadataResponse {
  @ApiProperty({ description: "`on` or `off`: the channel's notifications are muted", example: 'off' })
  mute!: string;
  @ApiProperty({ description: "The account's role: `owner`, `admin`, `subscriber` or `guest`", example: 'owner' })
  role!: string;
}

/** A channel (newsletter), as WhatsApp describes it. */
@ApiSchema({ name: 'Newsletter', description: "A WhatsApp channel (newsletter): the channel's metadata as WhatsApp returns it" })
export class NewsletterResponse {
  @ApiProperty({ description: "The channel's JID (`<digits>@newsletter`)", example: '120363123456789012@newsletter' })
  id!: string;
  @ApiProperty({ type: () => NewsletterStateResponse, description: "The channel's state" })
  state!: NewsletterStateResponse;
  @ApiProperty({ type: () => NewsletterThreadMetadataResponse, description: 'The channel itself' })
  thread_metadata!: NewsletterThreadMetadataResponse;
  @ApiProperty({
    type: () => NewsletterViewerMetadataResponse,
    nullable: true,
    description: "The connected account's relation to the channel (null when WhatsApp sent none)",
  })
  viewer_metadata!: NewsletterViewerMetadataResponse | null;
}

/** `/newsletter/create`, `/info` and `/link`. */
@ApiSchema({ name: 'NewsletterResponse', description: "A channel's metadata as WhatsApp returns it" })
export class NewsletterWrappedResponse {
  @ApiProperty({ type: () => NewsletterResponse, description: "The channel's metadata as WhatsApp returns it" })
  response!: NewsletterResponse;
}

/** `GET /newsletter/list`. */
@ApiSchema({ name: 'NewsletterList', description: 'The channels the connected account follows or owns' })
export class NewsletterListResponse {
  @ApiProperty({ type: () => [NewsletterResponse], description: 'The channels the connected WhatsApp account follows or owns, read from WhatsApp' })
  response!: NewsletterResponse[];
}

/** A channel action done (follow, mute, rename, delete, admins…). */
@ApiSchema({ name: 'NewsletterDone', description: 'The channel action was done' })
export class NewsletterDoneResponse {
  @ApiProperty({ enum: [true], description: 'Always true: WhatsApp accepted the action' })
  response!: true;
}

/** A channel post as WhatsApp lists it. */
@ApiSchema({ name: 'NewsletterPost', description: 'A post of a channel as WhatsApp lists it, with its views and reactions at the time of the read' })
export class NewsletterPostResponse {
  @ApiProperty({ type: 'integer', description: "The post's sequential id in the channel", example: 12345 })
  serverid!: number;
  @ApiProperty({ description: "The message's id", example: '3EB0B4302B3A8A52F7A1' })
  messageid!: string;
  @ApiProperty({ description: 'The type of the post (`text`, `media`, `poll`…)', example: 'text' })
  type!: string;
  @ApiProperty({ format: 'date-time', description: 'When the post was published' })
  timestamp!: string;
  @ApiProperty({ type: 'integer', description: 'How many views are known at the time of the read', example: 1200 })
  viewsCount!: number;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'integer' }, description: 'Emoji → how many reacted with it' })
  reactionCounts!: Record<string, number>;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    description: "The post's raw content as WhatsApp returned it (a WhatsApp Message), when available (null otherwise)",
  })
  message!: Record<string, unknown> | null;
}

/** `POST /newsletter/messages` (and the reference shape of the retired `/newsletter/updates`). */
@ApiSchema({ name: 'NewsletterMessages', description: "A page of a channel's posts, read directly from WhatsApp" })
export class NewsletterMessagesResponse {
  @ApiProperty({ type: () => [NewsletterPostResponse], description: "The channel's posts, returned directly by WhatsApp, newest first" })
  response!: NewsletterPostResponse[];
}

/** `POST /newsletter/subscribe`. */
@ApiSchema({ name: 'NewsletterLive', description: "How long the channel's live updates last" })
export class NewsletterLiveResponse {
  @ApiProperty({ description: 'How long WhatsApp granted the live updates, as a Go duration (`5m0s`)', example: '5m0s' })
  response!: string;
}

/** What an edit or a deletion of a post did. */
@ApiSchema({ name: 'NewsletterPostChanged', description: 'The post edited or deleted, and the message that did it' })
export class NewsletterPostChangedResponse {
  @ApiProperty({ description: "The channel's JID", example: '120363123456789012@newsletter' })
  jid!: string;
  @ApiProperty({ description: 'The message id of the post edited or deleted' })
  targetmessageid!: string;
  @ApiProperty({ type: 'integer', description: 'The server id of the post edited or deleted' })
  targetserverid!: number;
  @ApiProperty({ description: 'The id of the message sent to WhatsApp to edit or delete it' })
  messageid!: string;
  @ApiProperty({ type: 'integer', description: 'The server id WhatsApp acknowledged it with' })
  serverid!: number;
}

/** `POST /newsletter/messages/edit` and `/messages/delete`. */
@ApiSchema({ name: 'NewsletterPostChange', description: 'A recent channel post edited or deleted on WhatsApp' })
export class NewsletterPostChangeResponse {
  @ApiProperty({ type: () => NewsletterPostChangedResponse, description: 'The post changed' })
  response!: NewsletterPostChangedResponse;
}

/** A page of the channel directory. */
@ApiSchema({ name: 'NewsletterSearchPage', description: "A page of WhatsApp's directory of public channels" })
export class NewsletterSearchPageResponse {
  @ApiProperty({ type: 'string', nullable: true, description: 'The cursor of the next page: give it as `after` (null on the last page)' })
  after!: string | null;
  @ApiProperty({ type: () => [NewsletterResponse], description: 'The channels found' })
  data!: NewsletterResponse[];
}

/** `POST /newsletter/search`. */
@ApiSchema({ name: 'NewsletterSearch', description: "A page of WhatsApp's directory of public channels" })
export class NewsletterSearchResponse {
  @ApiProperty({ type: () => NewsletterSearchPageResponse, description: 'The page' })
  response!: NewsletterSearchPageResponse;
}
