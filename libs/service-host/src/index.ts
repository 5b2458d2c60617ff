export { LOG_LEVELS, readServiceHostConfig, runService, startService } from './service-host';
export type { RunningService, ServiceHostConfig } from './service-host';
