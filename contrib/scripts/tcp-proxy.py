#!/usr/bin/python3
"""tcp-proxy.py LISTEN_PORT TARGET_HOST TARGET_PORT — a loopback TCP relay for fault tests.

Prints "ready PORT" once listening (PORT is the real port when LISTEN_PORT is 0).
SIGUSR1 cuts every relayed connection at once (both sides see a reset), as a dropped network would;
new connections are accepted afterwards as before. SIGUSR2 stalls every relayed connection instead: the
proxy stops forwarding in both directions without closing anything (a blackholed route, a peer that went
to sleep behind a NAT), so both sides' buffers fill and nothing arrives; connections made afterwards are
relayed normally. It prints "stalled N" on stdout. SIGWINCH holds every connection, old and new: what arrives
is read and kept, and nothing is forwarded, until the next SIGWINCH lets it all through (it prints "held" and
"released"): a test can have data wait in the path, then arrive at the moment it chooses. SIGTERM stops it.
"""
import asyncio
import signal
import socket
import struct
import sys


async def main():
    listen_port, host, port = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    open_pairs = set()
    stall_flags = {}
    flowing = asyncio.Event()
    flowing.set()

    async def pipe(reader, writer, stalled):
        try:
            while True:
                if stalled.is_set():
                    await asyncio.Event().wait()   # never again: the route is dead, but nobody says so
                data = await reader.read(65536)
                if not data:
                    break
                if stalled.is_set():
                    await asyncio.Event().wait()
                await flowing.wait()
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
        stalled = asyncio.Event()
        open_pairs.add(pair)
        stall_flags[pair] = stalled
        try:
            await asyncio.gather(pipe(client_reader, server_writer, stalled), pipe(server_reader, client_writer, stalled))
        finally:
            open_pairs.discard(pair)
            stall_flags.pop(pair, None)

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

    def stall():
        flags = list(stall_flags.values())
        for flag in flags:
            flag.set()
        print("stalled", len(flags), flush=True)

    def hold_or_release():
        if flowing.is_set():
            flowing.clear()
            print("held", flush=True)
        else:
            flowing.set()
            print("released", flush=True)

    server = await asyncio.start_server(handle, "127.0.0.1", listen_port)
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGUSR1, cut)
    loop.add_signal_handler(signal.SIGUSR2, stall)
    loop.add_signal_handler(signal.SIGWINCH, hold_or_release)
    stop = loop.create_future()
    loop.add_signal_handler(signal.SIGTERM, lambda: stop.done() or stop.set_result(None))
    print("ready", server.sockets[0].getsockname()[1], flush=True)
    await stop


asyncio.run(main())
