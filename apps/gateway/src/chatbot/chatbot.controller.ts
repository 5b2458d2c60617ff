import { Audited } from '../audit/audited.decorator';
import { Body, Controller, Get, HttpCode, HttpStatus, Post, type Type, UseGuards } from '@nestjs/common';

import { CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { ApiReply } from '../openapi/api-reply.decorator';
import { AGENT_EXAMPLE, CHATBOT_DELETED_EXAMPLE, FUNCTION_EXAMPLE, KNOWLEDGE_EXAMPLE, TRIGGER_EXAMPLE } from './dto/chatbot.examples';
import { ChatbotService } from './chatbot.service';
import { AgentEditDto, FunctionEditDto, KnowledgeEditDto, TriggerEditDto } from './dto/chatbot-edit.dto';
import {
  ChatbotAgentResponse,
  ChatbotDeletedResponse,
  ChatbotFunctionResponse,
  ChatbotKnowledgeResponse,
  ChatbotTriggerResponse,
} from './dto/chatbot.response';
import { ApiArea } from '../openapi/api-areas';
import { ApiExtraModels, ApiOperation, getSchemaPath } from '@nestjs/swagger';
import type { RequestInstance } from '../common/request-instance';

const EDIT_ERRORS = ['invalid_request', 'invalid_token', 'not_found', 'conflict', 'payload_too_large', 'unsupported_media_type', 'internal'] as const;
/** An edit answers the record saved, or with `delete: true` which record went: one of the two. */
const savedOrDeleted = (record: Type) => ({ oneOf: [{ $ref: getSchemaPath(record) }, { $ref: getSchemaPath(ChatbotDeletedResponse) }] });
const edited = (example: unknown) => ({
  description: 'The record as saved, or with `delete: true` which record was deleted',
  examples: {
    saved: { summary: 'Created or updated: the record', value: example },
    deleted: { summary: 'delete: true', value: CHATBOT_DELETED_EXAMPLE },
  },
  errors: EDIT_ERRORS,
});

/** The chatbot's records (uazapi 2.0 §2.17): `/agent`, `/trigger`, `/knowledge` and `/function`, each `edit` and `list`. */
@ApiArea('Chatbot')
@Controller()
@UseGuards(InstanceGuard)
@ApiExtraModels(ChatbotAgentResponse, ChatbotTriggerResponse, ChatbotKnowledgeResponse, ChatbotFunctionResponse, ChatbotDeletedResponse)
export class ChatbotController {
  constructor(private readonly chatbot: ChatbotService) {}

  @Audited('chatbot.agent.edit')
  @Post('agent/edit')
  @HttpCode(HttpStatus.OK)
  @ApiReply(savedOrDeleted(ChatbotAgentResponse), edited(AGENT_EXAMPLE))
  @ApiOperation({
    summary: 'Create, update or delete an AI agent',
    description:
      "An agent is the model, its key and its prompt that answer the chats: without `id` it is created, with `id` updated, with `delete: true` removed. Not in uazapiGO's document.",
  })
  editAgent(@CurrentInstance() instance: RequestInstance, @Body() dto: AgentEditDto): Promise<ChatbotAgentResponse | ChatbotDeletedResponse> {
    return this.chatbot.editAgent(instance, dto);
  }

  @Get('agent/list')
  @ApiReply(ChatbotAgentResponse, { isArray: true, example: [AGENT_EXAMPLE], errors: ['invalid_token', 'internal'] })
  @ApiOperation({ summary: 'List the AI agents', description: "The instance's chatbot agents. Not in uazapiGO's document." })
  listAgents(@CurrentInstance() instance: RequestInstance): Promise<ChatbotAgentResponse[]> {
    return this.chatbot.listAgents(instance);
  }

  @Audited('chatbot.trigger.edit')
  @Post('trigger/edit')
  @HttpCode(HttpStatus.OK)
  @ApiReply(savedOrDeleted(ChatbotTriggerResponse), edited(TRIGGER_EXAMPLE))
  @ApiOperation({
    summary: 'Create, update or delete a trigger',
    description:
      "A trigger decides which agent (or quick reply) answers which messages: by words, chat type and priority; without `id` it is created, with `id` updated, with `delete: true` removed. Not in uazapiGO's document.",
  })
  editTrigger(@CurrentInstance() instance: RequestInstance, @Body() dto: TriggerEditDto): Promise<ChatbotTriggerResponse | ChatbotDeletedResponse> {
    return this.chatbot.editTrigger(instance, dto);
  }

  @Get('trigger/list')
  @ApiReply(ChatbotTriggerResponse, { isArray: true, example: [TRIGGER_EXAMPLE], errors: ['invalid_token', 'internal'] })
  @ApiOperation({ summary: 'List the triggers', description: "The instance's chatbot triggers. Not in uazapiGO's document." })
  listTriggers(@CurrentInstance() instance: RequestInstance): Promise<ChatbotTriggerResponse[]> {
    return this.chatbot.listTriggers(instance);
  }

  @Audited('chatbot.knowledge.edit')
  @Post('knowledge/edit')
  @HttpCode(HttpStatus.OK)
  @ApiReply(savedOrDeleted(ChatbotKnowledgeResponse), edited(KNOWLEDGE_EXAMPLE))
  @ApiOperation({
    summary: 'Create, update or delete a knowledge entry',
    description:
      "Knowledge is text the agents may draw on when they answer; without `id` an entry is created, with `id` updated, with `delete: true` removed. Not in uazapiGO's document.",
  })
  editKnowledge(@CurrentInstance() instance: RequestInstance, @Body() dto: KnowledgeEditDto): Promise<ChatbotKnowledgeResponse | ChatbotDeletedResponse> {
    return this.chatbot.editKnowledge(instance, dto);
  }

  @Get('knowledge/list')
  @ApiReply(ChatbotKnowledgeResponse, { isArray: true, example: [KNOWLEDGE_EXAMPLE], errors: ['invalid_token', 'internal'] })
  @ApiOperation({ summary: 'List the knowledge entries', description: "The instance's chatbot knowledge. Not in uazapiGO's document." })
  listKnowledge(@CurrentInstance() instance: RequestInstance): Promise<ChatbotKnowledgeResponse[]> {
    return this.chatbot.listKnowledge(instance);
  }

  @Audited('chatbot.function.edit')
  @Post('function/edit')
  @HttpCode(HttpStatus.OK)
  @ApiReply(savedOrDeleted(ChatbotFunctionResponse), edited(FUNCTION_EXAMPLE))
  @ApiOperation({
    summary: 'Create, update or delete a function',
    description:
      "A function is an HTTP call an agent may make (its URL, method, body and parameters); without `id` it is created, with `id` updated, with `delete: true` removed. Not in uazapiGO's document.",
  })
  editFunction(@CurrentInstance() instance: RequestInstance, @Body() dto: FunctionEditDto): Promise<ChatbotFunctionResponse | ChatbotDeletedResponse> {
    return this.chatbot.editFunction(instance, dto);
  }

  @Get('function/list')
  @ApiReply(ChatbotFunctionResponse, { isArray: true, example: [FUNCTION_EXAMPLE], errors: ['invalid_token', 'internal'] })
  @ApiOperation({ summary: 'List the functions', description: "The instance's chatbot functions. Not in uazapiGO's document." })
  listFunctions(@CurrentInstance() instance: RequestInstance): Promise<ChatbotFunctionResponse[]> {
    return this.chatbot.listFunctions(instance);
  }
}
