import { Module } from '@nestjs/common';
import { SendModule } from '../send/send.module';
import { ProfileController } from './profile.controller';
import { ProfileService } from './profile.service';

/** The API area `Profile`. */
@Module({
  imports: [SendModule],
  controllers: [ProfileController],
  providers: [ProfileService],
})
export class ProfileModule {}
