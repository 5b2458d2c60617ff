import { Injectable } from '@nestjs/common';
import { FileRepository } from '@gw/persistence';
import type { FastifyReply } from 'fastify';
import { ApiError } from '../common/api-error';
import { FILE_SECURITY_HEADERS, fileServing } from './file-serving';

/** The use case of `GET /files/<id>`: find the stored file by its capability id and serve it safely. */
@Injectable()
export class FilesService {
  constructor(private readonly files: FileRepository) {}

  async serve(id: string, reply: FastifyReply): Promise<void> {
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
