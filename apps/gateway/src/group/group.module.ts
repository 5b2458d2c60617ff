import { Module } from '@nestjs/common';
import { SendModule } from '../send/send.module';
import { CommunityController, GroupController } from './group.controller';
import { GroupService } from './group.service';

/** The API area `Groups & Communities`. */
@Module({
  imports: [SendModule],
  controllers: [GroupController, CommunityController],
  providers: [GroupService],
})
export class GroupModule {}
