// Text that users give us and that we show, store and log: names, source names, text events.
// Control characters and lone surrogates are refused with a 400 rather than normalised: a
// client that sends them has a bug worth seeing, and a lone surrogate cannot be stored as
// UTF-8 at all. The check is a pattern, so the schema documents it and TypeBox compiles it.
import { Type } from '@sinclair/typebox';

// Either a character that is neither a control character (C0, DEL, C1) nor a surrogate, or a
// well-formed surrogate pair. Written for RegExp without the `u` flag, as TypeBox compiles it.
const CHARACTER = String.raw`[^\u0000-\u001F\u007F-\u009F\uD800-\uDFFF]|[\uD800-\uDBFF][\uDC00-\uDFFF]`;
// Text events may hold tabs and line breaks (a sensor's multi-line report); nothing else.
const CHARACTER_OR_BREAK = String.raw`${CHARACTER}|[\t\n]`;

/** A name: 1 to `maxLength` characters, no control characters, no lone surrogates. */
export const CleanName = (maxLength: number) =>
  Type.String({
    minLength: 1,
    maxLength,
    pattern: `^(?:${CHARACTER})*$`,
    description: `a string of 1 to ${maxLength} characters without control characters or lone surrogates`,
  });

/** Free text: up to `maxLength` characters; tab and line feed allowed, other controls not. */
export const CleanText = (maxLength: number) =>
  Type.String({
    maxLength,
    pattern: `^(?:${CHARACTER_OR_BREAK})*$`,
    description: `a string of at most ${maxLength} characters without control characters (tab and line feed allowed) or lone surrogates`,
  });

