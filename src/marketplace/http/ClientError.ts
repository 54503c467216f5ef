/**
 * The marketplace's HTTP server: Node's, with parser errors (src/http/ClientError.ts)
 * answered in the envelope with a request id, like every other refusal.
 *
 * Status 400 `bad_request` for all of them, headers over the limit included
 * (Node says 431) and a request not received in time (408): the spec's error
 * table has no other status for a request that cannot be read, as for a body
 * over its limit; `details.limitBytes` says what 431 would.
 */
import { randomUUID } from "node:crypto"
import { type ParserRefusal, serverFactory } from "../../http/ClientError.js"

const answer = ({ limitBytes, message }: ParserRefusal) => {
  const requestId = randomUUID()
  return {
    status: 400,
    headers: { "x-request-id": requestId },
    body: {
      error: {
        code: "bad_request",
        message,
        requestId,
        ...(limitBytes === undefined ? {} : { details: { limitBytes } })
      }
    }
  }
}

export const createServer = serverFactory(answer)
