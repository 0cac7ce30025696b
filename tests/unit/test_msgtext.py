"""What leaves for Neovim always packs: pynvim's surrogateescape keeps a buffer's invalid
bytes (U+DC80–U+DCFF) exactly, and any other lone surrogate becomes U+FFFD."""

from __future__ import annotations

import msgpack
from hypothesis import given
from hypothesis import strategies as st

from sightline.editor import msgtext

texts = st.text(alphabet=st.characters(codec=None, categories=None), max_size=40)


@given(
    st.recursive(
        texts | st.integers(-(2**63), 2**64 - 1),
        lambda inner: st.lists(inner) | st.dictionaries(texts, inner),
    )
)
def test_anything_made_safe_packs_as_pynvim_packs(value: object) -> None:
    msgpack.packb(msgtext.safe(value), unicode_errors="surrogateescape")


@given(st.binary(max_size=40))
def test_a_buffers_invalid_bytes_travel_exactly(raw: bytes) -> None:
    text = raw.decode("utf-8", errors="surrogateescape")
    assert msgtext.safe_text(text) == text


def test_a_surrogate_from_a_json_escape_becomes_a_replacement_character() -> None:
    assert msgtext.safe({"title": "a\ud800b"}) == {"title": "a\ufffdb"}
