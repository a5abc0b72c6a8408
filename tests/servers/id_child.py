"""Starts COUNT runs in one second (the clock stopped at one instant) on the run store STORE and
prints their ids, one a line: for the test that no two runs are given one id.

    python id_child.py STORE COUNT
"""

from __future__ import annotations

import sys
from datetime import datetime, tzinfo

import minloop.log
from minloop import Loop
from minloop.runs import open_store
from minloop.testing import FunctionModel


class Stopped(datetime):
    """A clock that always says the same second."""

    @classmethod
    def now(cls, tz: tzinfo | None = None) -> Stopped:
        return cls(2026, 12, 5, 12, 0, 0, tzinfo=tz)


def main() -> None:
    store, count = sys.argv[1], int(sys.argv[2])
    minloop.log.datetime = Stopped  # type: ignore[misc]
    loop = Loop(FunctionModel(lambda request: "never called"), store=open_store(store))
    ids = [loop.iter("hi").trace_id for _ in range(count)]  # each run recorded, never driven
    sys.stdout.write("\n".join(ids) + "\n")


if __name__ == "__main__":
    main()
