import { Module } from '@nestjs/common';
import { ContactController } from './contact.controller';
import { ContactService } from './contact.service';

/** The API area `Contacts`. */
@Module({
  controllers: [ContactController],
  providers: [ContactService],
})
export class ContactModule {}
