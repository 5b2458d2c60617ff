import { Controller, Get, Param, Res } from '@nestjs/common';
import { FileRepository } from '@gw/persistence';
import type { FastifyReply } from 'fastify';
import { ApiError } from '../common/api-error';
import { ApiReply } from '../openapi/api-reply.decorator';
import { FILE_SECURITY_HEADERS, fileServing } from './file-serving';

/**
 * `GET /files/<id>`: downloaded media behind an unguessable (128-bit), expiring id. No token: the id
 * is the capability, so links can be handed to a browser or another service. What a contact sent is
 * never a page of this origin (see file-serving.ts).
 */
@Controller('files')
export class FilesController {
  constructor(private readonly files: FileRepository) {}

  @Get(':id')
  @ApiReply(
    { type: 'string', format: 'binary', description: "The file's bytes (Content-Type as stored; passive types inline, the others as an attachment)" },
    { contentType: '*/*', description: 'The file, while it is kept', errors: ['not_found', 'internal'] },
  )
  async get(@Param('id') id: string, @Res() reply: FastifyReply): Promise<void> {
    // First, so the error answers carry them too.
    void reply.headers(FILE_SECURITY_HEADERS);
    const bare = id.replace(/\.[a-z0-9]{1,5}$/i, '');
    if (!/^[0-9a-f]{32}$/.test(bare)) throw ApiError.notFound('File not found');
    const file = await this.files.read(bare);
    if (!file) throw ApiError.notFound('File not found or expired');
    const serving = fileServing(file.mimetype, file.fileName);
    void reply
      .header('content-type', serving.contentType)
      .header('cache-control', 'private, max-age=3600')
      .header('content-disposition', serving.contentDisposition)
      .send(file.data);
  }
}
