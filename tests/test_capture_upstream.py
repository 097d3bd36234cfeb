"""An upstream provider's address (memtape.capture.upstream): whether it is the recording
proxy's own."""

import socket
from typing import Any

import pytest

from memtape.capture.upstream import Upstream
from memtape.core.errors import MemtapeError


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

    def test_a_name_that_resolves_to_this_machine_on_the_proxys_port_is_the_proxy(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        asked: list[str] = []

        def resolve(host: str, *args: Any) -> list[tuple[Any, ...]]:
            asked.append(host)
            address = "127.0.0.1" if host == "gateway.internal" else "10.1.2.3"
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, 0))]

        monkeypatch.setattr(socket, "getaddrinfo", resolve)
        assert ((True, False, False), ["gateway.internal", "api.internal"]) == (
            (
                Upstream("http://gateway.internal:8787").reaches_loopback(8787),
                Upstream("http://api.internal:8787").reaches_loopback(8787),
                Upstream("http://gateway.internal:9999").reaches_loopback(8787),
            ),
            asked,
        )

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


PROXY_NAMES = ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy")


class TestEnvironmentProxy:
    @pytest.fixture(autouse=True)
    def _no_proxy_set(self, monkeypatch: pytest.MonkeyPatch) -> None:
        for name in PROXY_NAMES:
            monkeypatch.delenv(name, raising=False)

    def test_https_proxy_carries_an_https_upstream_with_its_credentials(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("https_proxy", "http://me:p%40ss@proxy.corp:3128")
        proxy = Upstream("https://api.example/v1").proxy
        assert ("proxy.corp", 3128, (("Proxy-Authorization", "Basic bWU6cEBzcw=="),)) == (
            (proxy.host, proxy.port, proxy.headers) if proxy else None
        )

    def test_all_proxy_stands_in_when_no_https_proxy_is_named(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("ALL_PROXY", "proxy.corp:8080")
        proxy = Upstream("https://api.example").proxy
        assert ("proxy.corp", 8080, ()) == (
            (proxy.host, proxy.port, proxy.headers) if proxy else None
        )

    @pytest.mark.parametrize(
        ("no_proxy", "url"),
        [
            ("example", "https://api.example"),
            (".example:443", "https://api.example"),
            ("*", "https://api.example"),
            ("", "http://api.example"),
        ],
    )
    def test_no_proxy_or_a_plain_http_upstream_is_reached_directly(
        self, monkeypatch: pytest.MonkeyPatch, no_proxy: str, url: str
    ) -> None:
        monkeypatch.setenv("HTTPS_PROXY", "http://proxy.corp:3128")
        monkeypatch.setenv("NO_PROXY", no_proxy)
        assert None is Upstream(url).proxy

    def test_a_socks_proxy_is_not_spoken(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("ALL_PROXY", "socks5://127.0.0.1:1080")
        upstream = Upstream("https://api.example")
        assert (None, "socks5", "ALL_PROXY") == (
            upstream.proxy,
            upstream.unspoken.scheme if upstream.unspoken else None,
            upstream.unspoken.variable if upstream.unspoken else None,
        )

    @pytest.mark.parametrize(
        ("name", "url"),
        [
            ("https_proxy", "http://alice:s3cret@proxy.corp:notaport"),
            ("HTTPS_PROXY", "http://alice:s3cret@[proxy.corp"),
            ("ALL_PROXY", "http://alice:s3cret@proxy.corp:99999"),
            ("HTTPS_PROXY", "http://alice:s3cret@proxy..corp:3128"),
        ],
    )
    def test_a_proxy_url_that_is_no_url_is_refused_naming_its_variable_not_its_password(
        self, monkeypatch: pytest.MonkeyPatch, name: str, url: str
    ) -> None:
        """The refusal is printed (a CI job's log keeps it): the URL's password stays out."""
        monkeypatch.setenv(name, url)
        with pytest.raises(MemtapeError) as refused:
            Upstream("https://api.example")
        assert (
            f"${name} is not a proxy URL (an http:// URL with a host and a port; "
            "its value is not shown, as it may hold a password)"
        ) == str(refused.value)
