import { Injectable } from '@nestjs/common';
import { FileRepository } from '@gw/persistence';
import type { FastifyReply } from 'fastify';
import { ApiError } from '../common/api-error';
import { FILE_SECURITY_HEADERS, fileServing } from './file-serving';

/** How long the link a `/files/<id>` of an S3 file redirects to stays valid. */
const REDIRECT_LINK_SECONDS = 300;

/**
 * The use case of `GET /files/<id>`: find the stored file by its capability id and serve it safely.
 * A file in Postgres is answered here; a file in S3 is a redirect to a short-lived signed link to the
 * bucket, which answers with the same safe content type and disposition (set in the signature).
 */
@Injectable()
export class FilesService {
  constructor(private readonly files: FileRepository) {}

  async serve(id: string, reply: FastifyReply): Promise<void> {
    // First, so the error answers carry them too.
    void reply.headers(FILE_SECURITY_HEADERS);
    const bare = id.replace(/\.[a-z0-9]{1,5}$/i, '');
    if (!/^[0-9a-f]{32}$/.test(bare)) throw ApiError.notFound('File not found');
    const info = await this.files.info(bare);
    if (!info) throw ApiError.notFound('File not found or expired');
    const serving = fileServing(info.mimetype, info.fileName);
    const signed = await this.files.signedLink(info, serving, REDIRECT_LINK_SECONDS);
    if (signed) {
      void reply.header('cache-control', 'no-store').redirect(signed, 302);
      return;
    }
    const file = await this.files.read(bare);
    if (!file) throw ApiError.notFound('File not found or expired');
    void reply
      .header('content-type', serving.contentType)
      .header('cache-control', 'private, max-age=3600')
      .header('content-disposition', serving.contentDisposition)
      .send(file.data);
  }
}
