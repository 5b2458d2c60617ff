import 'reflect-metadata';
import { runService } from '@gw/service-host';
import { loadDispatcherConfig } from './dispatcher-config';
import { startDispatcher } from './runtime';

runService('dispatcher', loadDispatcherConfig, startDispatcher);
