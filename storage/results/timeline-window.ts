// What a timeline read asks for: a session's seconds from `start` to `end`, in intervals of
// `granularity` seconds. Shared by the timeline queries and the speaking rate's words.
export interface Window {
  session: string;
  granularity: number;
  start: number;
  end: number;
}
