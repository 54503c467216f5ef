/**
 * Self-signed certificates for test HTTPS servers. A test trusts one by
 * handing its `cert` to the client under test as that client's only `ca`;
 * nothing global changes (no NODE_TLS_REJECT_UNAUTHORIZED, no global agent).
 */
import { Effect } from "effect"
import { generate } from "selfsigned"

export interface Certificate {
  /** PEM private key, for the server. */
  readonly key: string
  /** PEM certificate: the server's certificate and, for the client, its trust anchor. */
  readonly cert: string
}

export interface CertificateNames {
  /** DNS names (subjectAltName type 2). */
  readonly dns?: ReadonlyArray<string>
  /** IP addresses (subjectAltName type 7). */
  readonly ips?: ReadonlyArray<string>
}

/** A P-256 certificate valid from an hour ago for a day, naming `localhost`, 127.0.0.1 and ::1 plus `names`. */
export const selfSignedCertificate = (names: CertificateNames = {}): Effect.Effect<Certificate> =>
  Effect.promise(async () => {
    const dns = ["localhost", ...(names.dns ?? [])]
    const ips = ["127.0.0.1", "::1", ...(names.ips ?? [])]
    const now = Date.now()
    const pems = await generate([{ name: "commonName", value: "clark test server" }], {
      keyType: "ec",
      curve: "P-256",
      algorithm: "sha256",
      notBeforeDate: new Date(now - 3_600_000),
      notAfterDate: new Date(now + 86_400_000),
      extensions: [
        // A self-signed certificate used as its own trust anchor must be allowed to act as a CA.
        { name: "basicConstraints", cA: true },
        { name: "keyUsage", digitalSignature: true, keyCertSign: true },
        { name: "extKeyUsage", serverAuth: true },
        {
          name: "subjectAltName",
          altNames: [
            ...dns.map((value) => ({ type: 2 as const, value })),
            ...ips.map((ip) => ({ type: 7 as const, ip }))
          ]
        }
      ]
    })
    return { key: pems.private, cert: pems.cert }
  })
