import { MESSAGE_EXAMPLE } from '../../common/dto/common.examples';
import type {
  CampaignCleanupResponse,
  CampaignCreatedResponse,
  CampaignEditedResponse,
  CampaignMessagesResponse,
  CampaignsClearedResponse,
  MessageQueueFolderResponse,
} from './sender.response';

/** The bodies the campaign routes (`/sender/*`) answer, as the OpenAPI document shows them. */
export const SIMPLE_CAMPAIGN_CREATED_EXAMPLE: CampaignCreatedResponse = { folder_id: 'f4a1b2c3d4e5f', count: 2, status: 'queued' };
export const ADVANCED_CAMPAIGN_CREATED_EXAMPLE: CampaignCreatedResponse = { folder_id: 'f5b2c3d4e5f6a', count: 2, status: 'queued' };

export const CAMPAIGN_EDITED_EXAMPLE: CampaignEditedResponse = { status: 'scheduled', message: 'Folder resumed successfully' };

export const CAMPAIGN_CLEANUP_EXAMPLE: CampaignCleanupResponse = { status: 'cleanup started' };

export const CAMPAIGNS_CLEARED_EXAMPLE: CampaignsClearedResponse = { status: 'processed', messages_deleted: 150, folders_deleted: 3 };

export const FOLDER_EXAMPLE: MessageQueueFolderResponse = {
  id: 'f4a1b2c3d4e5f',
  info: 'Campanha Janeiro',
  status: 'done',
  scheduled_for: 1706198400000,
  delayMin: 10,
  delayMax: 30,
  log_delivered: 2,
  log_failed: 0,
  log_played: 0,
  log_read: 1,
  log_sucess: 2,
  log_total: 2,
  owner: '5511999999999',
  created: '2024-01-25T15:00:00.000Z',
  updated: '2024-01-25T15:01:00.000Z',
};

export const CAMPAIGN_MESSAGES_EXAMPLE: CampaignMessagesResponse = {
  messages: [{ ...MESSAGE_EXAMPLE, fromMe: true, wasSentByApi: true, status: 'Sent', text: 'Promoção!', send_folder_id: 'f4a1b2c3d4e5f' }],
  pagination: { totalRecords: 2, limit: 1000, offset: 0 },
};
