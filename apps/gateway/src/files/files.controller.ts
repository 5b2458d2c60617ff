import { Controller, Get, Param, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ApiReply } from '../openapi/api-reply.decorator';
import { FilesService } from './files.service';
import { ApiArea } from '../openapi/api-areas';
import { ApiOperation, ApiParam } from '@nestjs/swagger';

/**
 * `GET /files/<id>`: downloaded media behind an unguessable (128-bit), expiring id. No token: the id
 * is the capability, so links can be handed to a browser or another service. What a contact sent is
 * never a page of this origin (see file-serving.ts).
 */
@ApiArea('Service')
@Controller('files')
export class FilesController {
  constructor(private readonly files: FilesService) {}

  @Get(':id')
  @ApiReply(
    { type: 'string', format: 'binary', description: "The file's bytes (Content-Type as stored; passive types inline, the others as an attachment)" },
    {
      contentType: '*/*',
      description: 'The file, while it is kept',
      redirect: 'A file kept in S3: a short-lived signed link to it in the bucket',
      errors: ['not_found', 'internal'],
    },
  )
  @ApiOperation({
    summary: 'Download a stored file',
    description:
      'The bytes of a media file downloaded by `/message/download` (its `fileURL`), behind an unguessable, expiring id. No token: the id is the capability, so the link can be handed to a browser or another service.',
  })
  @ApiParam({ name: 'id', description: "The file's id, the last part of the `fileURL` that `/message/download` answered" })
  get(@Param('id') id: string, @Res() reply: FastifyReply): Promise<void> {
    return this.files.serve(id, reply);
  }
}
