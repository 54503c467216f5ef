/** Which cookie-authenticated changes count as coming from the site's own pages. */
import { Headers } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { fromSite } from "../../../src/marketplace/http/Authentication.js"

const sameOrigin = { publicOrigin: "https://market.test", siteOrigin: "https://market.test" } as const
const separateSite = { ...sameOrigin, publicOrigin: "https://api.market.test" } as const

describe("fromSite", () => {
  it.each([
    ["Origin of the site", { origin: "https://market.test" }],
    ["Origin and Sec-Fetch-Site same-origin", { origin: "https://market.test", "sec-fetch-site": "same-origin" }],
    ["a Referer on the site without Origin", { referer: "https://market.test/account/delete?x=1" }]
  ])("accepts %s", (_, headers) => expect(fromSite(Headers.fromInput(headers), sameOrigin)).toBe(true))

  it.each([
    ["no Origin or Referer", {}],
    ["another Origin", { origin: "https://evil.test" }],
    ["the opaque Origin null", { origin: "null" }],
    ["a look-alike Origin", { origin: "https://market.test.evil.test" }],
    ["another scheme", { origin: "http://market.test" }],
    ["another port", { origin: "https://market.test:8443" }],
    ["a Referer on another site", { referer: "https://evil.test/https://market.test/" }],
    ["an unparsable Referer", { referer: "not a url" }],
    ["Sec-Fetch-Site cross-site despite the Origin", { origin: "https://market.test", "sec-fetch-site": "cross-site" }],
    ["Sec-Fetch-Site none", { origin: "https://market.test", "sec-fetch-site": "none" }],
    ["Sec-Fetch-Site same-site when site and API share the origin", {
      origin: "https://market.test",
      "sec-fetch-site": "same-site"
    }],
    ["an Origin of another site with a Referer of the site", {
      origin: "https://evil.test",
      referer: "https://market.test/"
    }]
  ])("refuses %s", (_, headers) => expect(fromSite(Headers.fromInput(headers), sameOrigin)).toBe(false))

  it("accepts Sec-Fetch-Site same-site from the site when the API has its own origin", () => {
    expect(fromSite(Headers.fromInput({ origin: "https://market.test", "sec-fetch-site": "same-site" }), separateSite)).toBe(true)
    expect(fromSite(Headers.fromInput({ origin: "https://api.market.test", "sec-fetch-site": "same-origin" }), separateSite)).toBe(false)
  })
})
