"""Where a user reads more: the documentation site's pages, in a leaf module.

An installed package has no ``docs/`` folder, so an error or a help text that says "see
docs/client.md" points nowhere for a pip user. Every such pointer is built here, from the one
site address that ``pyproject.toml``'s project URLs and ``mkdocs.yml``'s ``site_url`` also name.
"""

from __future__ import annotations

__all__ = ["DOCS_URL", "doc_url"]

DOCS_URL = "https://amqp-jms.readthedocs.io/en/latest/"
"""The documentation site (mkdocs with directory URLs: ``docs/client.md`` is ``client/``)."""


def doc_url(page: str, anchor: str = "") -> str:
    """The site address of ``docs/<page>.md`` (``page`` without ``.md``), at ``#anchor`` if given."""
    return f"{DOCS_URL}{page}/" + (f"#{anchor}" if anchor else "")
