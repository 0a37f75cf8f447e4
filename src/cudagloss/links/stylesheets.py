"""The stylesheets a quoted page names, fetched so that what they hide is known (issue 39,
class 7): without them nearly every real page's hiding would be unknown, and no quote found.

Which to fetch is html_css.Sheet's to say (its <link rel=stylesheet>s, @imports and Link
header, in cascade order); they are fetched here through the run's LinkChecker, so every rule
of a source holds for them too: URL checks (http/https only, no credentials), public addresses
only unless the page itself is local (as for its redirects), redirects, retries, the run's
and each host's limits on requests in flight. Each is read up to STYLE_MAX bytes and must be
text/css; each URL is fetched once a run (Stylesheets keeps the answer for every page that
names it, up to KEPT_MAX characters in all), and a page waits for its sheets at most its own
time budget (total_timeout).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Awaitable, Callable, Iterable
from urllib.parse import urljoin

from cudagloss.errors import shown
from cudagloss.links.html_css import STYLE_MAX, STYLESHEETS_MAX, CssFile
from cudagloss.links.page_text import decode_page
from cudagloss.links.status import LinkResult

Fetch = Callable[[str, bool], Awaitable[LinkResult]]
"""A URL's result with its body up to STYLE_MAX bytes; local addresses allowed where the bool
is (LinkChecker.check(url, page=True, cap=STYLE_MAX, inward=local), in run.py)."""

KEPT_MAX = 32 * 1024 * 1024
"""Characters of stylesheets kept for the run's other pages: past it, a sheet is not kept."""
LINK_HEADER_MAX = 16 * 1024
"""Characters of a Link header read: stylesheets named past it are not."""
_LINK = re.compile(r"<([^>]*)>([^<]*)")
_PARAM = re.compile(r""";[\t ]*([-!#$%&'*+.^_`|~0-9A-Za-z]+)[\t ]*(?:=[\t ]*(?:"([^"]*)"?|([^;,\t ]*)))?""")


def link_header(value: str, url: str) -> tuple[tuple[str, str], ...]:
    """The stylesheets a Link header names (RFC 8288: `<url>; rel=stylesheet; media=...`), as
    (URL resolved against the page's, media), in order; alternate ones are not applied, so left out."""
    found: list[tuple[str, str]] = []
    for link in _LINK.finditer(value[:LINK_HEADER_MAX]):
        params: dict[str, str] = {}
        for param in _PARAM.finditer(link.group(2)):
            params.setdefault(param.group(1).lower(), next((v for v in param.group(2, 3) if v is not None), ""))
        rel = params.get("rel", "").lower().split()
        if "stylesheet" in rel and "alternate" not in rel and len(found) <= STYLESHEETS_MAX:
            try:
                found.append((urljoin(url, link.group(1).strip()), params.get("media", "")))
            except ValueError:  # a URL urljoin refuses: fetched as it is, and refused there
                found.append((link.group(1), params.get("media", "")))
    return tuple(found)


def css_file(result: LinkResult) -> CssFile:
    """A stylesheet's text from the checker's result, or why it is not read."""
    page = result.page
    if not result.status.reachable:
        return CssFile(None, shown(result.status.value + (f" ({result.detail})" if result.detail else ""), 200))
    if page is None:
        return CssFile(None, "its content coding is not one the checker asked for")
    if page.truncated:
        return CssFile(None, f"over {STYLE_MAX // 1024} KiB")
    if page.content_type != "text/css":
        return CssFile(None, f"served as {shown(page.content_type or 'no type', 60)}, not text/css")
    return CssFile(decode_page(page.body, page.charset, sniff_meta=False))


class Stylesheets:
    """The stylesheets fetched in one run, by URL (and whether local addresses were allowed)."""

    def __init__(self, fetch: Fetch, budget: float) -> None:
        self._fetch = fetch
        self.budget = budget
        self._kept = 0
        """Seconds a page waits for its stylesheets, all rounds together (its own per-URL budget)."""
        self._tasks: dict[tuple[str, bool], asyncio.Task[CssFile]] = {}

    async def fetch(self, urls: Iterable[str], local: bool, deadline: float) -> dict[str, CssFile]:
        """Each of urls fetched (or as it was fetched before), waited for until deadline (the
        loop's clock): one still on its way then is a timeout for this page, not for the run.
        local: the page naming them is local, so they may be too."""
        tasks = {url: self._task(url, local) for url in urls}
        if tasks:
            await asyncio.wait(set(tasks.values()), timeout=max(0.0, deadline - asyncio.get_running_loop().time()))
        late = CssFile(None, f"timeout (not fetched within the page's {self.budget:g} s)")
        return {url: task.result() if task.done() else late for url, task in tasks.items()}

    def _task(self, url: str, local: bool) -> asyncio.Task[CssFile]:
        task = self._tasks.get((url, local))
        if task is None:
            task = self._tasks[url, local] = asyncio.ensure_future(self._one(url, local))
        return task

    async def _one(self, url: str, local: bool) -> CssFile:
        got = css_file(await self._fetch(url, local))
        self._kept += len(got.text or "")
        if self._kept > KEPT_MAX:  # past what is kept: fetched again should another page name it
            self._kept -= len(got.text or "")
            self._tasks.pop((url, local), None)
        return got

    async def close(self) -> None:
        """Stop what is still being fetched (the run is over)."""
        for task in self._tasks.values():
            task.cancel()
        for task in self._tasks.values():
            with contextlib.suppress(asyncio.CancelledError):
                await task
