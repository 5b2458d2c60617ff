// The shape of a control-API route, on its own so feature modules (groups, status broadcasts,
// newsletters) can contribute routes without importing the control API that serves them.

type Params = Record<string, string>;

/** Handles one control-API request; what it returns is the JSON body (or a RawResponse). */
export type Handler = (ctx: { params: Params; query: URLSearchParams; body: Record<string, unknown> }) => Promise<unknown> | unknown;

/** A route contributed by a feature module (groups…). */
export interface RouteSpec {
  method: string;
  path: string;
  handler: Handler;
}
