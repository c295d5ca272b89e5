export function whereIsThis(): string {
  return new URL('./sibling.ts', import.meta.url).pathname;
}
