// A local RTMP server (nginx + the rtmp module), with RTMPS terminated by an nginx `stream`
// block that proxies decrypted traffic to the RTMP port. Everything lives under `dir`.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startService, waitForPorts } from '../../stack/process.ts';

const MODULE_DIRS = ['/usr/lib/nginx/modules', '/usr/share/nginx/modules'];
const MODULES = ['ngx_rtmp_module.so', 'ngx_stream_module.so'];

export interface RtmpServer {
  url(name: string): string;
  secureUrl(name: string): string;
  /** The self-signed certificate of the RTMPS port: the CA file a verifying client needs. */
  certificate: string;
  stop(): Promise<void>;
}

function modulePath(file: string): string {
  for (const dir of MODULE_DIRS) {
    const path = join(dir, file);
    if (existsSync(path)) return path;
  }
  throw new Error(`nginx module ${file} not found in ${MODULE_DIRS.join(' or ')}`);
}

function nginxBinary(): string {
  return existsSync('/usr/sbin/nginx') ? '/usr/sbin/nginx' : 'nginx';
}

// A self-signed certificate for 127.0.0.1, made once per folder. Its key is an elliptic curve's
// (P-256): made in some 10 ms of CPU, where an RSA key of 2048 bits took 0.1-0.4 s, and each
// test file with a stream server makes one.
export function selfSignedCertificate(dir: string): { cert: string; key: string } {
  const cert = join(dir, 'rtmps-cert.pem');
  const key = join(dir, 'rtmps-key.pem');
  if (!existsSync(cert) || !existsSync(key)) {
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '3650',
      '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1',
      '-keyout', key, '-out', cert,
    ], { stdio: 'ignore' });
  }
  return { cert, key };
}

function nginxConfig(dir: string, rtmpPort: number, rtmpsPort: number): string {
  const { cert, key } = selfSignedCertificate(dir);
  return [
    ...MODULES.map((file) => `load_module ${modulePath(file)};`),
    'daemon off;',
    'master_process on;',
    // The rtmp module shares live streams within one worker only.
    'worker_processes 1;',
    `pid ${join(dir, 'nginx.pid')};`,
    `lock_file ${join(dir, 'nginx.lock')};`,
    `error_log ${join(dir, 'nginx-error.log')} notice;`,
    'events { worker_connections 1024; }',
    'rtmp {',
    '  server {',
    `    listen 127.0.0.1:${rtmpPort};`,
    '    chunk_size 4096;',
    '    application live { live on; }',
    '  }',
    '}',
    'stream {',
    '  server {',
    `    listen 127.0.0.1:${rtmpsPort} ssl;`,
    `    ssl_certificate ${cert};`,
    `    ssl_certificate_key ${key};`,
    `    proxy_pass 127.0.0.1:${rtmpPort};`,
    '  }',
    '}',
    '',
  ].join('\n');
}

export async function startRtmpServer(options: {
  dir: string;
  rtmpPort: number;
  rtmpsPort: number;
}): Promise<RtmpServer> {
  const { dir, rtmpPort, rtmpsPort } = options;
  mkdirSync(dir, { recursive: true });
  const configFile = join(dir, 'nginx.conf');
  writeFileSync(configFile, nginxConfig(dir, rtmpPort, rtmpsPort));
  const errorLog = join(dir, 'nginx-error.log');
  const server = startService('nginx', nginxBinary(), ['-p', dir, '-c', configFile, '-e', errorLog], { logFile: errorLog, graceMs: 2000 });
  try {
    await waitForPorts(server, [rtmpPort, rtmpsPort]);
  } catch (error) {
    await server.stop();
    throw error;
  }
  return {
    url: (name) => `rtmp://127.0.0.1:${rtmpPort}/live/${name}`,
    secureUrl: (name) => `rtmps://127.0.0.1:${rtmpsPort}/live/${name}`,
    certificate: selfSignedCertificate(dir).cert,
    stop: () => server.stop(),
  };
}
