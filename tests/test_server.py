"""The server's connections send each answer at once (pages/ui/internals.py, 5: TCP_NODELAY).

Streamlit's listening socket has protocol number 0, so asyncio left Nagle's algorithm on for
every connection: on a keep-alive connection an answer's body waited for the browser's delayed
ACK of its headers, 40 ms each, which capped a lone visitor at ~14 frames a second.
"""

import asyncio
import http.client
import socket
import statistics
import threading
import time
from urllib.parse import urlparse

import pytest

from pages.ui.internals import no_delay
from tests.harness import serve_app


def test_a_connection_accepted_on_a_protocol_0_socket_has_nodelay():
    no_delay()
    listener = socket.socket(socket.AF_INET)  # as Streamlit binds its port: protocol number 0
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    accepted: list[int] = []  # each accepted connection's TCP_NODELAY

    async def main() -> None:
        def connected(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            accepted.append(
                writer.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
            )
            writer.close()

        server = await asyncio.start_server(connected, sock=listener)
        async with server:
            _, writer = await asyncio.open_connection(*listener.getsockname())
            while not accepted:
                await asyncio.sleep(0.01)
            writer.close()

    worker = threading.Thread(target=asyncio.run, args=(main(),))  # a loop of its own (a
    worker.start()  # browser test's Playwright may be running one on this thread)
    worker.join(timeout=30)
    assert listener.proto == 0 and accepted == [1]


@pytest.mark.slow
def test_answers_on_a_keep_alive_connection_come_without_a_40_ms_wait():
    with serve_app("test-server.log") as url:
        address = urlparse(url)
        connection = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
        seconds = []
        for _ in range(15):  # one connection: the browser's way (and a load balancer's)
            start = time.perf_counter()
            connection.request("GET", "/_stcore/health")
            response = connection.getresponse()
            assert response.status == 200 and response.read() == b"ok"
            seconds.append(time.perf_counter() - start)
        connection.close()
    assert statistics.median(seconds) < 0.02  # 0.044 with Nagle's algorithm on; ~0.001 here
