/** Reading what the node sent: a Content-Disposition header's type, `filename` and decoded `filename*`. */
import { parse } from "content-disposition"

export const contentDisposition = (header: string) => {
  // `parse` without extended decoding keeps both parameters as sent.
  const parsed = parse(header, { extended: false })
  const star = parsed.parameters["filename*"]
  const match = star === undefined ? null : /^UTF-8''(.*)$/i.exec(star)
  return {
    type: parsed.type,
    filename: parsed.parameters.filename,
    filenameStar: match === null ? star : decodeURIComponent(match[1] ?? "")
  }
}
