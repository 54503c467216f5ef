/**
 * The node's HTTP server: Node's, with parser errors (src/http/ClientError.ts)
 * answered in the node's envelope, 400 INVALID_INPUT.
 */
import { type ParserRefusal, serverFactory } from "../../http/ClientError.js"

const answer = ({ limitBytes, message }: ParserRefusal) => ({
  status: 400,
  body: { code: "INVALID_INPUT", message, field: null, ...(limitBytes === undefined ? {} : { limitBytes }) }
})

export const createServer = serverFactory(answer)
