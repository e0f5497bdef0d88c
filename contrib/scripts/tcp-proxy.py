#!/usr/bin/python3
"""tcp-proxy.py LISTEN_PORT TARGET_HOST TARGET_PORT — a loopback TCP relay for fault tests.

Prints "ready PORT" once listening (PORT is the real port when LISTEN_PORT is 0).
SIGUSR1 cuts every relayed connection at once (both sides see a reset), as a dropped network would;
new connections are accepted afterwards as before. SIGTERM stops it.
"""
import asyncio
import signal
import socket
import struct
import sys


async def main():
    listen_port, host, port = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    open_pairs = set()

    async def pipe(reader, writer):
        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    break
                writer.write(data)
                await writer.drain()
        except (ConnectionError, asyncio.CancelledError, OSError):
            pass
        finally:
            try:
                writer.close()
            except Exception:
                pass

    async def handle(client_reader, client_writer):
        try:
            server_reader, server_writer = await asyncio.open_connection(host, port)
        except OSError:
            client_writer.close()
            return
        pair = (client_writer, server_writer)
        open_pairs.add(pair)
        try:
            await asyncio.gather(pipe(client_reader, server_writer), pipe(server_reader, client_writer))
        finally:
            open_pairs.discard(pair)

    def cut():
        for pair in list(open_pairs):
            for w in pair:
                sock = w.get_extra_info("socket")
                if sock is not None:
                    # SO_LINGER 0: close with RST, like a broken path, not a polite FIN.
                    try:
                        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    except OSError:
                        pass
                w.transport.abort()
        open_pairs.clear()

    server = await asyncio.start_server(handle, "127.0.0.1", listen_port)
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGUSR1, cut)
    stop = loop.create_future()
    loop.add_signal_handler(signal.SIGTERM, lambda: stop.done() or stop.set_result(None))
    print("ready", server.sockets[0].getsockname()[1], flush=True)
    await stop


asyncio.run(main())
