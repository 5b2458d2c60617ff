import type { CallMadeResponse, CallRejectedResponse } from './call.response';

/** The bodies the calls' routes answer, as the OpenAPI document shows them. */
export const CALL_MADE_EXAMPLE: CallMadeResponse = {
  response: 'Call successful',
  callId: '3EB0C4A1F2B7D6E8A9C0B1D2E3F4A5B6',
  number: '5511999999999@s.whatsapp.net',
  call_duration: 15,
};

export const CALL_REJECTED_EXAMPLE: CallRejectedResponse = {
  response: 'Call rejected',
  id: 'ABEiGmo8oqkAcAKrBYQAAAAA_1',
  number: '5511999999999@s.whatsapp.net',
};
