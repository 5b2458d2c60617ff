/**
 * Checkout hosts a `/send/request-payment` paymentLink may point at when PAYMENT_LINK_DOMAINS is not
 * set (spec: "only approved domains accepted"): the common Brazilian payment providers. A listed
 * domain also approves its subdomains (`mercadopago.com.br` approves `www.mercadopago.com.br`).
 */
export const DEFAULT_PAYMENT_LINK_DOMAINS = [
  'mercadopago.com',
  'mercadopago.com.br',
  'mpago.la',
  'mpago.li',
  'pagseguro.uol.com.br',
  'pag.ae',
  'pagar.me',
  'asaas.com',
  'picpay.me',
  'infinitepay.io',
  'checkout.stripe.com',
  'buy.stripe.com',
  'paypal.com',
  'paypal.me',
  'hotmart.com',
] as const;

const HOSTNAME = /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;

/** PAYMENT_LINK_DOMAINS as a list: lower-case host names, or an error naming the bad entry. */
export function parsePaymentLinkDomains(value: string | undefined): string[] {
  if (value === undefined || value.trim() === '') return [...DEFAULT_PAYMENT_LINK_DOMAINS];
  const domains = value
    .split(',')
    .map((entry) => entry.trim().toLowerCase().replace(/^\*\./, ''))
    .filter(Boolean);
  const bad = domains.find((domain) => !HOSTNAME.test(domain));
  if (bad !== undefined) throw new Error(`"${bad}" is not a domain name`);
  return domains;
}
