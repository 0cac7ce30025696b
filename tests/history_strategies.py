"""Hypothesis strategies for history records (any records a history file may hold)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from tests import fakeapi as fa

PROMPT = {
    "type": "message",
    "role": "user",
    "content": [{"type": "text", "text": "next prompt"}],
    "visible": "next prompt",
}


IDS = st.sampled_from(["toolu_a", "toolu_b", "toolu_c", "bad id!", ""]) | st.none() | st.integers()


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=6,
)


TEXT = st.sampled_from(["hi", "", "  ", "ok\n", "caf\udce9 \udcff", "\ud800"]) | st.text(max_size=8)


def tool_use() -> st.SearchStrategy[Any]:
    return st.fixed_dictionaries(
        {"type": st.just("tool_use"), "id": IDS, "name": st.sampled_from(["read_file", "x y"])},
        optional={"input": JSON},
    )


def tool_result() -> st.SearchStrategy[Any]:
    return st.fixed_dictionaries(
        {"type": st.just("tool_result"), "tool_use_id": IDS},
        optional={
            "content": TEXT
            | st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": TEXT}), max_size=2)
            | JSON,
            "is_error": JSON,
        },
    )


def signed_thinking(text: str) -> dict[str, Any]:
    """A thinking block as the API sends it (the fake checks the signature)."""
    return {"type": "thinking", "thinking": text, "signature": fa.sign(text)}


THINKING = st.builds(signed_thinking, TEXT) | st.builds(
    lambda p: {"type": "redacted_thinking", "data": fa.redacted_thinking(p).data},
    st.text(max_size=5),
)


COMPACTION = st.fixed_dictionaries(
    {"type": st.just("compaction")},
    optional={"summary": TEXT | JSON, "keep": st.integers(-2, 6) | JSON, "replaced": JSON},
)


BLOCK = st.one_of(
    THINKING,
    st.fixed_dictionaries({"type": st.just("text"), "text": TEXT}),
    st.fixed_dictionaries({"type": st.just("text")}, optional={"text": JSON}),
    tool_use(),
    tool_result(),
    st.fixed_dictionaries({"type": st.sampled_from(["image", "thinking", "weird"])}),
    # An image reference (domain/images.py), kept or not, well-formed or not.
    st.fixed_dictionaries(
        {
            "type": st.just("image"),
            "sha256": st.text("0123456789abcdef", min_size=64, max_size=64) | JSON,
            "media_type": st.sampled_from(["image/png", "image/jpeg", "image/bmp"]) | JSON,
        },
        optional={"name": TEXT | JSON, "width": JSON, "bytes": JSON},
    ),
    JSON,
)


CONTENT = TEXT | st.lists(BLOCK, max_size=4) | JSON


MESSAGE = st.fixed_dictionaries(
    {
        "type": st.just("message"),
        "role": st.sampled_from(["user", "assistant", "system", None]),
        "content": CONTENT,
    },
    optional={"visible": TEXT | JSON, "note": JSON, "chip": JSON},
)


OTHER = st.one_of(
    COMPACTION,
    st.fixed_dictionaries(
        {
            "type": st.just("event"),
            "event": st.sampled_from(["stopped", "error", "interrupted", "limit", "done"]),
        },
        optional={"seconds": JSON, "tokens": JSON, "cost": JSON, "rounds": JSON},
    ),
    st.fixed_dictionaries({"type": st.just("plan")}, optional={"steps": JSON}),
    st.fixed_dictionaries({"type": st.just("proposal")}, optional={"lines": JSON}),
    st.fixed_dictionaries(
        {"type": st.just("meta")}, optional={"id": JSON, "workspace": JSON, "created": JSON}
    ),
    JSON,
)


RECORD = MESSAGE | OTHER


def turns() -> st.SearchStrategy[list[dict[str, Any]]]:
    """Histories as a session writes them (prompt, replies with calls, results, stop, error),
    cut at any point: a crash can come anywhere."""

    @st.composite
    def build(draw: Any) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        n = 0
        for _ in range(draw(st.integers(0, 4))):
            out.append({**PROMPT, "content": [{"type": "text", "text": draw(TEXT) or "p"}]})
            # A turn that got no reply: stopped or failed before any text, or cut off by
            # quitting (then reopened: marked interrupted, or not by an older core).
            unreplied = draw(st.sampled_from([None, None, "stopped", "error", "interrupted", ""]))
            if unreplied is not None:
                if unreplied:
                    out.append({"type": "event", "event": unreplied})
                continue
            for _ in range(draw(st.integers(0, 3))):
                calls: list[dict[str, Any]] = []
                for _ in range(draw(st.integers(0, 3))):
                    n += 1
                    same = draw(st.booleans()) and calls
                    cid = calls[-1]["id"] if same else f"toolu_{n}"
                    args = draw(
                        st.sampled_from([{}, {"path": "a"}, [1, 2], "hello", 5, None, True])
                    )
                    calls.append(
                        {"type": "tool_use", "id": cid, "name": "read_file", "input": args}
                    )
                text = [{"type": "text", "text": draw(TEXT)}] if draw(st.booleans()) else []
                # With thinking on, the reply starts with its (signed) thinking blocks.
                thought = draw(st.lists(THINKING, max_size=2))
                content = thought + text + calls
                out.append({"type": "message", "role": "assistant", "content": content})
                if not calls:
                    break
                ending = draw(st.sampled_from(["results", "stop", "crash", "error"]))
                if ending == "results":
                    results = [
                        {"type": "tool_result", "tool_use_id": c["id"], "content": "ok"}
                        for c in calls
                    ]
                    out.append({"type": "message", "role": "user", "content": results})
                elif ending == "stop":
                    results = [
                        {
                            "type": "tool_result",
                            "tool_use_id": c["id"],
                            "content": "not completed: stopped",
                            "is_error": True,
                        }
                        for c in calls
                    ]
                    out.append({"type": "message", "role": "user", "content": results})
                    out.append({"type": "event", "event": "stopped"})
                    break
                elif ending == "error":
                    out.append({"type": "event", "event": "error", "text": "overloaded"})
                    break
                else:
                    break
        cut = draw(st.integers(0, len(out)))
        out = out[:cut]
        # Compactions anywhere, keeping any number of the records before them.
        for _ in range(draw(st.integers(0, 2))):
            at = draw(st.integers(0, len(out)))
            summary = draw(st.sampled_from(["the user asked for x", "s\udcff"]))
            keep = draw(st.integers(0, at + 1))
            out.insert(at, {"type": "compaction", "summary": summary, "keep": keep, "replaced": 1})
        return out

    return build()
