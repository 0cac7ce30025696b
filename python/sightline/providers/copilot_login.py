"""`:Sightline login copilot`: GitHub's device flow, said in the pane, on a worker thread.

The pane shows the code and the address to enter it at, then the outcome; the OAuth token
is stored for the host (copilot_auth.store_oauth_token: mode 0600) and never shown."""

from __future__ import annotations

import threading
from collections.abc import Callable

from sightline.domain import narrator
from sightline.providers import copilot_auth
from sightline.providers.base import ProviderError


class Login:
    """At most one sign-in at a time; `cancel()` ends the one that waits."""

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(
        self, host: str | None, say: Callable[[narrator.Note], None], done: Callable[[], None]
    ) -> bool:
        """Start the flow (False when one is already waiting for its code)."""
        if self.running:
            return False
        self._stop.clear()
        self._thread = threading.Thread(
            target=self._run,
            args=(copilot_auth.Host.of(host), say, done),
            name="sightline-copilot-login",
            daemon=True,
        )
        self._thread.start()
        return True

    def cancel(self) -> None:
        self._stop.set()

    def _run(
        self,
        host: copilot_auth.Host,
        say: Callable[[narrator.Note], None],
        done: Callable[[], None],
    ) -> None:
        try:
            code = copilot_auth.start_device_flow(host)
            say(
                narrator.Note(
                    f"To sign in to GitHub Copilot, open {code.verification_uri} and enter "
                    f"the code {code.user_code} (waiting for GitHub…)",
                    narrator.WARNING,
                )
            )
            token = copilot_auth.poll_device_flow(host, code, self._stop.wait)
            path = copilot_auth.store_oauth_token(host, token)
            done()
            say(
                narrator.Note(
                    f"✓ Signed in to GitHub Copilot on {host.name}; the sign-in is kept in "
                    f"{path} (readable by you only).",
                    narrator.WARNING,
                )
            )
        except ProviderError as err:
            say(narrator.error(err.message))
