// The approved domains are configuration (PAYMENT_LINK_DOMAINS), read with the rest of it in runtime/.
export { DEFAULT_PAYMENT_LINK_DOMAINS, parsePaymentLinkDomains } from '../../runtime/payment-link-domains';

/**
 * Why a paymentLink is refused ('' when it is accepted): it must be an https URL without credentials
 * whose host is an approved domain or a subdomain of one.
 */
export function paymentLinkRefusal(link: string, domains: readonly string[]): string {
  let url: URL;
  try {
    url = new URL(link);
  } catch {
    return 'paymentLink must be an https URL';
  }
  if (url.protocol !== 'https:' || !url.hostname.includes('.')) return 'paymentLink must be an https URL';
  if (url.username || url.password) return 'paymentLink must not carry credentials';
  const host = url.hostname.toLowerCase().replace(/\.$/, '');
  if (!domains.some((domain) => host === domain || host.endsWith(`.${domain}`))) return `paymentLink: ${host} is not an approved payment domain`;
  return '';
}
