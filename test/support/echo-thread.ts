// A model thread body without a model, for the tests of StreamThread: it answers each `echo`
// with its text, fails a stream on `fail`, and ends the whole thread on `exit`.
import { threadPort } from '../../actors/models/stream-thread-body.ts';

export type EchoRequest = { type: 'echo' | 'fail' | 'exit'; stream: number; text: string };
export type EchoReply = { type: 'echoed'; stream: number; text: string };

const port = threadPort<EchoRequest, EchoReply>();
port.serve((request) => {
  if (request.type === 'close') return port.post({ type: 'closed', stream: request.stream });
  if (request.type === 'echo') return port.post({ type: 'echoed', stream: request.stream, text: request.text });
  if (request.type === 'fail') return port.post({ type: 'failed', stream: request.stream, error: request.text });
  process.exit(3);
});
