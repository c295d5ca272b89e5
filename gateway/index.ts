// The gateway's parts as code outside the service uses them (the lab in ops/bench): enough to
// build its WebSocket server on a plain HTTP server.
export { Authenticator } from './auth/authenticator.ts';
export { ClientAddresses } from './client-address.ts';
export { RateLimit } from './rate-limit.ts';
export { busSender } from './routes/bus-call.ts';
export { attachWebSocket } from './ws/server.ts';
