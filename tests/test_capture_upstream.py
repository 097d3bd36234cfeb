"""An upstream provider's address (memtape.capture.upstream): whether it is the recording
proxy's own."""

import pytest

from memtape.capture.upstream import Upstream


class TestReaches:
    @pytest.mark.parametrize(
        "url",
        [
            "http://127.0.0.1:8787/v1",
            "http://localhost:8787",
            "http://LOCALHOST.:8787/",
            "http://127.1:8787/v1",
            "http://0.0.0.0:8787",
        ],
    )
    def test_a_loopback_address_on_the_proxys_port_is_the_proxy(self, url: str) -> None:
        assert Upstream(url).reaches_loopback(8787)

    @pytest.mark.parametrize(
        "url",
        [
            "http://127.0.0.1:8788/v1",
            "https://127.0.0.1",
            "http://api.example:8787",
            "http://10.0.0.1:8787",
            "http://[::1]:8787",
        ],
    )
    def test_another_port_or_host_is_not(self, url: str) -> None:
        assert not Upstream(url).reaches_loopback(8787)
