// Fails inside a package's code: its stack trace must name the package's file and the line here.
import { Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

Value.Decode(Type.String(), 1);
