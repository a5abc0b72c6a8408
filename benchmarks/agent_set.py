"""A generated request set over sixteen tool domains, half Chinese, split by domain.

    .venv/bin/python benchmarks/agent_set.py                 # counts per split, group and language
    .venv/bin/python benchmarks/agent_set.py --show dev      # the development split's requests
    .venv/bin/python benchmarks/agent_set.py --seed 7        # another draw of the same templates

Each domain (``agent_domains*.py``: a library, a company directory, recipes, car rental,
electricity meters, museums, planets, software packages, tides, ski resorts, school grades,
parcel shipping, bank accounts, server monitoring, earthquakes, fuel prices) has one to two
tools of the usual shapes (lookups by id, by name and by date, lists, enums, units, a service
that fails or times out, empty results) and writes ten requests, each in English and in
Chinese, from a random source: three answered by one call, three that need two calls or a call
and arithmetic or a unit conversion, two where the tool fails or finds nothing, two asking for
what no tool returns. 320 requests in all.

The domains are split by the seed: half are the development split (rules may be written from
it), half the test split, which this script never prints: only its counts. A request is run
with a menu of its own domain's tools, the tools of two other domains of the same split, and the
calculator.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from agent_domains import DOMAINS_A, Domain, Fact
from agent_domains_b import DOMAINS_B
from agent_domains_c import DOMAINS_C
from agent_domains_d import DOMAINS_D

from minloop import Tool
from minloop.builtins import calculator

DOMAINS: list[Domain] = [*DOMAINS_A, *DOMAINS_B, *DOMAINS_C, *DOMAINS_D]
GROUPS = ("one_call", "two_step", "not_found", "not_returned")
SEED = 2026


@dataclass(frozen=True)
class Item:
    split: str
    domain: str
    group: str
    language: str
    request: str
    facts: list[Fact]
    menu: tuple[str, ...]  # the domains whose tools are offered


def group_names(text: str) -> list[str]:
    """An argument of groups by comma (``--groups=one_call,two_step``), each one of ``GROUPS``."""
    names = text.split(",")
    if unknown := sorted(set(names) - set(GROUPS)):
        raise argparse.ArgumentTypeError(
            f"no group is called {unknown[0]!r}; the groups are {', '.join(GROUPS)}"
        )
    return names


def splits(seed: int = SEED) -> dict[str, list[str]]:
    """The domains of each split: half for development, half for test."""
    names = sorted(d.name for d in DOMAINS)
    random.Random(seed).shuffle(names)
    half = len(names) // 2
    return {"dev": sorted(names[:half]), "test": sorted(names[half:])}


def items(split: str, seed: int = SEED) -> list[Item]:
    """The requests of one split, English and Chinese of each template side by side."""
    chosen = splits(seed)[split]
    rng = random.Random(f"{seed}:{split}")
    out: list[Item] = []
    for domain in (d for d in DOMAINS if d.name in chosen):
        others = rng.sample([n for n in chosen if n != domain.name], 2)
        menu = (domain.name, *others)
        for group, english, chinese, facts in domain.requests(random.Random(f"{seed}:{domain.name}")):
            out.append(Item(split, domain.name, group, "en", english, facts, menu))
            out.append(Item(split, domain.name, group, "zh", chinese, facts, menu))
    return out


def tools_of(item: Item) -> list[Tool]:
    """The menu a request is run with."""
    by_name = {d.name: d.tools for d in DOMAINS}
    return [t for name in item.menu for t in by_name[name]] + [calculator]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--show", choices=["dev"], help="print the development split's requests")
    args = parser.parse_args()
    for split, domains in splits(args.seed).items():
        rows = items(split, args.seed)
        counts = Counter((i.group, i.language) for i in rows)
        print(f"{split}: {len(rows)} requests over {len(domains)} domains")
        for group in GROUPS:
            print(f"  {group:12s} en {counts[(group, 'en')]:3d}  zh {counts[(group, 'zh')]:3d}")
    if args.show == "dev":
        for n, item in enumerate(items("dev", args.seed)):
            print(
                f"{n:3d} {item.domain:11s} {item.group:12s} {item.language} {item.request}  -> {item.facts}"
            )


if __name__ == "__main__":
    main()
