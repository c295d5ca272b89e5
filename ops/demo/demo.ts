// The demo `npm start` runs beside the service, so that its first screen shows a live stream
// analysed: an RTMP server on loopback, the demo clip published into it in real time and
// looped, and a session on it created through the public REST API with the user's token, as
// any client would. Everything it starts is stopped by stop(), the session first.
import { join } from 'node:path';
import type { Config } from '../../bus/config.ts';
import type { OpsConfig } from '../ops-config.ts';
import { freePort } from '../stack/ports.ts';
import { publish, waitForStream, type Publisher } from '../support/streams/publish.ts';
import { startRtmpServer, type RtmpServer } from '../support/streams/rtmp-server.ts';
import { mediaSeconds } from '../support/clips.ts';
import { demoClip } from './clip.ts';
import { httpRequest } from '../stack/http-client.ts';

export const DEMO_SESSION_NAME = 'Demo: faces and speech';

export interface DemoOptions {
  /** The gateway, e.g. http://127.0.0.1:8080 */
  baseUrl: string;
  /** A bearer token of the user who owns the demo session. */
  token: string;
  /** The RTMP server's files and the clip, made once and kept. */
  dir: string;
  config: Config & OpsConfig;
}

export interface Demo {
  session: string;
  streamUri: string;
  /** How long the clip runs before it starts again. */
  clipSeconds: number;
  /** The dashboard, opened on the demo session (after signing in with the token). */
  dashboardUrl: string;
  stop(): Promise<void>;
}

interface Reply {
  status: number;
  body: any;
}

function restClient(baseUrl: string, token: string) {
  return async (method: string, path: string, body?: unknown): Promise<Reply> => {
    const { status, text } = await httpRequest(`${baseUrl}/v1${path}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status, body: text === '' ? undefined : JSON.parse(text) };
  };
}

export async function startDemo(options: DemoOptions): Promise<Demo> {
  const api = restClient(options.baseUrl, options.token);
  const clip = await demoClip(join(options.dir, 'clip'), options.config);
  let rtmp: RtmpServer | undefined;
  let publisher: Publisher | undefined;
  const stopStream = async () => {
    await publisher?.stop();
    await rtmp?.stop();
  };
  try {
    rtmp = await startRtmpServer({ dir: join(options.dir, 'rtmp'), rtmpPort: await freePort(), rtmpsPort: await freePort() });
    const streamUri = rtmp.url('demo');
    publisher = publish(clip, streamUri);
    await waitForStream(streamUri);
    await stopEarlierDemos(api);
    const created = await api('POST', '/sessions', { name: DEMO_SESSION_NAME, streamUri });
    if (created.status !== 201) throw new Error(`creating the demo session: ${created.status} ${created.body?.message ?? ''}`);
    const session: string = created.body._id;
    return {
      session,
      streamUri,
      clipSeconds: mediaSeconds(clip),
      dashboardUrl: `${options.baseUrl}/#/sessions/${encodeURIComponent(session)}`,
      stop: async () => {
        // The gateway may be gone already (it crashed, or was stopped first): then there is
        // nothing to stop, and the stream goes all the same.
        await api('POST', `/sessions/${encodeURIComponent(session)}/stop`).catch(() => undefined);
        await stopStream();
      },
    };
  } catch (error) {
    await stopStream();
    throw error;
  }
}

// A start that ended without its Ctrl-C (a crash, a kill -9) left its demo session active, on a
// stream server that is gone: stopped, so that one demo runs, and an earlier one does not go on
// retrying its stream and counting against the user's active sessions.
async function stopEarlierDemos(api: ReturnType<typeof restClient>): Promise<void> {
  const active = await api('GET', '/sessions?state=active&limit=100');
  if (active.status !== 200) throw new Error(`listing active sessions: ${active.status} ${active.body?.message ?? ''}`);
  for (const session of active.body.data as { _id: string; name: string }[]) {
    if (session.name === DEMO_SESSION_NAME) await api('POST', `/sessions/${encodeURIComponent(session._id)}/stop`);
  }
}
