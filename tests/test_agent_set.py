"""The generated request set of the benchmarks (``benchmarks/agent_set.py``): its shape, its split
by domain, and that it is drawn from its seed."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import agent_set  # noqa: E402


def test_the_set_spans_sixteen_domains_half_chinese_in_four_groups() -> None:
    every = agent_set.items("dev") + agent_set.items("test")
    assert len(every) == 320 and len({i.domain for i in every}) == 16
    assert Counter(i.language for i in every) == {"en": 160, "zh": 160}
    assert Counter(i.group for i in every) == {
        "one_call": 96,
        "two_step": 96,
        "not_found": 64,
        "not_returned": 64,
    }
    assert all(i.facts for i in every if i.group in ("one_call", "two_step"))
    assert not any(i.facts for i in every if i.group in ("not_found", "not_returned"))


def test_the_splits_share_no_domain_and_menus_stay_in_their_split() -> None:
    dev, test = agent_set.splits()["dev"], agent_set.splits()["test"]
    assert not set(dev) & set(test) and len(dev) == len(test) == 8
    for split, domains in (("dev", dev), ("test", test)):
        for item in agent_set.items(split):
            assert set(item.menu) <= set(domains) and item.menu[0] == item.domain
            names = [t.name for t in agent_set.tools_of(item)]
            assert len(names) == len(set(names)) and names[-1] == "calculator"


def test_the_set_is_drawn_from_its_seed() -> None:
    assert agent_set.items("dev") == agent_set.items("dev")
    requests = lambda seed: [i.request for s in ("dev", "test") for i in agent_set.items(s, seed)]
    assert requests(1) != requests(2)


def test_the_script_prints_the_test_split_as_counts_only() -> None:
    script = str(BENCHMARKS / "agent_set.py")
    shown = subprocess.run([sys.executable, script], capture_output=True, text=True, check=True).stdout
    assert "test: 160 requests over 8 domains" in shown and "?" not in shown and "？" not in shown
    refused = subprocess.run([sys.executable, script, "--show", "test"], capture_output=True, text=True)
    assert refused.returncode == 2 and "invalid choice" in refused.stderr
