import { Body, Controller, Get, HttpCode, HttpStatus, Post, Query, UseGuards } from '@nestjs/common';

import { CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { ApiReply } from '../openapi/api-reply.decorator';
import { ChatCheckDto, ChatDetailsDto, ChatNameAndImageDto, ContactAddDto, ContactListDto, ContactNumberDto } from './dto/contact.dto';
import { ContactService } from './contact.service';
import { CHAT_CHECK_EXAMPLE, CHAT_DETAILS_EXAMPLE, CHAT_NAME_AND_IMAGE_EXAMPLE, CONTACT_ADDED_EXAMPLE, CONTACT_EXAMPLE } from './dto/contact.examples';
import { CONTACT_PAGE_EXAMPLE, CONTACT_REMOVED_EXAMPLE } from './dto/contact.examples';
import { ChatCheckResponse, ChatDetailsResponse, ChatNameAndImageResponse, ContactAddedResponse, ContactPageResponse } from './dto/contact.response';
import { ContactRemovedResponse, ContactResponse } from './dto/contact.response';
import { ApiArea } from '../openapi/api-areas';
import { ApiOperation, ApiQuery } from '@nestjs/swagger';
import type { RequestInstance } from '../common/request-instance';

/** The contacts the instance knows and the phone's address book: `/contacts`, `/contact/*`. */
@ApiArea('Contacts')
@Controller()
@UseGuards(InstanceGuard)
export class ContactController {
  constructor(private readonly contacts: ContactService) {}

  @Get('contacts')
  @ApiReply(ContactResponse, { isArray: true, example: [CONTACT_EXAMPLE] })
  @ApiOperation({
    summary: 'List the contacts',
    description:
      "The instance's WhatsApp contacts, with their JID and names: those of the phone's address book (`contactScope=address_book`, the default), the others (`outside_address_book`), or `all`.",
  })
  @ApiQuery({
    name: 'contactScope',
    required: false,
    enum: ['address_book', 'outside_address_book', 'all'],
    description: "The address book's contacts (the default), the others, or all",
  })
  list(@CurrentInstance() instance: RequestInstance, @Query('contactScope') contactScope?: unknown): Promise<ContactResponse[]> {
    return this.contacts.listAll(instance, contactScope);
  }

  @Post('contacts/list')
  @HttpCode(HttpStatus.OK)
  @ApiReply(ContactPageResponse, { example: CONTACT_PAGE_EXAMPLE })
  @ApiOperation({
    summary: 'List the contacts, paginated',
    description:
      'The contacts, a page at a time (`limit`, `offset` in the body), of the scope chosen by `contactScope`. `GET /contacts` answers the whole list.',
  })
  page(@CurrentInstance() instance: RequestInstance, @Body() dto: ContactListDto): Promise<ContactPageResponse> {
    return this.contacts.page(instance, dto);
  }

  @Post('contact/add')
  @HttpCode(HttpStatus.OK)
  @ApiReply(ContactAddedResponse, { example: CONTACT_ADDED_EXAMPLE })
  @ApiOperation({
    summary: 'Add a contact to the address book',
    description:
      "Saves a contact (`number`, `name`) in the phone's address book through WhatsApp's app state; `name` is used as both the full and the first name.",
  })
  add(@CurrentInstance() instance: RequestInstance, @Body() dto: ContactAddDto): Promise<ContactAddedResponse> {
    return this.contacts.add(instance, dto);
  }

  @Post('contact/remove')
  @HttpCode(HttpStatus.OK)
  @ApiReply(ContactRemovedResponse, {
    description:
      "The contact is removed from the phone's address book with Baileys' removeContact app-state mutation (REMOVE of ['contact', jid]). " +
      "No reference exists for that removal: no independent client builds it and WhatsApp Web's removal path was not found (docs/protocol.md)",
    example: CONTACT_REMOVED_EXAMPLE,
  })
  @ApiOperation({
    summary: 'Remove a contact from the address book',
    description: "Removes a contact (`number`) from the phone's address book through WhatsApp's app state.",
  })
  remove(@CurrentInstance() instance: RequestInstance, @Body() dto: ContactNumberDto): Promise<ContactRemovedResponse> {
    return this.contacts.remove(instance, dto);
  }

  @Post('chat/check')
  @HttpCode(HttpStatus.OK)
  @ApiReply(ChatCheckResponse, { isArray: true, example: [CHAT_CHECK_EXAMPLE] })
  @ApiOperation({
    summary: 'Check numbers on WhatsApp',
    description:
      'Tells, for each of `numbers`, whether it is on WhatsApp, with its JID and verified name when there is one; group ids are recognised too, communities and their subgroups included.',
  })
  check(@CurrentInstance() instance: RequestInstance, @Body() dto: ChatCheckDto): Promise<ChatCheckResponse[]> {
    return this.contacts.check(instance, dto);
  }

  @Post('chat/details')
  @HttpCode(HttpStatus.OK)
  @ApiReply(ChatDetailsResponse, { example: CHAT_DETAILS_EXAMPLE })
  @ApiOperation({
    summary: "Get a contact's or chat's full details",
    description:
      'Everything the gateway knows about a contact or group (`number`): the whole chat record with its names, lead fields and labels, and the profile picture URL, small (`preview: true`) or full size.',
  })
  details(@CurrentInstance() instance: RequestInstance, @Body() dto: ChatDetailsDto): Promise<ChatDetailsResponse> {
    return this.contacts.details(instance, dto);
  }

  /** uazapi 2.0's spelling, still called by published integrations (no spec version lists it). */
  @Post('chat/GetNameAndImageURL')
  @HttpCode(HttpStatus.OK)
  @ApiReply(ChatNameAndImageResponse, { example: CHAT_NAME_AND_IMAGE_EXAMPLE })
  @ApiOperation({
    summary: "Get a contact's name and picture (older path)",
    description: "A contact's or group's name and picture URL: uazapi 2.0's spelling, still called by published integrations. Not in uazapiGO 2.1's document.",
  })
  nameAndImage(@CurrentInstance() instance: RequestInstance, @Body() dto: ChatNameAndImageDto): Promise<ChatNameAndImageResponse> {
    return this.contacts.nameAndImage(instance, dto);
  }
}
