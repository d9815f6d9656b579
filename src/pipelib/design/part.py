"""What every method's design part is: the paths, inputs and targets of one method's jobs, read from the
:class:`~pipelib.design.Design` it belongs to (its config sections, results folder and scenarios, ``self.d``).

A part adds to the workflow's aggregates through its hooks that :class:`~pipelib.design.Design` iterates
(it never lists methods): the paper ``tables`` and ``figures`` it makes (by name), its ``result_files``, its
``ledgers`` and the guarantee ``releases`` behind one of its result files.  Light: no torch, no Snakemake."""

from __future__ import annotations


class DesignError(ValueError):
    """A config asks for something the design cannot make (named in the message)."""


class Part:
    """One method's share of the design.  ``methods``: the pipelib.stages methods whose rules it serves;
    ``folders``: the top folders of the results it owns (its result files lie under them)."""

    methods: tuple[str, ...] = ()
    folders: tuple[str, ...] = ()

    def __init__(self, design):
        self.d = design

    def tables(self) -> list[str]:
        """The paper tables this config makes from the part's runs (``<results>/<name>.csv``)."""
        return []

    def figures(self) -> list[str]:
        """The figures this config makes from the part's runs (``<results>/figures/<name>.png``)."""
        return []

    def targets(self) -> list[str]:
        """Other outputs of the default target (beyond its tables and figures)."""
        return []

    def result_files(self) -> list[str]:
        """Every result row file of the part's runs the config asks for."""
        return []

    def ledgers(self) -> list[str]:
        """Release records that stand whatever results the config asks for (FedMD: its NFDP samples')."""
        return []

    def releases(self, result: str) -> list[str]:
        """The files recording the guarantees of the releases behind one of its result files."""
        return []
