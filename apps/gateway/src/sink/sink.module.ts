import { Module } from '@nestjs/common';
import { GlobalSinkController, SinkController } from './sink.controller';
import { SinkService } from './sink.service';

/** The API area `Event sinks`: per instance and global. */
@Module({
  controllers: [SinkController, GlobalSinkController],
  providers: [SinkService],
})
export class SinkModule {}
