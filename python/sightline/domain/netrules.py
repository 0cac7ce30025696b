"""Which URLs and addresses the network tools may reach (fetch_url, web_search, `@url:`).

Pure rules, no I/O: the fetcher (tools/web_fetch.py) resolves a host and asks these about
each address before it connects, and about each redirect before it follows one. A host the
user allowed (tools.network.allow_hosts) is fetched without asking and is the only way to
reach a loopback, private, link-local or metadata address: a page must not be a way for
the model to read the user's router, a local service or the cloud's instance credentials.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from urllib.parse import SplitResult, urlsplit

from sightline.domain.errors import Refused

ALLOW_KEY = "tools.network.allow_hosts"
SCHEMES = ("http", "https")

# Cloud instance metadata services (credentials live there): AWS/GCP/Azure/OpenStack,
# AWS ECS task metadata, AWS over IPv6, Alibaba Cloud.
_METADATA = frozenset(
    ipaddress.ip_address(a)
    for a in ("169.254.169.254", "169.254.170.2", "fd00:ec2::254", "100.100.100.200")
)
_METADATA_NAMES = frozenset({"metadata.google.internal", "metadata", "instance-data"})

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def norm_host(host: str) -> str:
    """A host as compared: lower case, no trailing dot, no IPv6 brackets."""
    return host.strip().strip("[]").rstrip(".").lower()


def host_allowed(host: str, allow_hosts: Iterable[str]) -> bool:
    """`docs.python.org` allows that host; `*.python.org` its subdomains (not the domain)."""
    name = norm_host(host)
    for entry in allow_hosts:
        want = norm_host(entry)
        if want.startswith("*."):
            if name.endswith(want[1:]) and name != want[2:]:
                return True
        elif name == want:
            return True
    return False


def parse_url(url: object) -> SplitResult:
    """The URL split, or Refused saying what is wrong with it (the model reads that)."""
    if not isinstance(url, str) or not url.strip():
        raise Refused("url: required, an http:// or https:// URL")
    text = url.strip()
    if any(c.isspace() or ord(c) < 32 for c in text):
        raise Refused("url: must not contain spaces or control characters")
    parts = urlsplit(text)
    if parts.scheme.lower() not in SCHEMES:
        raise Refused(f"url: only http:// and https:// are fetched, not {parts.scheme or text!r}")
    try:
        port = parts.port
    except ValueError:
        raise Refused("url: the port is not a number in 0..65535") from None
    if not parts.hostname or port == 0:
        raise Refused("url: names no host")
    if parts.username is not None or parts.password is not None:
        # Credentials in a URL would be sent, logged and shown: not through this tool.
        raise Refused("url: must not carry a user name or password")
    return parts


def literal(host: str) -> Address | None:
    try:
        return ipaddress.ip_address(norm_host(host))
    except ValueError:
        return None


def address_rule(address: Address) -> str | None:
    """The rule that refuses this address, or None when it is a public one."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if address in _METADATA:
        return "a cloud metadata address"
    if address.is_loopback:
        return "a loopback address"
    if address.is_link_local:
        return "a link-local address"
    if address.is_unspecified:
        return "an unspecified address"
    if address.is_multicast:
        return "a multicast address"
    if address.is_private or address.is_reserved or not address.is_global:
        return "a private address"
    return None


def name_rule(host: str) -> str | None:
    """A host refused by its name alone, before it resolves (`localhost`, metadata names)."""
    name = norm_host(host)
    if name == "localhost" or name.endswith(".localhost"):
        return "a loopback address"
    if name in _METADATA_NAMES:
        return "a cloud metadata address"
    return None


def refusal(host: str, address: str | None, rule: str) -> str:
    """What the model (and the user, on the call's line) reads when an address is refused."""
    where = f"{host} resolves to {address}" if address and address != norm_host(host) else host
    return f"refused: {where}, {rule}; only a host in {ALLOW_KEY} may reach it (nothing was sent)"


def check_addresses(host: str, addresses: Iterable[str], allow_hosts: Iterable[str]) -> None:
    """Refused unless every address the host resolves to is public or the host is allowed
    (all of them: a name that resolves to a public and a private address must not reach
    the private one on a retry)."""
    if host_allowed(host, allow_hosts):
        return
    rule = name_rule(host)
    if rule is not None:
        raise Refused(refusal(host, None, rule))
    for text in addresses:
        try:
            address = ipaddress.ip_address(text.split("%", 1)[0])
        except ValueError:
            raise Refused(f"refused: {host} resolves to {text!r}, not an address") from None
        rule = address_rule(address)
        if rule is not None:
            raise Refused(refusal(host, str(address), rule))
