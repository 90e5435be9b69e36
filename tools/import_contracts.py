"""An import-linter contract type the built-in ones lack: no import cycle between modules.

import-linter's `acyclic_siblings` compares packages (a package stands for everything under it), which
catches cycles inside one package but is far stricter than "no module cycle" across packages (config and
models depend on each other as packages without any module cycle). `acyclic_modules` looks at modules:
a direct import A -> B is part of a cycle when B leads back to A. Lazy imports count (the issue 12 circle
went through lazy ones); TYPE_CHECKING ones count as the other contracts count them (the
`exclude_type_checking_imports` setting). Configured in pyproject.toml, run by `make lint`.
"""

from __future__ import annotations

from grimp import ImportGraph
from importlinter import Contract, ContractCheck, fields, output
from importlinter.application import contract_utils
from importlinter.application.contract_utils import AlertLevel


class AcyclicModulesContract(Contract):
    type_name = "acyclic_modules"

    containers = fields.ListField(subfield=fields.StringField())
    ignore_imports = fields.SetField(subfield=fields.ImportExpressionField(), required=False)
    unmatched_ignore_imports_alerting = fields.EnumField(AlertLevel, default=AlertLevel.ERROR)

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        removal = contract_utils.remove_ignored_imports_and_report(
            graph=graph,
            ignore_imports=self.ignore_imports,  # type: ignore[arg-type]
            unmatched_alerting=self.unmatched_ignore_imports_alerting,  # type: ignore[arg-type]
        )
        containers: list[str] = self.containers  # type: ignore[assignment]
        modules = {
            m for name in containers for m in graph.find_descendants(name) | {name} if m in graph.modules
        }
        cycles: set[tuple[str, ...]] = set()
        for importer in sorted(modules):
            for imported in graph.find_modules_directly_imported_by(importer):
                if imported == importer or imported not in modules:
                    continue
                back = graph.find_shortest_chain(importer=imported, imported=importer)
                if back:
                    cycles.add(_canonical((importer, *back[:-1])))
        return ContractCheck(
            kept=not cycles,
            warnings=list(removal.warnings),
            metadata={"cycles": sorted(cycles)},
        )

    def render_broken_contract(self, check: ContractCheck) -> None:
        cycles: list[tuple[str, ...]] = check.metadata["cycles"]
        output.print_error(f"{len(cycles)} import cycle(s) between modules:", bold=True)
        output.new_line()
        for cycle in cycles:
            output.indent_cursor()
            output.print_error(" -> ".join([*cycle, cycle[0]]), bold=False)
        output.new_line()


def _canonical(cycle: tuple[str, ...]) -> tuple[str, ...]:
    """The cycle started at its smallest module, so each cycle is reported once."""
    start = cycle.index(min(cycle))
    return cycle[start:] + cycle[:start]


__all__ = ["AcyclicModulesContract"]
