/**
 * How the node's database names columns: snake_case in SQL, camelCase in the rows the stores read; the client and
 * the statements run on a transaction's connection (Direct.ts) use these.
 */
import { String } from "effect"

/**
 * `f` remembering its answers: the client calls these for every column of every statement it compiles and of
 * every row it reads, and the node uses a few dozen names. Bounded all the same (cleared when full), since a
 * statement may name a column of user data (none does today).
 */
const remembered = (f: (name: string) => string, max = 1024) => {
  const known = new Map<string, string>()
  return (name: string) => {
    let answer = known.get(name)
    if (answer === undefined) {
      if (known.size >= max) known.clear()
      answer = f(name)
      known.set(name, answer)
    }
    return answer
  }
}

export const resultNames = remembered(String.snakeToCamel)
export const queryNames = remembered(String.camelToSnake)
