/** Reading the node's SQLite columns, which come back untyped from the driver. */
export type Row = Record<string, unknown>

export const str = (value: unknown): string => String(value)
export const strOrNull = (value: unknown): string | null => (value === null || value === undefined ? null : String(value))
export const num = (value: unknown): number => Number(value)
