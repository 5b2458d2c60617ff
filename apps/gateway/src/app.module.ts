import { type DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { PersistenceModule } from '@gw/persistence';
import { AdminModule } from './admin/admin.module';
import { AuditModule } from './audit/audit.module';
import { BusinessModule } from './business/business.module';
import { CallModule } from './call/call.module';
import { ChatModule } from './chat/chat.module';
import { ChatbotModule } from './chatbot/chatbot.module';
import { ChatwootModule } from './chatwoot/chatwoot.module';
import { ErrorFilter } from './common/error.filter';
import { DtoValidationPipe } from './common/validation';
import { ContactModule } from './contact/contact.module';
import { DeliveryModule } from './delivery/delivery.module';
import { FilesModule } from './files/files.module';
import { GatewayCoreModule } from './gateway-core.module';
import { GroupModule } from './group/group.module';
import { HealthModule } from './health/health.module';
import { InstanceModule } from './instance/instance.module';
import { LabelModule } from './label/label.module';
import { AsyncQueueModule } from './message/async/async-queue.module';
import { MessageModule } from './message/message.module';
import { NewsletterModule } from './newsletter/newsletter.module';
import { ProfileModule } from './profile/profile.module';
import { ProxyManagedModule } from './proxy-managed/proxy-managed.module';
import { QuickReplyModule } from './quickreply/quick-reply.module';
import type { GatewayRuntime } from './runtime/gateway-runtime';
import { SendModule } from './send/send.module';
import { SenderModule } from './sender/sender.module';
import { SinkModule } from './sink/sink.module';
import { SseModule } from './sse/sse.module';
import { WebhookModule } from './webhook/webhook.module';

export type { GatewayRuntime } from './runtime/gateway-runtime';

/** One module per API area (apps/gateway/src/<area>/<area>.module.ts), over the shared core. */
const AREAS = [
  HealthModule,
  FilesModule,
  AdminModule,
  InstanceModule,
  ProxyManagedModule,
  ProfileModule,
  BusinessModule,
  CallModule,
  WebhookModule,
  SseModule,
  DeliveryModule,
  SinkModule,
  SendModule,
  AsyncQueueModule,
  MessageModule,
  ChatModule,
  ContactModule,
  LabelModule,
  GroupModule,
  NewsletterModule,
  QuickReplyModule,
  SenderModule,
  ChatwootModule,
  ChatbotModule,
  AuditModule,
];

@Module({})
export class GatewayModule {
  static register(runtime: GatewayRuntime): DynamicModule {
    return {
      module: GatewayModule,
      imports: [
        // The repositories, injected by class into every module of the process (the embedded services' too).
        PersistenceModule.forDataSource(runtime.dataSource),
        GatewayCoreModule.register(runtime),
        ...AREAS,
        ...(runtime.embedded ?? []),
      ],
      providers: [
        { provide: APP_FILTER, useClass: ErrorFilter },
        { provide: APP_PIPE, useClass: DtoValidationPipe },
      ],
    };
  }
}
