"""MkDocs hook: the language switch of the documentation site without a request that fails.

mkdocs-static-i18n points each page's language links at that page's translation
(``/tools/`` and ``/zh/tools/``), which is what the language menu should do. Material for MkDocs
also reads the ``<link rel="alternate">`` tags of the page head as language roots and fetches
``sitemap.xml`` beneath each one (``/tools/sitemap.xml``), to map a page to its translation.
There is one sitemap, at the site's root, and it already lists every page's translations, so
those fetches can only fail. The head tags are dropped; the menu's links stay, page to page.
"""

from __future__ import annotations

import re
from typing import Any

ALTERNATE = re.compile(r'[ \t]*<link rel="alternate" href="[^"]*" hreflang="[^"]*">\n?')


def on_post_page(output: str, page: Any, config: Any) -> str:
    head, sep, body = output.partition("</head>")
    return ALTERNATE.sub("", head) + sep + body
