import type { LabelEditedResponse, LabelRefreshResponse, LabelResponse } from './label.response';

/** The bodies the labels' routes answer, as the OpenAPI document shows them. */
export const LABEL_EXAMPLE: LabelResponse = {
  id: '5511999999999:10',
  name: 'Cliente VIP',
  color: 2,
  colorHex: '#FF9DFF',
  labelid: '10',
  owner: '5511999999999',
  created: '2024-01-01T12:00:00.000Z',
  updated: '2024-01-01T12:00:00.000Z',
};

export const LABEL_REFRESH_EXAMPLE: LabelRefreshResponse = {
  success: true,
  request_id: 'req_01HQ5Z8K3M',
  status: 'started',
  message: 'Label refresh started. Use GET /labels to fetch the refreshed list.',
  force: false,
  fullSync: false,
};

export const LABEL_EDITED_EXAMPLE: LabelEditedResponse = { response: 'Label edited' };
