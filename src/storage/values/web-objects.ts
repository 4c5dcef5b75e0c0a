/**
 * The fetch API's objects the platform stores: `Headers`, and a `Request` or `Response` without a
 * body (one with a body is refused, see structured-format.ts). What is kept follows workerd's own
 * serialization of them: a Request's URL, method, headers, redirect mode and cache mode; a
 * Response's status, status text and headers (status 0 is `Response.error()`). The rest (a
 * Request's mode, credentials, referrer, integrity, keepalive; a Response's url, type and
 * redirected) reads back as a newly constructed object's, as on the platform. A Request that follows
 * an AbortSignal is refused, as the platform refuses it ({@link requestSignalRefusal}).
 *
 * Values are read with the platform classes' own methods and getters, so a subclass that overrides
 * them is stored as what it holds (and reads back as the base class, as on the platform).
 */
import { dataCloneError } from "../../errors";

/** A `Headers` as its iteration gives it: lower-cased names in order, `set-cookie` one a value. */
export type HeaderEntries = [name: string, value: string][];

/** What is stored of a bodyless `Request`. */
export interface RequestParts {
  readonly url: string;
  readonly method: string;
  readonly redirect: string;
  /** `"default"` when none was given. */
  readonly cache: string;
  readonly headers: HeaderEntries;
}

/** What is stored of a bodyless `Response`. */
export interface ResponseParts {
  readonly status: number;
  readonly statusText: string;
  readonly headers: HeaderEntries;
}

/** Which fetch class `value` is an instance of (checked with `instanceof`, not its brand). */
export function webObjectKind(value: object): "Headers" | "Request" | "Response" | undefined {
  if (typeof Headers === "function" && value instanceof Headers) return "Headers";
  if (typeof Request === "function" && value instanceof Request) return "Request";
  if (typeof Response === "function" && value instanceof Response) return "Response";
  return undefined;
}

/** The platform getter `name` of `proto`, called on `value` (a subclass's override is not consulted). @internal */
export function platformGetter(proto: object, name: string, value: object): unknown {
  const getter = Object.getOwnPropertyDescriptor(proto, name)?.get;
  return getter === undefined ? undefined : getter.call(value);
}

/**
 * The body of `value`, a `Request` or `Response`, as the platform's getter gives it (a subclass
 * that overrides `body` does not decide whether it is stored).
 */
export function platformBody(value: Request | Response, className: "Request" | "Response"): unknown {
  return platformGetter((className === "Request" ? Request : Response).prototype, "body", value);
}

/**
 * The platform's refusal of a Request made with a signal: workerd writes a Request's signal with
 * it and refuses the signal (checked through Miniflare, an aborted one too), while a Request made
 * without one (or from one made without, or a clone) is stored. Node gives every Request a signal
 * of its own; one that follows another signal keeps the controller it follows with (an own symbol
 * named `abortController`), and one made with an aborted signal starts aborted. Node cannot tell a
 * Request made from a Request (`new Request(request, init)`, which follows that request's signal)
 * from one made with a signal: it is refused too, unless made with `signal: null`.
 */
export function requestSignalRefusal(request: Request): Error | undefined {
  const signal = platformGetter(Request.prototype, "signal", request) as AbortSignal | undefined;
  const aborted = signal === undefined ? false : platformGetter(AbortSignal.prototype, "aborted", signal) === true;
  const follows = Object.getOwnPropertySymbols(request).some((symbol) => symbol.description === "abortController");
  return aborted || follows ? dataCloneError("AbortSignal serialization is not enabled.") : undefined;
}

/**
 * Whether `headers` cannot be changed (the headers of a `fetch()` response, of `Response.error()`
 * or `Response.redirect()`): `delete` of a name it does not hold throws only then.
 */
export function isImmutableHeaders(headers: Headers): boolean {
  let probe = "x-actorstore-guard-probe";
  while (Headers.prototype.has.call(headers, probe)) probe += "-";
  try {
    Headers.prototype.delete.call(headers, probe);
    return false;
  } catch {
    return true;
  }
}

/** The entries of `headers`, as `Headers.prototype.entries` gives them. */
export function headerEntries(headers: Headers): HeaderEntries {
  const entries: HeaderEntries = [];
  for (const [name, value] of Headers.prototype.entries.call(headers)) entries.push([name, value]);
  return entries;
}

/** A new `Headers` (guard "none": it can be changed) holding `entries`. */
export function headersFrom(entries: HeaderEntries): Headers {
  const headers = new Headers();
  for (const [name, value] of entries) headers.append(name, value);
  return headers;
}

/**
 * A `Headers` holding `entries` that cannot be changed, as the platform reads back one stored
 * immutable (it keeps a Headers's guard). Node makes such a Headers only for its own responses:
 * this one is a `Response.error()`'s, its entries put in the header list it shares with that
 * response (Node's `state` symbol). Where the runtime has no such list, a changeable `Headers`.
 * Throws the constructor's error when `entries` are not valid headers.
 */
export function immutableHeadersFrom(entries: HeaderEntries): Headers {
  const checked = headersFrom(entries);
  const response = Response.error();
  const state = Object.getOwnPropertySymbols(response).find((symbol) => symbol.description === "state");
  const list = (state === undefined ? undefined : (response as unknown as Record<symbol, unknown>)[state]) as
    | { headersList?: { append?: (name: string, value: string, isLowerCase: boolean) => void } }
    | undefined;
  const append = list?.headersList?.append;
  if (typeof append !== "function") return checked;
  for (const [name, value] of headerEntries(checked)) append.call(list?.headersList, name, value, false);
  const headers = platformGetter(Response.prototype, "headers", response) as Headers;
  // Only if the list is the one these headers show (else a changeable copy, never other entries).
  return JSON.stringify(headerEntries(headers)) === JSON.stringify(headerEntries(checked)) ? headers : checked;
}

/** What is stored of `request` (which has no body). */
export function requestParts(request: Request): RequestParts {
  const proto = Request.prototype;
  return {
    url: String(platformGetter(proto, "url", request)),
    method: String(platformGetter(proto, "method", request)),
    redirect: String(platformGetter(proto, "redirect", request)),
    cache: String(platformGetter(proto, "cache", request) ?? "default"),
    headers: headerEntries(platformGetter(proto, "headers", request) as Headers),
  };
}

/** A new `Request` of `parts`. Throws the constructor's error when `parts` makes none. */
export function requestFrom(parts: RequestParts): Request {
  const init: RequestInit = {
    method: parts.method,
    redirect: parts.redirect as RequestRedirect,
    headers: headersFrom(parts.headers),
  };
  if (parts.cache !== "default") init.cache = parts.cache as RequestCache;
  // The only cache mode that needs a mode, which is not kept: the one it must have had.
  if (parts.cache === "only-if-cached") init.mode = "same-origin";
  return new Request(parts.url, init);
}

/** What is stored of `response` (which has no body). */
export function responseParts(response: Response): ResponseParts {
  const proto = Response.prototype;
  return {
    status: Number(platformGetter(proto, "status", response)),
    statusText: String(platformGetter(proto, "statusText", response)),
    headers: headerEntries(platformGetter(proto, "headers", response) as Headers),
  };
}

/** A new `Response` of `parts`. Throws the constructor's error when `parts` makes none. */
export function responseFrom(parts: ResponseParts): Response {
  // Status 0 is only ever Response.error()'s, which the constructor refuses (as on the platform).
  if (parts.status === 0) return Response.error();
  return new Response(null, {
    status: parts.status,
    statusText: parts.statusText,
    headers: headersFrom(parts.headers),
  });
}
