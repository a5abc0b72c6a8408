import inspect

import minloop


def test_all_is_sorted_and_complete() -> None:
    assert minloop.__all__ == sorted(minloop.__all__)
    public = {
        name
        for name in dir(minloop)
        if not name.startswith("_") and not inspect.ismodule(getattr(minloop, name))
    }
    assert public == set(minloop.__all__)
    for name in minloop.__all__:
        assert getattr(minloop, name).__module__.startswith("minloop") or name in {
            "Message",
            "ErrorCode",
            "Status",
            "Decision",
            "StreamEvent",
            "CallModel",
            "Execute",
            "Outcome",
        }


def test_import_has_no_side_effects() -> None:
    import subprocess
    import sys

    code = "import sys, minloop; heavy = {'xllamacpp', 'openai', 'typer', 'rich', 'ray', 'jsonschema', 'mcp'} & set(sys.modules); print(sorted(heavy))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert (out.stdout.strip(), out.stderr) == ("[]", "")


def test_budgets_typed_output_and_streaming_load_on_first_use() -> None:
    import subprocess
    import sys

    code = (
        "import sys, minloop, minloop.models.openai\n"
        "later = ['minloop.layers.budget', 'minloop.layers.output', 'minloop.layers.streaming', 'minloop.models.sse']\n"
        "print([m for m in later if m in sys.modules])\n"
        "print(minloop.Budget.__name__, minloop.Price.__name__, minloop.LoopStream.__name__)\n"
        "print([m for m in later if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == [
        "[]",
        "Budget Price LoopStream",
        "['minloop.layers.budget', 'minloop.layers.streaming']",
    ]
    assert "Budget" in dir(minloop) and "LoopStream" in dir(minloop)
