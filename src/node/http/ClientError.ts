/**
 * Requests Node's HTTP parser refuses before any handler sees them (headers over
 * the size limit, a malformed request line, broken chunked framing, a request
 * not received in time) are answered in the node's envelope, 400 INVALID_INPUT,
 * instead of Node's bare status line with an empty body.
 */
import * as Http from "node:http"
import type { Duplex } from "node:stream"

interface ParserError extends Error {
  readonly code?: string
}

const describe = (error: ParserError): { readonly message: string; readonly limitBytes?: number } => {
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
export const response = (error: ParserError): string => {
  const { limitBytes, message } = describe(error)
  const body = JSON.stringify({ code: "INVALID_INPUT", message, field: null, ...(limitBytes === undefined ? {} : { limitBytes }) })
  return "HTTP/1.1 400 Bad Request\r\n" +
    "content-type: application/json\r\n" +
    `content-length: ${Buffer.byteLength(body)}\r\n` +
    "connection: close\r\n\r\n" +
    body
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
 * Writes the envelope when the socket can still take a whole response; a client
 * that went away, or a response already under way (whose bytes a second response
 * would corrupt), only closes the connection, as Node itself does.
 */
export const onClientError = (error: ParserError, socket: Duplex): void => {
  if (error.code === "ECONNRESET" || !socket.writable || socket.writableEnded || responseUnderWay(socket)) {
    socket.destroy()
    return
  }
  socket.end(response(error))
  setTimeout(() => socket.destroy(), lingerMs).unref()
}

/** The node's HTTP server: Node's, with parser errors answered in the envelope. */
export const createServer = (): Http.Server => {
  const server = Http.createServer()
  server.on("clientError", onClientError)
  return server
}
