/** Injection tokens of what the runtime hands to the gateway's modules. */
export const LOGGER = Symbol('LOGGER');
export const DATA_SOURCE = Symbol('DATA_SOURCE');
export const BUS = Symbol('BUS');
export const GATEWAY_CONFIG = Symbol('GATEWAY_CONFIG');
