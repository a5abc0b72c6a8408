"""Moved: the evidence check is ``minloop.small.evidence`` (a layer for any model); this path
keeps ``from minloop.models.local.evidence import EvidenceCheck`` working."""

from ...small.evidence import EvidenceCheck

__all__ = ["EvidenceCheck"]
