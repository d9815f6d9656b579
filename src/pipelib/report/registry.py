"""Every reproduction page, registered once: the tables it reads, the figures it shows, the commands it
prints and the function of :mod:`pipelib.report.pages` that writes it.  The design (a page's inputs and
the default target), the rule (its commands) and the script (its call) all read :data:`PAGES`, so a new
page is one entry here and its function in ``pages``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class PageInputs:
    """What a page function gets: each table's path (None where the config makes no such table), its
    figures (name -> path beside the page), their data files (name -> CSV), the commands a page prints
    (target name -> command), the preset and the audit's guess fractions."""

    tables: dict
    figures: dict = field(default_factory=dict)
    data: dict = field(default_factory=dict)
    commands: dict = field(default_factory=dict)
    preset: str = ""
    audit_fractions: tuple = ()


@dataclass(frozen=True)
class Page:
    """One page: ``tables`` it reads (``<results>/<name>.csv``; those in ``optional`` exist only where the
    config asks for them), ``figures`` it shows (``prefix:<p>``: its paper's figures named ``<p>...``;
    ``compare``: one per compared scenario and the audit's; ``budget``: FedMD's budget figure), ``commands``
    it prints (a table's or an own-command page's name), ``own_command`` for a page the default target does
    not make (hours of CPU at the paper's size), and ``make``, its function of :class:`PageInputs`."""

    tables: tuple[str, ...]
    make: Callable[[PageInputs], str]
    figures: str = ""
    commands: tuple[str, ...] = ()
    optional: tuple[str, ...] = ()
    own_command: bool = False


def _pages():
    from . import pages  # pandas and the claims: only the page job needs them

    return pages


def _t(x: PageInputs, *names):
    return [x.tables[n] for n in names]


PAGES: dict[str, Page] = {
    "table2": Page(
        ("table2",), lambda x: _pages().table2_page(x.tables["table2"], x.commands["table2"]), "", ("table2",)
    ),
    "table_rknn": Page(
        ("table_rknn",),
        lambda x: _pages().table_rknn_page(x.tables["table_rknn"], x.commands["table_rknn"]),
        "",
        ("table_rknn",),
    ),
    "headline": Page(
        ("table2", "table_rknn"), lambda x: _pages().headline_page(*_t(x, "table2", "table_rknn"), x.preset)
    ),
    "claims": Page(
        ("claims",), lambda x: _pages().claims_page(x.tables["claims"], x.commands["claims"]), "", ("claims",)
    ),
    "headline_claims": Page(("claims",), lambda x: _pages().headline_claims_page(x.tables["claims"], x.preset)),
    "headline_paper001": Page(
        ("table_ldpfl",),
        lambda x: _pages().headline_paper001_page(x.tables["table_ldpfl"], x.preset),
        optional=("table_ldpfl",),
    ),
    # table2: the regime of Figure 2(d)'s rows
    "paper002": Page(
        ("table2", "table3", "table4", "table5"),
        lambda x: _pages().paper002_page(
            {k: x.tables[k] for k in ("table2", "table3", "table4", "table5")}, x.figures, x.commands, x.data
        ),
        "prefix:p002_",
        ("table2", "table3", "table4", "table5"),
    ),
    # table_rknn: the regime of Figure 2's rows
    "paper003": Page(
        ("table_rknn",), lambda x: _pages().paper003_page(x.figures, x.tables["table_rknn"], x.data), "prefix:p003_"
    ),
    "paper004": Page(
        ("table_ldpdl",),
        lambda x: _pages().paper004_page(x.tables["table_ldpdl"], x.figures, x.commands["table_ldpdl"], x.data),
        "prefix:p004_",
        ("table_ldpdl",),
        optional=("table_ldpdl",),
    ),
    "paper001": Page(
        ("table_ldpfl",),
        lambda x: _pages().paper001_page(x.tables["table_ldpfl"], x.figures, x.commands["table_ldpfl"], x.data),
        "prefix:p001_",
        ("table_ldpfl",),
        optional=("table_ldpfl",),
    ),
    "compare": Page(
        ("compare", "audit"),
        lambda x: _pages().compare_page(
            x.tables["compare"], x.tables["audit"], x.commands["compare"], x.figures, fractions=x.audit_fractions
        ),
        "compare",
        ("compare",),
    ),
    "fedmd_budget": Page(
        ("fedmd_budget",),
        lambda x: _pages().fedmd_budget_page(x.tables["fedmd_budget"], x.figures, x.commands["fedmd_budget"]),
        "budget",
        ("fedmd_budget",),
        own_command=True,
    ),
    "fedmd_ablation": Page(
        ("fedmd_ablation",),
        lambda x: _pages().fedmd_ablation_page(x.tables["fedmd_ablation"], x.commands["fedmd_ablation"]),
        "",
        ("fedmd_ablation",),
        own_command=True,
    ),
}


def register_page(name: str, page: Page) -> Page:
    """Add a page (a method's module registers its own when imported); its name must be new."""
    if name in PAGES:
        raise ValueError(f"page {name!r} is registered already")
    PAGES[name] = page
    return page


def page_module(name: str) -> str:
    """The module that registered page ``name`` (its page job imports it before it looks the page up)."""
    return PAGES[name].make.__module__


def default_pages() -> tuple[str, ...]:
    """The pages the default target makes, in the order they are listed."""
    return tuple(name for name, page in PAGES.items() if not page.own_command)


def own_command_pages() -> tuple[str, ...]:
    return tuple(name for name, page in PAGES.items() if page.own_command)


def command_targets(res: Callable[[str], str], preset: str) -> dict[str, str]:
    """Target name -> the file whose command a page prints: a table's CSV, or an own-command page."""
    names = {name for page in PAGES.values() for name in page.commands}
    own = set(own_command_pages())
    return {n: f"docs/reproduction/{preset}/{n}.md" if n in own else res(f"{n}.csv") for n in sorted(names)}
