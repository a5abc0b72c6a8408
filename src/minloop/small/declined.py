"""Whether an answer declines: says it cannot answer, or asks the user something back."""

from __future__ import annotations

import re

__all__ = ["declines"]

_DECLINE = re.compile(
    r"can't|cannot|can not|unable|(?:don't|do not|does not|doesn't|did not|didn't) "
    r"(?:know|provide|give|return|include|contain|find|respond|answer)|"
    # "I don't have that", not "The Park Hyatt does not have a pool": a claim of its own
    r"\b(?:i|we|tools?|results?|service|data)\s+(?:(?:currently|also)\s+)?(?:don't|do not|does not|doesn't|did not|didn't) have|"
    r"not (?:able|available|sure|provided|found|responding)|no (?:tool|access|way|information|data|results?|"
    r"records?|matches)|sorry|couldn't|could not|nothing|"
    r"无法|不能|没有|抱歉|不知道|不清楚|暂无|未提供|不提供|不支持|不确定|找不到|未找到|不存在|未能|失败",
    re.IGNORECASE,
)


def declines(answer: str) -> bool:
    """Whether an answer says it cannot answer, or asks the user something back."""
    return bool(_DECLINE.search(answer)) or answer.rstrip().endswith(("?", "？"))
