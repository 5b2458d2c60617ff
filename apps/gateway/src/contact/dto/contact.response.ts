import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { ChatResponse } from '../../common/dto/chat.response';

/** A contact as `/contacts` lists it. */
@ApiSchema({ name: 'Contact', description: 'A WhatsApp contact of the instance, with its names' })
export class ContactResponse {
  @ApiProperty({ description: "The contact's JID (`<number>@s.whatsapp.net`)", example: '5511999999999@s.whatsapp.net' })
  jid!: string;
  @ApiProperty({ description: 'The name saved in the phone\'s address book ("" when not saved)', example: 'João Silva' })
  contact_name!: string;
  @ApiProperty({ description: 'The first word of `contact_name` ("" when not saved)', example: 'João' })
  contact_FirstName!: string;
}

/** Where a page of `POST /contacts/list` sits; `page`, `pageSize` and `lastPage` only for a request paged that way. */
@ApiSchema({ name: 'ContactPagination', description: 'Where a page of the contacts sits' })
export class ContactPagination {
  @ApiProperty({ type: 'integer', description: 'How many contacts the scope holds, in all pages' })
  totalRecords!: number;
  @ApiProperty({ type: 'integer', description: 'The most contacts a page holds' })
  limit!: number;
  @ApiProperty({ type: 'integer', description: 'How many contacts come before this page' })
  offset!: number;
  @ApiPropertyOptional({ type: 'integer', description: 'The page number, from 1 (a request with `page`/`pageSize` only)' })
  page?: number;
  @ApiPropertyOptional({ type: 'integer', description: 'The page size (a request with `page`/`pageSize` only)' })
  pageSize?: number;
  @ApiPropertyOptional({ type: 'integer', description: 'The last page number (a request with `page`/`pageSize` only)' })
  lastPage?: number;
}

/** `POST /contacts/list`: a page of the contacts. */
@ApiSchema({ name: 'ContactPage', description: 'A page of the contacts of the scope asked for' })
export class ContactPageResponse {
  @ApiProperty({ type: () => ContactResponse, isArray: true, description: 'The contacts of this page' })
  contacts!: ContactResponse[];
  @ApiProperty({ type: 'integer', description: 'How many contacts the instance knows, whatever the scope' })
  totalDeviceContacts!: number;
  @ApiProperty({ type: () => ContactPagination, description: 'Where the page sits' })
  pagination!: ContactPagination;
}

/** The contact `/contact/add` saved. */
@ApiSchema({ name: 'ContactSaved', description: 'The contact saved in the address book' })
export class ContactSaved {
  @ApiProperty({ description: "The contact's JID (`<number>@s.whatsapp.net`)" })
  jid!: string;
  @ApiProperty({ description: 'The name saved (full and first name)' })
  name!: string;
  @ApiProperty({ description: "The contact's number, digits only" })
  phone!: string;
}

/** `POST /contact/add`. */
@ApiSchema({ name: 'ContactAdded', description: "The contact saved in the phone's address book" })
export class ContactAddedResponse {
  @ApiProperty({ description: 'Always true: WhatsApp took the change' })
  success!: boolean;
  @ApiProperty({ enum: ['Contact added successfully'], description: 'What was done, in words' })
  message!: string;
  @ApiProperty({ type: () => ContactSaved, description: 'The contact saved' })
  contact!: ContactSaved;
}

/** The contact `/contact/remove` removed. */
@ApiSchema({ name: 'ContactRemovedEntry', description: 'The contact removed from the address book' })
export class ContactRemovedEntry {
  @ApiProperty({ description: "The contact's JID (`<number>@s.whatsapp.net`)" })
  jid!: string;
  @ApiProperty({ description: "The contact's number, digits only" })
  phone!: string;
}

/** `POST /contact/remove`. */
@ApiSchema({ name: 'ContactRemoved', description: "The contact removed from the phone's address book" })
export class ContactRemovedResponse {
  @ApiProperty({ description: 'Always true: WhatsApp took the change' })
  success!: boolean;
  @ApiProperty({ enum: ['Contact removed successfully'], description: 'What was done, in words' })
  message!: string;
  @ApiProperty({ type: () => ContactRemovedEntry, description: 'The contact removed' })
  removed_contact!: ContactRemovedEntry;
}

/** `POST /chat/check`: one number looked up on WhatsApp. */
@ApiSchema({ name: 'ChatCheck', description: 'A number looked up on WhatsApp' })
export class ChatCheckResponse {
  @ApiProperty({ description: 'The number or id as sent' })
  query!: string;
  @ApiProperty({ description: 'Its JID on WhatsApp ("" for a number that could not be read)' })
  jid!: string;
  @ApiProperty({ description: 'Its LID, when WhatsApp answered one ("" otherwise)' })
  lid!: string;
  @ApiProperty({ description: 'The number has a WhatsApp account' })
  isInWhatsapp!: boolean;
  @ApiProperty({ description: 'The business\'s verified name, when it has one ("" otherwise)' })
  verifiedName!: string;
  @ApiProperty({ description: 'The group\'s name, for a group id ("" otherwise)' })
  groupName!: string;
  @ApiProperty({ description: 'Why the number could not be looked up ("" when it was)' })
  error!: string;
}

/** `POST /chat/GetNameAndImageURL` (uazapi 2.0): a chat's names and its picture of the size asked for ('' when unknown). */
@ApiSchema({ name: 'ChatNameAndImage', description: "A contact's or group's names and picture URL" })
export class ChatNameAndImageResponse {
  @ApiProperty({ description: 'The name the gateway shows for the chat ("" when unknown)' })
  name!: string;
  @ApiProperty({ description: 'The name the contact set on WhatsApp (push name), or the group\'s name ("" when unknown)' })
  wa_name!: string;
  @ApiProperty({ description: 'The name saved in the phone\'s address book ("" when not saved)' })
  wa_contactName!: string;
  @ApiProperty({ description: 'The full-size picture URL (without `preview`; "" when none)' })
  image!: string;
  @ApiProperty({ description: 'The small picture URL (with `preview: true`; "" when none)' })
  imagePreview!: string;
}

/** `POST /chat/details`: the stored Chat record, the groups in common and the picture of the size asked for. */
@ApiSchema({
  name: 'ChatDetails',
  description: "A chat's whole record: its Chat fields, the groups it has in common with the instance, and its picture of the size asked for",
})
export class ChatDetailsResponse extends ChatResponse {
  // `required: true` spelt out: @nestjs/swagger merges an override's options into the parent's (optional) field.
  @ApiProperty({
    required: true,
    description: 'The groups in common with the contact, comma-separated, as `group name(group id)` ("" for a group, or when none)',
  })
  declare common_groups: string;
  @ApiPropertyOptional({ description: 'The full-size picture URL (without `preview`; "" when none)' })
  declare image?: string;
  @ApiPropertyOptional({ description: 'The small picture URL (with `preview: true`; "" when none)' })
  declare imagePreview?: string;
}
