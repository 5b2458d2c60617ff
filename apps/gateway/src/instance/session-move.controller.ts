import { Body, Controller, HttpCode, HttpStatus, Post, UseGuards } from '@nestjs/common';

import { ApiOperation } from '@nestjs/swagger';
import { Audited } from '../audit/audited.decorator';
import { AdminGuard, CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { ApiArea } from '../openapi/api-areas';
import { ApiReply } from '../openapi/api-reply.decorator';
import { SESSION_EXPORTED_EXAMPLE, SESSION_IMPORTED_EXAMPLE } from './dto/instance.examples';
import { SessionExportedResponse, SessionImportedResponse } from './dto/instance.response';
import { ExportSessionDto, ImportSessionDto } from './dto/session-move.dto';
import { SessionMoveService } from './session-move.service';
import type { RequestInstance } from '../common/request-instance';

@ApiArea('Instance')
@Controller('instance')
@UseGuards(InstanceGuard)
export class SessionExportController {
  constructor(private readonly moves: SessionMoveService) {}

  @Audited('instance.export')
  @Post('export')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SessionExportedResponse, {
    description: 'Exported: the encrypted bundle; this instance stays as a tombstone that cannot connect',
    example: SESSION_EXPORTED_EXAMPLE,
  })
  @ApiOperation({
    summary: 'Export the session to move it to another server',
    description:
      "Stops the instance without logging out and answers its session as one encrypted `bundle` (scrypt and AES-256-GCM under your `passphrase`): the linked device's credentials and the instance's settings (name, webhooks and sinks with their secrets, proxy, chatbot and its records, Chatwoot, delays, fields map). The credentials are then wiped here and the instance stays as a tombstone: `/instance/connect` answers 409, since two servers holding one linked device would log each other out. Import the bundle with `POST /instance/import` on the new server; it connects there without a QR code. The bundle is the only copy: keep the answer. 409 when the instance has no linked device or was exported already. Message history, files, quick replies and queued sends stay here. Not in uazapiGO.",
  })
  exportSession(@CurrentInstance() instance: RequestInstance, @Body() dto: ExportSessionDto): Promise<SessionExportedResponse> {
    return this.moves.exportSession(instance, dto);
  }
}

@ApiArea('Admin')
@Controller('instance')
@UseGuards(AdminGuard)
export class SessionImportController {
  constructor(private readonly moves: SessionMoveService) {}

  @Audited('instance.import', { target: (_body, result) => (result as { instance?: { id?: string } } | undefined)?.instance?.id })
  @Post('import')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SessionImportedResponse, {
    description: 'Imported: a new instance with the bundle’s linked device, disconnected; connect it with its new token',
    example: SESSION_IMPORTED_EXAMPLE,
  })
  @ApiOperation({
    summary: 'Import a session exported from another server',
    description:
      "Creates an instance from a `bundle` of `POST /instance/export` and its `passphrase`: the linked device's credentials and the settings, all in one transaction, with a new id and a new `token` (the old server's token does not move). `POST /instance/connect` with the new token then connects it without a QR code. 400 when the bundle cannot be decrypted (a wrong passphrase or a changed bundle: one answer), is malformed, or names a webhook, sink, Chatwoot or proxy address this server's SSRF guard refuses; 409 when an instance here already holds the same linked device (the bundle was imported before). Nothing is written when it fails. Not in uazapiGO.",
  })
  importSession(@Body() dto: ImportSessionDto): Promise<SessionImportedResponse> {
    return this.moves.importSession(dto);
  }
}
