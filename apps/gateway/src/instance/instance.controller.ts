import { Audited } from '../audit/audited.decorator';
import { Body, Controller, Delete, Get, Headers, HttpCode, HttpStatus, Post, UseGuards } from '@nestjs/common';

import { CurrentInstance, InstanceGuard } from '../common/auth.guards';
import {
  ChatbotSettingsDto,
  ConnectDto,
  PresenceDto,
  PrivacyDto,
  ProxyDto,
  UpdateDelaySettingsDto,
  UpdateFieldsMapDto,
  UpdateInstanceNameDto,
} from './dto/instance.dto';
import { HIBERNATED_INFO, InstanceService } from './instance.service';
import { DISCONNECTED_INSTANCE_EXAMPLE, INSTANCE_EXAMPLE } from '../common/dto/common.examples';
import {
  INSTANCE_CONNECTION_EXAMPLE,
  INSTANCE_DISCONNECTED_EXAMPLE,
  INSTANCE_STATUS_EXAMPLE,
  PRIVACY_CHANGED_EXAMPLE,
  PRIVACY_EXAMPLE,
  PROXY_EXAMPLE,
  PROXY_REMOVED_EXAMPLE,
  PROXY_ROTATED_EXAMPLE,
  PROXY_SET_EXAMPLE,
} from './dto/instance.examples';
import {
  InstanceConnectionResponse,
  InstanceDisconnectedResponse,
  InstanceStatusResponse,
  PrivacyResponse,
  ProxyChangedResponse,
  ProxyResponse,
} from './dto/instance.response';
import { InstanceResponse, InstanceWrappedResponse } from '../common/dto/instance.response';
import { ReplyResponse, ReplyWithInfoResponse } from '../common/dto/reply.response';
import { ApiReply } from '../openapi/api-reply.decorator';
import { ApiArea } from '../openapi/api-areas';
import { ApiHeader, ApiOperation } from '@nestjs/swagger';
import type { RequestInstance } from '../common/request-instance';

@Controller('instance')
@UseGuards(InstanceGuard)
export class InstanceController {
  constructor(private readonly instances: InstanceService) {}

  @Post('connect')
  @HttpCode(HttpStatus.OK)
  @ApiReply(InstanceConnectionResponse, {
    description: 'Connecting: the QR code (or pairing code, when `phone` was given) is in `instance`',
    example: INSTANCE_CONNECTION_EXAMPLE,
  })
  @ApiArea('Instance')
  @ApiOperation({
    summary: 'Connect the instance to WhatsApp',
    description:
      'Starts linking this instance to a WhatsApp account and sets it `connecting`: without `phone` the answer carries a QR code to scan, with `phone` a pairing code to type on the phone. The link completes when the phone confirms; poll `/instance/status` (or listen to `connection` events) for a fresh QR code and the outcome. A hibernated instance wakes without a QR code. `proxy_managed_*` chooses where the managed proxy is.',
  })
  @ApiHeader({ name: 'x-request-id', required: false, description: 'Your id for this request: answered as `request_id` and written in the logs' })
  connect(
    @CurrentInstance() instance: RequestInstance,
    @Body() dto: ConnectDto,
    @Headers('x-request-id') requestId?: string,
  ): Promise<InstanceConnectionResponse> {
    return this.instances.connect(instance, dto, requestId);
  }

  @Get('status')
  @ApiReply(InstanceStatusResponse, { example: INSTANCE_STATUS_EXAMPLE })
  @ApiArea('Instance')
  @ApiOperation({
    summary: "Show the instance's status",
    description:
      "The instance's state (`disconnected`, `connecting`, `connected`, `hibernated`), the current QR code or pairing code while connecting, the last disconnection and its reason, and the whole instance record; useful to follow a connection and to check the session is up.",
  })
  status(@CurrentInstance() instance: RequestInstance): Promise<InstanceStatusResponse> {
    return this.instances.status(instance);
  }

  @Post('disconnect')
  @HttpCode(HttpStatus.OK)
  @ApiReply(InstanceDisconnectedResponse, { example: INSTANCE_DISCONNECTED_EXAMPLE })
  @ApiArea('Instance')
  @ApiOperation({
    summary: 'Disconnect the instance',
    description:
      'Logs the WhatsApp account out and ends the session: connecting again needs a new QR code (or pairing code). To pause a session and keep its credentials, hibernate it instead.',
  })
  disconnect(@CurrentInstance() instance: RequestInstance): Promise<InstanceDisconnectedResponse> {
    return this.instances.disconnect(instance);
  }

