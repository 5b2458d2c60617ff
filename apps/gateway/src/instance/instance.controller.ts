import { Body, Controller, Delete, Get, Headers, HttpCode, HttpStatus, Post, UseGuards } from '@nestjs/common';
import type { InstanceEntity } from '@gw/persistence';
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
import { DISCONNECTED_INSTANCE_EXAMPLE, INSTANCE_EXAMPLE, INTERNAL_PROXY_EXAMPLE, PROXY_EXAMPLE } from '../openapi/examples';
import { ApiReply } from '../openapi/api-reply.decorator';
import { SCHEMAS } from '../openapi/schemas';

@Controller('instance')
@UseGuards(InstanceGuard)
export class InstanceController {
  constructor(private readonly instances: InstanceService) {}

  @Post('connect')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.InstanceConnection, {
    description: 'Connecting: the QR code (or pairing code, when `phone` was given) is in `instance`',
    example: {
      connected: false,
      loggedIn: false,
      jid: null,
      instance: { ...DISCONNECTED_INSTANCE_EXAMPLE, status: 'connecting', qrcode: 'data:image/png;base64,iVBORw0KGgo…' },
      request_id: 'req_01HQ5Z8K3M',
    },
  })
  connect(@CurrentInstance() instance: InstanceEntity, @Body() dto: ConnectDto, @Headers('x-request-id') requestId?: string) {
    return this.instances.connect(instance, dto, requestId);
  }

  @Get('status')
  @ApiReply(SCHEMAS.InstanceStatus, {
    example: {
      instance: INSTANCE_EXAMPLE,
      status: { connected: true, loggedIn: true, jid: { user: '5511999999999', agent: 0, device: 0, server: 's.whatsapp.net' } },
    },
  })
  status(@CurrentInstance() instance: InstanceEntity) {
    return this.instances.status(instance);
  }

  @Post('disconnect')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.InstanceDisconnected, {
    example: {
      instance: DISCONNECTED_INSTANCE_EXAMPLE,
      response: 'Disconnected',
      info: 'The device has been disconnected from WhatsApp. A new QR code will be required for the next connection.',
    },
  })
  disconnect(@CurrentInstance() instance: InstanceEntity) {
    return this.instances.disconnect(instance);
  }

  @Post('hibernate')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.InstanceDisconnected, {
    description:
      'Hibernated (uazapi 2.1.1): the socket closed and the session worker let it go; the credentials are kept, so `/instance/connect` wakes it without a QR code',
    example: {
      instance: { ...DISCONNECTED_INSTANCE_EXAMPLE, status: 'hibernated', lastDisconnectReason: 'hibernated by request' },
      response: 'Instance hibernated',
      info: HIBERNATED_INFO,
    },
  })
  hibernate(@CurrentInstance() instance: InstanceEntity) {
    return this.instances.hibernate(instance);
  }

  @Delete()
  @ApiReply(SCHEMAS.ResponseWithInfo, {
    example: { response: 'Instance Deleted', info: 'The device was disconnected and the instance removed from the database.' },
  })
  remove(@CurrentInstance() instance: InstanceEntity) {
    return this.instances.remove(instance);
  }

  @Post('updateInstanceName')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.Instance, { example: { ...INSTANCE_EXAMPLE, name: 'novo-nome' } })
  rename(@CurrentInstance() instance: InstanceEntity, @Body() dto: UpdateInstanceNameDto) {
    return this.instances.rename(instance, dto.name);
  }

  @Post('updateDelaySettings')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.InstanceWrapped, { example: { instance: { ...INSTANCE_EXAMPLE, msg_delay_min: 2, msg_delay_max: 6 } } })
  updateDelaySettings(@CurrentInstance() instance: InstanceEntity, @Body() dto: UpdateDelaySettingsDto) {
    return this.instances.updateDelaySettings(instance, dto.msg_delay_min, dto.msg_delay_max);
  }

  @Post('updateFieldsMap')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.Instance, { example: { ...INSTANCE_EXAMPLE, fieldsMap: { customField01: 'Plano', customField02: 'Cidade' } } })
  updateFieldsMap(@CurrentInstance() instance: InstanceEntity, @Body() dto: UpdateFieldsMapDto) {
    return this.instances.updateFieldsMap(instance, dto);
  }

  @Post('updatechatbotsettings')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.Instance, { example: { ...INSTANCE_EXAMPLE, chatbot_enabled: true, chatbot_stopMinutes: 30 } })
  updateChatbotSettings(@CurrentInstance() instance: InstanceEntity, @Body() dto: ChatbotSettingsDto) {
    return this.instances.updateChatbotSettings(instance, dto);
  }

  @Post('presence')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.Response, { example: { response: 'Presence updated successfully' } })
  presence(@CurrentInstance() instance: InstanceEntity, @Body() dto: PresenceDto) {
    return this.instances.setPresence(instance, dto.presence);
  }

  @Get('privacy')
  @ApiReply(SCHEMAS.Privacy, {
    example: { groupadd: 'contacts', last: 'contacts', status: 'contacts', profile: 'all', readreceipts: 'all', online: 'all', calladd: 'all' },
  })
  getPrivacy(@CurrentInstance() instance: InstanceEntity) {
    return this.instances.getPrivacy(instance);
  }

  @Post('privacy')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.Privacy, {
    example: { groupadd: 'contacts', last: 'none', status: 'contacts', profile: 'all', readreceipts: 'all', online: 'match_last_seen', calladd: 'all' },
  })
  setPrivacy(@CurrentInstance() instance: InstanceEntity, @Body() dto: PrivacyDto) {
    return this.instances.setPrivacy(instance, dto);
  }

  @Get('proxy')
  @ApiReply(SCHEMAS.Proxy, { example: PROXY_EXAMPLE })
  getProxy(@CurrentInstance() instance: InstanceEntity) {
    return this.instances.getProxy(instance);
  }

  @Post('proxy')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.ProxyChanged, {
    examples: {
      set: { summary: 'The proxy set', value: { details: 'Proxy configurado', proxy: PROXY_EXAMPLE, restart_requested: false } },
      rotated: {
        summary: '`rotate_now` with mode internal: another proxy of the pools at once (409 when the pools have no other)',
        value: {
          details: 'Proxy configurado',
          proxy: { ...PROXY_EXAMPLE, ...INTERNAL_PROXY_EXAMPLE },
          restart_requested: true,
          rotated: true,
        },
      },
    },
  })
  setProxy(@CurrentInstance() instance: InstanceEntity, @Body() dto: ProxyDto) {
    return this.instances.setProxy(instance, dto);
  }

  @Delete('proxy')
  @ApiReply(SCHEMAS.ProxyChanged, {
    example: { details: 'Proxy removido', proxy: { ...PROXY_EXAMPLE, mode: 'internal', effective_mode: 'internal', proxy_url: '', proxy_fallback: '' } },
  })
  deleteProxy(@CurrentInstance() instance: InstanceEntity) {
    return this.instances.deleteProxy(instance);
  }
}
