import { AdminAuditController, InstanceAuditController } from './audit/audit.controller';
import { AuditInterceptor } from './audit/audit.interceptor';
import { AuditRecorder } from './audit/audit-recorder';
import { AuditService } from './audit/audit.service';
import { type DynamicModule, Module, type Provider } from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import type { Bus } from '@gw/bus';
import type { Logger } from '@gw/platform';
import { PersistenceModule } from '@gw/persistence';
import type { DataSource } from 'typeorm';
import { AdminController } from './admin/admin.controller';
import { AdminTokenService } from './admin/admin-token.service';
import { AdminService } from './admin/admin.service';
import { AdminGuard, InstanceGuard } from './common/auth.guards';
import { ErrorFilter } from './common/error.filter';
import { RateLimitService } from './common/rate-limit.service';
import { DtoValidationPipe } from './common/validation';
import { HealthController } from './health/health.controller';
import { HealthService } from './health/health.service';
import { InstanceController } from './instance/instance.controller';
import { InstanceStatusController } from './instance/instance-status.controller';
import { InstanceService } from './instance/instance.service';
import { SessionExportController, SessionImportController } from './instance/session-move.controller';
import { SessionMoveService } from './instance/session-move.service';
import type { GatewayConfig } from './runtime/gateway-config';
import { BUS, DATA_SOURCE, GATEWAY_CONFIG, LOGGER } from './runtime/tokens';
import { SessionClient } from './session/session.client';
import { MessageController } from './message/message.controller';
import { MessageService } from './message/message.service';
import { MessageActionsService } from './message/message-actions.service';
import { MessageDownloadService } from './message/message-download.service';
import { HistorySyncService } from './message/history-sync.service';
import { FilesController } from './files/files.controller';
import { FilesService } from './files/files.service';
import { SendController } from './send/send.controller';
import { SendService } from './send/send.service';
import { AsyncQueueController } from './message/async/async-queue.controller';
import { AsyncQueueService } from './message/async/async-queue.service';
import { InteractiveRepliesService } from './send/interactive/interactive-replies.service';
import { InteractiveSendController } from './send/interactive/interactive-send.controller';
import { InteractiveSendService } from './send/interactive/interactive-send.service';
import { SendContentTools } from './send/send-content-tools';
import { SendRequester } from './send/send-requester';
import { StatusAudience } from './send/status/status-audience';
import { StatusSender } from './send/status/status-sender';
import { SenderController } from './sender/sender.controller';
import { SenderService } from './sender/sender.service';
import { SseController } from './sse/sse.controller';
import { GlobalWebhookController, WebhookController } from './webhook/webhook.controller';
import { WebhookService } from './webhook/webhook.service';
import { AdminDeliveriesController, SinkDeliveriesController, WebhookDeliveriesController } from './delivery/delivery-log.controller';
import { DeliveryLogService } from './delivery/delivery-log.service';
import { ChatwootConfigController, ChatwootWebhookController } from './chatwoot/chatwoot.controller';
import { ChatwootService } from './chatwoot/chatwoot.service';
import { GlobalSinkController, SinkController } from './sink/sink.controller';
import { SinkService } from './sink/sink.service';
import { ChatController } from './chat/chat.controller';
import { ChatService } from './chat/chat.service';
import { LabelController } from './label/label.controller';
import { LabelService } from './label/label.service';
import { CommunityController, GroupController } from './group/group.controller';
import { GroupService } from './group/group.service';
import { NewsletterController } from './newsletter/newsletter.controller';
import { NewsletterService } from './newsletter/newsletter.service';
import { ContactController } from './contact/contact.controller';
import { ContactService } from './contact/contact.service';
import { ProfileController } from './profile/profile.controller';
import { ProfileService } from './profile/profile.service';
import { QuickReplyController } from './quickreply/quick-reply.controller';
import { QuickReplyService } from './quickreply/quick-reply.service';
import { BusinessController } from './business/business.controller';
import { BusinessService } from './business/business.service';
import { CallController } from './call/call.controller';
import { CallService } from './call/call.service';
import { InstanceRuntimeController } from './instance/instance-runtime.controller';
import { InstanceRuntimeService } from './instance/instance-runtime.service';
import { ProxyManagedController } from './proxy-managed/proxy-managed.controller';
import { ProxyManagedService } from './proxy-managed/proxy-managed.service';
import { ChatbotController } from './chatbot/chatbot.controller';
import { ChatbotService } from './chatbot/chatbot.service';

export interface GatewayRuntime {
  config: GatewayConfig;
  dataSource: DataSource;
  bus: Bus;
  logger: Logger;
  /** The other services' modules when they run in this process (the embedded default). */
  embedded?: DynamicModule[];
}

@Module({})
export class GatewayModule {
  static register(runtime: GatewayRuntime): DynamicModule {
    const shared: Provider[] = [
      { provide: GATEWAY_CONFIG, useValue: runtime.config },
      { provide: DATA_SOURCE, useValue: runtime.dataSource },
      { provide: BUS, useValue: runtime.bus },
      { provide: LOGGER, useValue: runtime.logger },
    ];
    return {
      module: GatewayModule,
      // The repositories, injected by class into every module of the process (the embedded services' too).
      imports: [PersistenceModule.forDataSource(runtime.dataSource), ...(runtime.embedded ?? [])],
      controllers: [
        HealthController,
        FilesController,
        AdminController,
        InstanceController,
        InstanceStatusController,
        SessionExportController,
        SessionImportController,
        WebhookController,
        GlobalWebhookController,
        WebhookDeliveriesController,
        SinkDeliveriesController,
        AdminDeliveriesController,
        ChatwootConfigController,
        ChatwootWebhookController,
        SinkController,
        GlobalSinkController,
        SseController,
        MessageController,
        SendController,
        AsyncQueueController,
        InteractiveSendController,
        SenderController,
        ChatController,
        LabelController,
        GroupController,
        CommunityController,
        NewsletterController,
        ContactController,
        QuickReplyController,
        BusinessController,
        CallController,
        InstanceRuntimeController,
        ProxyManagedController,
        ProfileController,
        ChatbotController,
        AdminAuditController,
        InstanceAuditController,
      ],
      providers: [
        ...shared,
        HealthService,
        FilesService,
        AdminTokenService,
        AdminService,
        AdminGuard,
        InstanceGuard,
        RateLimitService,
        InstanceService,
        SessionMoveService,
        SessionClient,
        WebhookService,
        DeliveryLogService,
        ChatwootService,
        SinkService,
        MessageService,
        MessageActionsService,
        MessageDownloadService,
        HistorySyncService,
        SendService,
        SendContentTools,
        SendRequester,
        AsyncQueueService,
        InteractiveRepliesService,
        InteractiveSendService,
        StatusAudience,
        StatusSender,
        SenderService,
        ChatService,
        LabelService,
        GroupService,
        NewsletterService,
        ContactService,
        QuickReplyService,
        BusinessService,
        CallService,
        InstanceRuntimeService,
        ProxyManagedService,
        ProfileService,
        ChatbotService,
        AuditRecorder,
        AuditInterceptor,
        AuditService,
        { provide: APP_FILTER, useClass: ErrorFilter },
        { provide: APP_PIPE, useClass: DtoValidationPipe },
      ],
    };
  }
}
