"""A TCP forwarder that delays what it carries, in both directions: a slow
link to a service, where the kernel has no ``tc netem`` (here: "qdisc
kind is unknown")::

    python -m tests.functional.slow_link LISTEN_HOST:PORT TO_HOST:PORT \
        --delay 0.2

Each connection accepted on ``LISTEN_HOST:PORT`` is joined to a new one to
``TO_HOST:PORT``; every chunk read from either side is written to the
other ``--delay`` seconds after it was read, in order (a one-way latency,
like netem's ``delay``, without its jitter; a round trip through the
forwarder takes twice ``--delay`` more). The bandwidth is not limited. An
end of file is passed on after the same delay (a half close); a reset
closes both sides. The forwarder prints ``listening`` once it accepts
connections and runs until killed.

``net_host.NetHost.forward(port, delay=...)`` runs it in place of socat.
"""

import argparse
import asyncio
import contextlib
import sys


async def _carry(reader, writer, delay):
    """Copy ``reader`` to ``writer``, each chunk ``delay`` seconds late."""
    loop = asyncio.get_running_loop()
    queue = asyncio.Queue()

    async def read():
        try:
            while True:
                data = await reader.read(65536)
                queue.put_nowait((loop.time() + delay, data))
                if not data:
                    return
        except OSError:
            queue.put_nowait((loop.time(), None))

    async def write():
        while True:
            due, data = await queue.get()
            await asyncio.sleep(max(0.0, due - loop.time()))
            if data is None:            # the other side broke: reset
                writer.transport.abort()
                return
            if not data:
                with contextlib.suppress(OSError):
                    writer.write_eof()
                return
            writer.write(data)
            await writer.drain()

    reading = asyncio.ensure_future(read())
    try:
        await write()
    except OSError:
        writer.transport.abort()
    finally:
        reading.cancel()


def serve(listen, to, delay):
    """Accept on ``listen`` (host, port), forward to ``to``; for ever."""

    async def joined(reader, writer):
        try:
            far_reader, far_writer = await asyncio.open_connection(*to)
        except OSError:
            writer.transport.abort()
            return
        await asyncio.gather(_carry(reader, far_writer, delay),
                             _carry(far_reader, writer, delay),
                             return_exceptions=True)
        for side in (writer, far_writer):
            side.close()

    async def main():
        server = await asyncio.start_server(joined, *listen,
                                            reuse_address=True)
        print('listening', flush=True)
        async with server:
            await server.serve_forever()

    asyncio.run(main())


def _address(text):
    host, _, port = text.rpartition(':')
    return host, int(port)


def main(argv=None):
    parser = argparse.ArgumentParser(prog='slow_link')
    parser.add_argument('listen', type=_address)
    parser.add_argument('to', type=_address)
    parser.add_argument('--delay', type=float, required=True,
                        help='seconds each chunk waits, each direction')
    args = parser.parse_args(argv)
    serve(args.listen, args.to, args.delay)
    return 0


if __name__ == '__main__':
    sys.exit(main())
