/** Example bodies of the `/contacts`, `/contact/*`, `/chat/check`, `/chat/details` and `/chat/GetNameAndImageURL` answers. */
import { CHAT_EXAMPLE } from '../../common/dto/common.examples';
import type { ChatCheckResponse, ChatDetailsResponse, ChatNameAndImageResponse, ContactAddedResponse, ContactPageResponse } from './contact.response';
import type { ContactRemovedResponse, ContactResponse } from './contact.response';

export const CONTACT_EXAMPLE: ContactResponse = { jid: '5511999999999@s.whatsapp.net', contact_name: 'João Silva', contact_FirstName: 'João' };

export const CONTACT_PAGE_EXAMPLE: ContactPageResponse = {
  contacts: [CONTACT_EXAMPLE],
  totalDeviceContacts: 3,
  pagination: { totalRecords: 1, limit: 100, offset: 0 },
};

export const CONTACT_ADDED_EXAMPLE: ContactAddedResponse = {
  success: true,
  message: 'Contact added successfully',
  contact: { jid: '5511999999999@s.whatsapp.net', name: 'João Silva', phone: '5511999999999' },
};

export const CONTACT_REMOVED_EXAMPLE: ContactRemovedResponse = {
  success: true,
  message: 'Contact removed successfully',
  removed_contact: { jid: '5511999999999@s.whatsapp.net', phone: '5511999999999' },
};

export const CHAT_CHECK_EXAMPLE: ChatCheckResponse = {
  query: '5511999999999',
  jid: '5511999999999@s.whatsapp.net',
  lid: '123456789012345@lid',
  isInWhatsapp: true,
  verifiedName: '',
  groupName: '',
  error: '',
};

export const CHAT_NAME_AND_IMAGE_EXAMPLE: ChatNameAndImageResponse = {
  name: 'João Silva',
  wa_name: 'João',
  wa_contactName: 'João Silva',
  image: 'https://pps.whatsapp.net/v/t61.24694-24/…',
  imagePreview: '',
};

// `/chat/details` answers one picture: `image` without `preview`, `imagePreview` with it.
const { imagePreview: _imagePreview, ...CHAT_WITH_IMAGE } = CHAT_EXAMPLE;

/** `POST /chat/details` without `preview`. */
export const CHAT_DETAILS_EXAMPLE: ChatDetailsResponse = {
  ...CHAT_WITH_IMAGE,
  common_groups: 'Família(120363025246125486@g.us)',
  image: 'https://pps.whatsapp.net/v/t61.24694-24/…',
};
