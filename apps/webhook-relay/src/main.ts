import 'reflect-metadata';
import { runService } from '@gw/service-host';
import { loadWebhookRelayConfig } from './webhook-relay-config';
import { startWebhookRelay } from './runtime';

runService('webhook-relay', loadWebhookRelayConfig, startWebhookRelay);
