// TypeBox schemas are JSON Schema already, the dialect OpenAPI 3.1 uses. What is left to do:
// drop TypeBox's symbol keys (JSON has none), and name the contracts a client meets again and
// again, so that a code generator makes one `Session` type rather than one per route.
import type { TSchema } from '@sinclair/typebox';
import { PublicEvent } from '../../bus/contracts/events.ts';
import { AudioFeaturesEntry, EmotionsEntry, SentimentEntry, SpeechSegmentEntry } from '../../bus/contracts/results.ts';
import { SensorSource, Session } from '../../bus/contracts/session.ts';
import { ErrorBody } from '../error-body.ts';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const NAMED: Record<string, TSchema> = {
  Session,
  SensorSource,
  Event: PublicEvent,
  SpeechSegmentEntry,
  EmotionsEntry,
  AudioFeaturesEntry,
  SentimentEntry,
  Error: ErrorBody,
};

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** Turns schemas into the document's: each use of a named contract becomes a $ref. */
export class SchemaNamer {
  // Matched by content, not by object identity: a contract that TypeBox copied is still that contract.
  private readonly names = new Map(Object.entries(NAMED).map(([name, schema]) => [JSON.stringify(schema), name]));

  /** The `components.schemas` of the document. */
  components(): Record<string, Json> {
    return Object.fromEntries(Object.entries(NAMED).map(([name, schema]) => [name, this.inner(toJson(schema))]));
  }

  /** A schema for a place in the document: the named contracts in it as $refs. */
  schema(schema: TSchema): Json {
    return this.replace(toJson(schema));
  }

  private replace(node: Json): Json {
    if (typeof node !== 'object' || node === null) return node;
    const name = this.names.get(JSON.stringify(node));
    return name ? ref(name) : this.inner(node);
  }

  /** The node itself kept, what is inside it named. */
  private inner(node: Json): Json {
    if (typeof node !== 'object' || node === null) return node;
    if (Array.isArray(node)) return node.map((item) => this.replace(item));
    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, this.replace(value)]));
  }
}

/** The schema as JSON: TypeBox's symbol keys (Kind, Optional) go, every JSON Schema keyword stays. */
const toJson = (schema: TSchema): Json => JSON.parse(JSON.stringify(schema)) as Json;