  @Post('hibernate')
  @HttpCode(HttpStatus.OK)
  @ApiReply(InstanceDisconnectedResponse, {
    description:
      'Hibernated (uazapi 2.1.1): the socket closed and the session worker let it go; the credentials are kept, so `/instance/connect` wakes it without a QR code',
    example: {
      instance: { ...DISCONNECTED_INSTANCE_EXAMPLE, status: 'hibernated', lastDisconnectReason: 'hibernated by request' },
      response: 'Instance hibernated',
      info: HIBERNATED_INFO,
    },
  })
  @ApiArea('Instance')
  @ApiOperation({
    summary: 'Hibernate the instance (uazapiGO 2.1.1)',
    description:
      "Closes the connection and frees the session's memory on the worker while keeping its credentials: `/instance/connect` wakes it without a QR code. 409 when the instance has no linked device.",
  })
  hibernate(@CurrentInstance() instance: RequestInstance): Promise<InstanceDisconnectedResponse> {
    return this.instances.hibernate(instance);
  }

  @Audited('instance.delete')
  @Delete()
  @ApiReply(ReplyWithInfoResponse, {
    example: { response: 'Instance Deleted', info: 'The device was disconnected and the instance removed from the database.' },
  })
  @ApiArea('Instance')
  @ApiOperation({ summary: 'Delete the instance', description: 'Disconnects the device and removes the instance, its token and its data from the gateway.' })
  remove(@CurrentInstance() instance: RequestInstance): Promise<ReplyWithInfoResponse> {
    return this.instances.remove(instance);
  }

  @Audited('instance.rename')
  @Post('updateInstanceName')
  @HttpCode(HttpStatus.OK)
  @ApiReply(InstanceResponse, { example: { ...INSTANCE_EXAMPLE, name: 'novo-nome' } })
  @ApiArea('Instance')
  @ApiOperation({ summary: 'Rename the instance', description: "Changes the instance's `name`; names need not be unique." })
  rename(@CurrentInstance() instance: RequestInstance, @Body() dto: UpdateInstanceNameDto): Promise<InstanceResponse> {
    return this.instances.rename(instance, dto.name);
  }

  @Audited('instance.delaySettings')
  @Post('updateDelaySettings')
  @HttpCode(HttpStatus.OK)
  @ApiReply(InstanceWrappedResponse, { example: { instance: { ...INSTANCE_EXAMPLE, msg_delay_min: 2, msg_delay_max: 6 } } })
  @ApiArea('Async queue')
  @ApiOperation({
    summary: 'Set the delay between async messages',
    description:
      'Sets the random pause, between `msg_delay_min` and `msg_delay_max` seconds, between two messages of the `async: true` queue (0 for none; a max below the min is raised to it). Campaigns (`/sender/*`) have their own delays.',
  })
  updateDelaySettings(@CurrentInstance() instance: RequestInstance, @Body() dto: UpdateDelaySettingsDto): Promise<InstanceWrappedResponse> {
    return this.instances.updateDelaySettings(instance, dto.msg_delay_min, dto.msg_delay_max);
  }

  @Audited('instance.fieldsMap')
  @Post('updateFieldsMap')
  @HttpCode(HttpStatus.OK)
  @ApiReply(InstanceResponse, { example: { ...INSTANCE_EXAMPLE, fieldsMap: { customField01: 'Plano', customField02: 'Cidade' } } })
  @ApiArea('CRM')
  @ApiOperation({
    summary: 'Name the custom lead fields',
    description:
      "Sets the instance's labels for the CRM's custom lead fields (`lead_field01` to `lead_field20`), each up to 255 characters, so a front end can show what each field holds.",
  })
  updateFieldsMap(@CurrentInstance() instance: RequestInstance, @Body() dto: UpdateFieldsMapDto): Promise<InstanceResponse> {
    return this.instances.updateFieldsMap(instance, dto);
  }

  @Audited('instance.chatbotSettings')
  @Post('updatechatbotsettings')
  @HttpCode(HttpStatus.OK)
  @ApiReply(InstanceResponse, { example: { ...INSTANCE_EXAMPLE, chatbot_enabled: true, chatbot_stopMinutes: 30 } })
  @ApiArea('Chatbot')
  @ApiOperation({
    summary: 'Configure the chatbot of the instance',
    description:
      'Turns the AI chatbot on or off for this instance and sets its behaviour: the OpenAI key, whether it ignores groups, the word that stops it in a chat and for how many minutes it stays stopped. Not in uazapiGO.',
  })
  updateChatbotSettings(@CurrentInstance() instance: RequestInstance, @Body() dto: ChatbotSettingsDto): Promise<InstanceResponse> {
    return this.instances.updateChatbotSettings(instance, dto);
  }

