"""A local RTSP server for tests (GStreamer's RTSP server, loopback only).

Each mount plays an MPEG-TS feed received on a loopback UDP port (the test side loops a clip
into it with `ffmpeg -c copy`), so H.264 and AAC are re-packetised, never re-encoded.

Usage: rtsp-server.py '{"port": 8554, "mounts": [{"path": "/cam", "udpPort": 40000, "audio": true}]}'
"""
import json
import sys

import gi

gi.require_version('Gst', '1.0')
gi.require_version('GstRtspServer', '1.0')
from gi.repository import GLib, Gst, GstRtspServer  # noqa: E402


def launch_line(udp_port, audio):
    source = (
        f'udpsrc address=127.0.0.1 port={udp_port} buffer-size=4194304 '
        'caps="video/mpegts,systemstream=(boolean)true,packetsize=(int)188" '
        '! tsdemux name=demux'
    )
    video = 'demux. ! queue ! h264parse config-interval=-1 ! rtph264pay name=pay0 pt=96'
    sound = 'demux. ! queue ! aacparse ! rtpmp4gpay name=pay1 pt=97' if audio else ''
    return f'( {source} {video} {sound} )'


def main():
    spec = json.loads(sys.argv[1])
    Gst.init(None)
    server = GstRtspServer.RTSPServer()
    server.set_address('127.0.0.1')
    server.set_service(str(spec['port']))
    mounts = server.get_mount_points()
    for mount in spec['mounts']:
        factory = GstRtspServer.RTSPMediaFactory()
        factory.set_launch(launch_line(mount['udpPort'], mount['audio']))
        # One pipeline per mount, shared by every client, as a live camera would be.
        factory.set_shared(True)
        mounts.add_factory(mount['path'], factory)
    if server.attach(None) == 0:
        sys.exit(f'cannot listen on 127.0.0.1:{spec["port"]}')
    print('listening', flush=True)
    GLib.MainLoop().run()


if __name__ == '__main__':
    main()
