"""`:Sightline login copilot`: GitHub's device flow, said in the pane, on a worker thread.

The pane shows the code and the address to enter it at, then the outcome; the OAuth token
is stored for the host (copilot_auth.store_oauth_token: mode 0600) and never shown.
`:Sightline stop` ends a sign-in that waits (`cancel`): the polling stops, the pane says so,
and nothing is stored, even when GitHub's answer was already on its way."""

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

    def cancel(self) -> bool:
        """End the sign-in that waits; False when none does."""
        if not self.running or self._stop.is_set():
            return False
        self._stop.set()
        return True

    def _run(
        self,
        host: copilot_auth.Host,
        say: Callable[[narrator.Note], None],
        done: Callable[[], None],
    ) -> None:
        try:
            code = copilot_auth.start_device_flow(host)
            if self._stop.is_set():
                raise _Cancelled
            say(
                narrator.Note(
                    f"To sign in to GitHub Copilot, open {code.verification_uri} and enter "
                    f"the code {code.user_code} (waiting for GitHub…)",
                    narrator.WARNING,
                )
            )
            token = copilot_auth.poll_device_flow(host, code, self._stop.wait)
            if self._stop.is_set():
                raise _Cancelled  # stopped while the granting answer was on its way
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
            if not self._stop.is_set():
                say(narrator.error(err.message))
                return
            say(
                narrator.Note(
                    "The Copilot sign-in was cancelled (:Sightline stop); nothing was "
                    f"stored. Run {copilot_auth.LOGIN} to sign in.",
                    narrator.WARNING,
                )
            )


class _Cancelled(ProviderError):
    def __init__(self) -> None:
        super().__init__("cancelled")
