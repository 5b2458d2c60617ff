import { Module } from '@nestjs/common';
import { InstanceModule } from '../instance/instance.module';
import { AdminController } from './admin.controller';
import { AdminService } from './admin.service';

/** The API area `Admin`. AdminTokenService itself is the core module's: the guards, the console and MCP check the admin token too. */
@Module({
  imports: [InstanceModule],
  controllers: [AdminController],
  providers: [AdminService],
})
export class AdminModule {}