  @Post('presence')
  @HttpCode(HttpStatus.OK)
  @ApiReply(ReplyResponse, { example: { response: 'Presence updated successfully' } })
  @ApiArea('Instance')
  @ApiOperation({
    summary: "Set the account's presence",
    description: "Sets the connected account's global presence: `available` (online) or `unavailable`, for every contact.",
  })
  presence(@CurrentInstance() instance: RequestInstance, @Body() dto: PresenceDto): Promise<ReplyResponse> {
    return this.instances.setPresence(instance, dto.presence);
  }

  @Get('privacy')
  @ApiReply(PrivacyResponse, { example: PRIVACY_EXAMPLE })
  @ApiArea('Instance')
  @ApiOperation({
    summary: 'Show the privacy settings',
    description:
      'The connected account\'s privacy settings: who can add it to groups, see its last seen, status, profile picture, read receipts and online state, and call it. "Status" is the text under the name; stories are "broadcast".',
  })
  getPrivacy(@CurrentInstance() instance: RequestInstance): Promise<PrivacyResponse> {
    return this.instances.getPrivacy(instance);
  }

  @Audited('instance.privacy')
  @Post('privacy')
  @HttpCode(HttpStatus.OK)
  @ApiReply(PrivacyResponse, { example: PRIVACY_CHANGED_EXAMPLE })
  @ApiArea('Instance')
  @ApiOperation({
    summary: 'Change the privacy settings',
    description: "Changes one or more of the connected account's privacy settings (only the fields sent) and answers all of them as they now are.",
  })
  setPrivacy(@CurrentInstance() instance: RequestInstance, @Body() dto: PrivacyDto): Promise<PrivacyResponse> {
    return this.instances.setPrivacy(instance, dto);
  }

  @Get('proxy')
  @ApiReply(ProxyResponse, { example: PROXY_EXAMPLE })
  @ApiArea('Proxy')
  @ApiOperation({
    summary: "Show the instance's proxy",
    description:
      "The proxy the instance is configured to use (`mode`: `custom`, your own `proxy_url`; `internal`, the operator's managed proxies; `none`, a direct connection) and the one its connection really uses (`effective_mode`), so a proxy that failed is never silently replaced by a direct connection.",
  })
  getProxy(@CurrentInstance() instance: RequestInstance): ProxyResponse {
    return this.instances.getProxy(instance);
  }

  @Audited('instance.proxy.set')
  @Post('proxy')
  @HttpCode(HttpStatus.OK)
  @ApiReply(ProxyChangedResponse, {
    examples: {
      set: { summary: 'The proxy set', value: PROXY_SET_EXAMPLE },
      rotated: {
        summary: '`rotate_now` with mode internal: another proxy of the pools at once (409 when the pools have no other)',
        value: PROXY_ROTATED_EXAMPLE,
      },
    },
  })
  @ApiArea('Proxy')
  @ApiOperation({
    summary: 'Set or change the proxy',
    description:
      'Sets one of three modes: `custom` with your `proxy_url`, `internal` (the managed proxies; `rotate_now` switches to another one at once), or `none`, a direct connection, only with `confirm_no_proxy: true`. The answer confirms the setting was saved, not that the proxy works: the connection uses it from its next (re)connect.',
  })
  setProxy(@CurrentInstance() instance: RequestInstance, @Body() dto: ProxyDto): Promise<ProxyChangedResponse> {
    return this.instances.setProxy(instance, dto);
  }

  @Audited('instance.proxy.delete')
  @Delete('proxy')
  @ApiReply(ProxyChangedResponse, { example: PROXY_REMOVED_EXAMPLE })
  @ApiArea('Proxy')
  @ApiOperation({
    summary: "Remove the instance's own proxy",
    description:
      "Drops the instance's custom proxy and goes back to the default, the managed (internal) proxies. Not in uazapiGO, which sets `mode` through `POST /instance/proxy`.",
  })
  deleteProxy(@CurrentInstance() instance: RequestInstance): Promise<ProxyChangedResponse> {
    return this.instances.deleteProxy(instance);
  }
}
