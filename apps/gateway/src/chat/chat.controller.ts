import { Body, Controller, Get, HttpCode, HttpStatus, Post, UseGuards } from '@nestjs/common';

import { CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { BlockDto, ChatLabelsDto } from './dto/chat.dto';
import { EditLeadDto } from './dto/edit-lead.dto';
import { FindChatsDto } from './dto/find-chats.dto';
import {
  ChatArchiveDto,
  ChatDeleteDto,
  ChatEphemeralDto,
  ChatMuteDto,
  ChatNotesDto,
  ChatNotesEditDto,
  ChatNotesRefreshDto,
  ChatPinDto,
  ChatReadDto,
} from './dto/chat-state.dto';
import { ChatService } from './chat.service';
import { ChatPageResponse, ChatResponse } from '../common/dto/chat.response';
import { ReplyResponse } from '../common/dto/reply.response';
import {
  BLOCKLIST_EXAMPLE,
  CHAT_ARCHIVED_EXAMPLE,
  CHAT_BLOCKED_EXAMPLE,
  CHAT_DELETED_EXAMPLE,
  CHAT_EPHEMERAL_EXAMPLE,
  CHAT_LABELS_EXAMPLE,
  CHAT_MUTED_EXAMPLE,
  CHAT_NOTES_EDITED_EXAMPLE,
  CHAT_NOTES_EXAMPLE,
  CHAT_NOTES_REFRESHED_EXAMPLE,
  CHAT_PAGE_EXAMPLE,
  CHAT_PINNED_EXAMPLE,
  CHAT_READ_EXAMPLE,
} from './dto/chat.examples';
import { CHAT_EXAMPLE } from '../common/dto/common.examples';
import {
  BlocklistResponse,
  ChatDeletedResponse,
  ChatEphemeralResponse,
  ChatLabelsResponse,
  ChatNotesEditedResponse,
  ChatNotesResponse,
} from './dto/chat.response';
import { ApiReply } from '../openapi/api-reply.decorator';
import { ApiArea } from '../openapi/api-areas';
import { ApiOperation } from '@nestjs/swagger';
import type { RequestInstance } from '../common/request-instance';

/** `/chat/*`: a chat's labels, the blocklist and the lead store. */
@Controller('chat')
@UseGuards(InstanceGuard)
export class ChatController {
  constructor(private readonly chats: ChatService) {}

  @Post('labels')
  @HttpCode(HttpStatus.OK)
  @ApiReply(ChatLabelsResponse, { example: CHAT_LABELS_EXAMPLE })
  @ApiArea('Labels')
  @ApiOperation({
    summary: "Set a chat's labels",
    description:
      'Changes the labels of one chat (`number`) in one of three ways: `labelids` sets the whole list (replacing the others), `add_labelid` adds one, `remove_labelid` removes one.',
  })
  labels(@CurrentInstance() instance: RequestInstance, @Body() dto: ChatLabelsDto): Promise<ChatLabelsResponse> {
    return this.chats.setLabels(instance, dto);
  }

  @Post('block')
  @HttpCode(HttpStatus.OK)
  @ApiReply(BlocklistResponse, { example: CHAT_BLOCKED_EXAMPLE })
  @ApiArea('Blocks')
  @ApiOperation({
    summary: 'Block or unblock a contact',
    description: 'Blocks (`block: true`) or unblocks a contact (`number`). A blocked contact cannot send messages to the instance, nor the instance to it.',
  })
  block(@CurrentInstance() instance: RequestInstance, @Body() dto: BlockDto): Promise<BlocklistResponse> {
    return this.chats.block(instance, dto);
  }

  @Get('blocklist')
  @ApiReply(BlocklistResponse, { example: BLOCKLIST_EXAMPLE })
  @ApiArea('Blocks')
  @ApiOperation({
    summary: 'List the blocked contacts',
    description: 'Every contact the account has blocked, as WhatsApp keeps it, updated as contacts are blocked and unblocked.',
  })
  blocklist(@CurrentInstance() instance: RequestInstance): Promise<BlocklistResponse> {
    return this.chats.blocklist(instance);
  }

  @Post('editLead')
  @HttpCode(HttpStatus.OK)
  @ApiReply(ChatResponse, { example: CHAT_EXAMPLE })
  @ApiArea('CRM')
  @ApiOperation({
    summary: "Edit a chat's lead",
    description:
      'Updates the CRM fields kept on a chat (`id`): ticket status, assigned attendant, kanban position, tags, name, notes and the custom `lead_field01` to `lead_field20`. Only the fields sent change; webhooks and SSE report the update.',
  })
  editLead(@CurrentInstance() instance: RequestInstance, @Body() dto: EditLeadDto): Promise<ChatResponse> {
    return this.chats.editLead(instance, dto);
  }

  @Post('find')
  @HttpCode(HttpStatus.OK)
  @ApiReply(ChatPageResponse, { example: CHAT_PAGE_EXAMPLE })
  @ApiArea('Chats')
  @ApiOperation({
    summary: 'Find chats',
    description:
      "Searches the instance's chats with filters on their fields, sorting and pagination. A filter value may start with an operator: `~` contains (the default), `!~` does not contain, `!=`, `>=`, `>`, `<=`, `<`.",
  })
  find(@CurrentInstance() instance: RequestInstance, @Body() dto: FindChatsDto): Promise<ChatPageResponse> {
    return this.chats.find(instance, dto);
  }

  @Post('pin')
  @HttpCode(HttpStatus.OK)
  @ApiReply(ReplyResponse, { example: CHAT_PINNED_EXAMPLE })
  @ApiArea('Chats')
  @ApiOperation({
    summary: 'Pin or unpin a chat',
    description: 'Pins a chat (`pin: true`) at the top of the chat list, or unpins it; synced to every device of the account.',
  })
  pin(@CurrentInstance() instance: RequestInstance, @Body() dto: ChatPinDto): Promise<ReplyResponse> {
    return this.chats.pin(instance, dto);
  }

  @Post('archive')
  @HttpCode(HttpStatus.OK)
  @ApiReply(ReplyResponse, { example: CHAT_ARCHIVED_EXAMPLE })
  @ApiArea('Chats')
  @ApiOperation({
    summary: 'Archive or unarchive a chat',
    description: 'Moves a chat to the archived chats (`archive: true`) or back; synced to every device, the messages are not touched.',
  })
  archive(@CurrentInstance() instance: RequestInstance, @Body() dto: ChatArchiveDto): Promise<ReplyResponse> {
    return this.chats.archive(instance, dto);
  }

  @Post('read')
  @HttpCode(HttpStatus.OK)
  @ApiReply(ReplyResponse, { example: CHAT_READ_EXAMPLE })
  @ApiArea('Chats')
  @ApiOperation({
    summary: 'Mark a chat read or unread',
    description:
      'Marks a chat read (`read: true`: the unread count is cleared and read receipts are sent when enabled) or unread (it shows as pending; receipts already sent stay).',
  })
  read(@CurrentInstance() instance: RequestInstance, @Body() dto: ChatReadDto): Promise<ReplyResponse> {
    return this.chats.read(instance, dto);
  }

  @Post('mute')
  @HttpCode(HttpStatus.OK)
  @ApiReply(ReplyResponse, { example: CHAT_MUTED_EXAMPLE })
  @ApiArea('Chats')
  @ApiOperation({
    summary: 'Mute a chat',
    description: "Silences a chat's notifications: `muteEndTime` 8 (hours), 168 (a week), -1 (for ever) or 0 to unmute.",
  })
  mute(@CurrentInstance() instance: RequestInstance, @Body() dto: ChatMuteDto): Promise<ReplyResponse> {
    return this.chats.mute(instance, dto);
  }

  @Post('ephemeral')
  @HttpCode(HttpStatus.OK)
  @ApiReply(ChatEphemeralResponse, { example: CHAT_EPHEMERAL_EXAMPLE })
  @ApiArea('Chats')
  @ApiOperation({
    summary: 'Set disappearing messages in a private chat',
    description:
      'Sets the disappearing-messages timer of a private chat: `duration` `0` or `off` turns it off, `1d`, `7d` or `90d` turn it on. Groups use `/group/ephemeral`.',
  })
  ephemeral(@CurrentInstance() instance: RequestInstance, @Body() dto: ChatEphemeralDto): Promise<ChatEphemeralResponse> {
    return this.chats.ephemeral(instance, dto);
  }

  @Post('notes')
  @HttpCode(HttpStatus.OK)
  @ApiReply(ChatNotesResponse, { example: CHAT_NOTES_EXAMPLE })
  @ApiArea('Chats')
  @ApiOperation({
    summary: "Show a chat's notes",
    description:
      "The chat's internal notes (`wa_notes`) as stored by the gateway, available even while the session reconnects. `/chat/notes/refresh` reads them again from WhatsApp.",
  })
  notes(@CurrentInstance() instance: RequestInstance, @Body() dto: ChatNotesDto): Promise<ChatNotesResponse> {
    return this.chats.notes(instance, dto);
  }

  @Post('notes/refresh')
  @HttpCode(HttpStatus.OK)
  @ApiReply(ChatNotesResponse, { example: CHAT_NOTES_REFRESHED_EXAMPLE })
  @ApiArea('Chats')
  @ApiOperation({
    summary: "Reload a chat's notes from WhatsApp",
    description:
      "Reads the chat's internal notes again from WhatsApp before answering them. Try `force: false` first; `force: true` does a heavier reload, as a repair.",
  })
  refreshNotes(@CurrentInstance() instance: RequestInstance, @Body() dto: ChatNotesRefreshDto): Promise<ChatNotesResponse> {
    return this.chats.refreshNotes(instance, dto);
  }

  @Post('notes/edit')
  @HttpCode(HttpStatus.OK)
  @ApiReply(ChatNotesEditedResponse, { example: CHAT_NOTES_EDITED_EXAMPLE })
  @ApiArea('Chats')
  @ApiOperation({
    summary: "Edit a chat's notes",
    description: "Writes the chat's internal notes (`notes`) to WhatsApp's app state and stores them; an empty string clears them.",
  })
  editNotes(@CurrentInstance() instance: RequestInstance, @Body() dto: ChatNotesEditDto): Promise<ChatNotesEditedResponse> {
    return this.chats.editNotes(instance, dto);
  }

  @Post('delete')
  @HttpCode(HttpStatus.OK)
  @ApiReply(ChatDeletedResponse, { example: CHAT_DELETED_EXAMPLE })
  @ApiArea('Chats')
  @ApiOperation({
    summary: 'Delete a chat',
    description:
      "Deletes or clears a chat and its messages, in any combination: delete the chat on WhatsApp, clear its messages on WhatsApp, delete the chat from the gateway's database, delete only its messages from the database. Clearing wins when both WhatsApp options are sent.",
  })
  delete(@CurrentInstance() instance: RequestInstance, @Body() dto: ChatDeleteDto): Promise<ChatDeletedResponse> {
    return this.chats.deleteChat(instance, dto);
  }
}
