/**
 * Run before each test file (vitest `setupFiles`). Files share one module graph per worker (`isolate: false`),
 * and with it the global `fetch` dispatcher and its keep-alive sockets. A socket kept from an earlier file's
 * server could then carry a request to that old server once the OS hands its port to a new one; each file
 * gets a dispatcher of its own, as it had with a process of its own.
 */
import { Agent, setGlobalDispatcher } from "undici"

setGlobalDispatcher(new Agent())
