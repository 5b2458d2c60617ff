import { Module } from '@nestjs/common';
import { FilesController } from './files.controller';
import { FilesService } from './files.service';

/** The API area `Service`: the stored files' route. */
@Module({
  controllers: [FilesController],
  providers: [FilesService],
})
export class FilesModule {}
