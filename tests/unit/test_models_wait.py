"""`:Sightline model <Tab>` while the provider's model list hangs or fails (issue 20 item 15):
only the first ask waits for the list; every later one answers at once with what is known
(still loading, or the error), so no <Tab> after the first waits."""

from __future__ import annotations

import concurrent.futures
import threading
from typing import Any

from sightline.core import Core
from sightline.entry import rpc
from sightline.providers.base import Capabilities
from tests.effective_config import effective
from tests.fake_editor import FakeEditor


class _Listing:
    """A provider whose /models hangs until released, then answers or fails."""

    model = "m-1"
    capabilities = Capabilities()

    def __init__(self, fail: bool) -> None:
        self.release = threading.Event()
        self.fail = fail
        self.asked = 0

    def models(self) -> list[str]:
        self.asked += 1
        self.release.wait(60)
        if self.fail:
            raise RuntimeError("boom")
        return ["m-1", "m-2"]


def _core(fail: bool) -> tuple[Core, _Listing]:
    core = Core(FakeEditor())
    config = effective(provider={"name": "openai", "base_url": "http://127.0.0.1:9/v1"})
    assert rpc.dispatch(core, "core.configure", [{"config": config}])["ok"] is True
    listing = _Listing(fail)
    core.session._provider = listing  # type: ignore[assignment]
    return core, listing


def _ask(core: Core, wait_ms: int) -> concurrent.futures.Future[dict[str, Any]]:
    pool = concurrent.futures.ThreadPoolExecutor(1)
    return pool.submit(lambda: dict(rpc.dispatch(core, "agent.models", [{"wait_ms": wait_ms}])))


def test_while_the_list_hangs_only_the_first_ask_waits() -> None:
    core, listing = _core(fail=False)
    first = _ask(core, 5000)  # waits (up to 5 s) for the hanging fetch
    # A later <Tab>, even one allowed to wait 5 s, answers while the fetch still hangs.
    later = _ask(core, 5000).result(timeout=4)
    assert later["loading"] is True and not first.done()
    listing.release.set()
    assert first.result(10)["models"] == ["m-1", "m-2"]
    assert listing.asked == 1


def test_after_a_failed_fetch_the_next_ask_answers_with_the_error_at_once() -> None:
    core, listing = _core(fail=True)
    listing.release.set()
    assert "RuntimeError" in str(_ask(core, 5000).result(10).get("error"))
    listing.release.clear()  # the retry hangs
    again = _ask(core, 5000).result(timeout=4)
    assert "RuntimeError" in str(again.get("error")) and listing.asked == 2
    listing.release.set()
