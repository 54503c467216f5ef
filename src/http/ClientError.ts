/**
 * Requests Node's HTTP parser refuses before any handler sees them (headers over
 * the size limit, a malformed request line, broken chunked framing, a request
 * not received in time) are answered in the service's own envelope instead of
 * Node's bare status line with an empty body. Each service says what the answer
 * holds; writing it, and when it can be written at all, is shared.
 */
import * as Http from "node:http"
import type { Duplex } from "node:stream"

export interface ParserError extends Error {
  readonly code?: string
}

/** What went wrong, in a client's words. */
export interface ParserRefusal {
  readonly message: string
  /** The header size limit, when the headers were too large. */
  readonly limitBytes?: number
}

/** A service's answer to a refusal: status, JSON body and extra headers. */
export interface ParserAnswer {
  readonly status: number
  readonly body: unknown
  readonly headers?: Readonly<Record<string, string>>
}

export const describe = (error: ParserError): ParserRefusal => {
  switch (error.code) {
    case "HPE_HEADER_OVERFLOW":
      return { message: `The request headers are larger than ${Http.maxHeaderSize} bytes`, limitBytes: Http.maxHeaderSize }
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return { message: "The request's chunk extensions are too large" }
    case "ERR_HTTP_REQUEST_TIMEOUT":
    case "HPE_HEADERS_TIMEOUT":
      return { message: "The request was not received in time" }
    default:
      return { message: "The request is not valid HTTP/1.1" }
  }
}

/** A complete HTTP/1.1 response that closes the connection: the parser cannot go on after its error. */
export const response = ({ body, headers = {}, status }: ParserAnswer): string => {
  const text = JSON.stringify(body)
  const extra = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join("")
  return `HTTP/1.1 ${status} ${Http.STATUS_CODES[status] ?? ""}\r\n` +
    "content-type: application/json\r\n" +
    `content-length: ${Buffer.byteLength(text)}\r\n` +
    extra +
    "connection: close\r\n\r\n" +
    text
}

/** Node's own response in progress on the socket, if any (set while a response is attached). */
const responseUnderWay = (socket: Duplex): boolean =>
  (socket as Duplex & { readonly _httpMessage?: Http.ServerResponse | null })._httpMessage?.headersSent === true

/**
 * How long a refused connection stays open to take what the client still sends:
 * closing with unread bytes makes the kernel send a reset, which can discard the
 * answer before the client reads it.
 */
const lingerMs = 1_000

/**
 * Writes the answer when the socket can still take a whole response; a client
 * that went away, or a response already under way (whose bytes a second response
 * would corrupt), only closes the connection, as Node itself does.
 */
export const onClientError = (answer: (refusal: ParserRefusal) => ParserAnswer) => (error: ParserError, socket: Duplex): void => {
  if (error.code === "ECONNRESET" || !socket.writable || socket.writableEnded || responseUnderWay(socket)) {
    socket.destroy()
    return
  }
  socket.end(response(answer(describe(error))))
  setTimeout(() => socket.destroy(), lingerMs).unref()
}

/** A factory of Node HTTP servers whose parser errors are answered by `answer`. */
export const serverFactory = (answer: (refusal: ParserRefusal) => ParserAnswer) => (): Http.Server => {
  const server = Http.createServer()
  server.on("clientError", onClientError(answer))
  return server
}
