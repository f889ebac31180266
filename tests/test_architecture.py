"""Architecture guards: no import cycle between files of the `whatif` package, no import from a lower layer
into a higher one (LAYERS), and no file over 400 lines unless its module docstring says why (a line starting
with "Long because").

Imports are read with `ast` (module-level and inside functions; relative imports resolved), so
a deferred import inside a function still counts: a cycle hidden in a function is still a cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = "whatif"
ROOT = Path(__file__).resolve().parent.parent / PACKAGE
MAX_LINES = 400
LONG_MARKER = "Long because"

# The layers, lowest first: a module imports from its own layer or lower ones, never from a higher one.
# specs < roofline < scenario < simulator / config_search < reports < api < cli. Beside them: errors.py (the one
# exception) below everything; validate/ (fits roofline's efficiencies to measurements) beside scenario;
# inputs.py (a scenario file and given values -> Scenario, the file's simulator sections checked), queries/
# (compare, tiers), claims/ (the papers' claims, estimated) and accel/ (the simulator's optional compiled build)
# beside the simulator; api below cli (cli/search uses it). The package root (`whatif`: __version__, the API's
# names loaded lazily) is outside the layers: Python runs it before any of its modules.
LAYERS = (
    ("errors",),
    ("specs",),
    ("roofline",),
    ("scenario", "validate"),
    ("inputs", "simulator", "config_search", "queries", "claims", "accel"),
    ("reports",),
    ("api",),
    ("cli", "__main__"),
)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def package_modules() -> dict[str, Path]:
    """Every module of the package: dotted name -> file."""
    return {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _resolve(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports_of(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package modules `module` imports anywhere in its file (a `from x import y` where y is
    a submodule counts as importing x.y, else x)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    is_package = path.name == "__init__.py"
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(node, module, is_package)
            names = [f"{target}.{a.name}" if f"{target}.{a.name}" in modules else target
                     for a in node.names]
        else:
            continue
        for name in names:
            # `import a.b.c` binds a.b.c; take the longest prefix that is a package module.
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name and name != module:
                found.add(name)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = package_modules()
    return {m: imports_of(m, p, modules) for m, p in modules.items()}


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    cycles: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))
    return cycles


def layer_of(module: str) -> int | None:
    """The index in LAYERS of a module's top-level part (None: the package root)."""
    parts = module.split(".")
    if len(parts) == 1:
        return None
    for rank, names in enumerate(LAYERS):
        if parts[1] in names:
            return rank
    raise AssertionError(f"{module}: not in any layer of LAYERS; add its package or file there")


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """'a -> b' for each import from a module into one of a higher layer."""
    found = []
    for module, deps in sorted(graph.items()):
        low = layer_of(module)
        for dep in sorted(deps):
            high = layer_of(dep)
            if low is not None and high is not None and high > low:
                found.append(f"{module} -> {dep}")
    return found


def long_files() -> list[tuple[int, str]]:
    """Files over MAX_LINES lines whose module docstring has no line starting with LONG_MARKER."""
    offenders = []
    for path in sorted(ROOT.rglob("*.py")):
        text = path.read_text()
        lines = len(text.splitlines())
        if lines <= MAX_LINES:
            continue
        doc = ast.get_docstring(ast.parse(text)) or ""
        if not any(line.strip().startswith(LONG_MARKER) for line in doc.splitlines()):
            offenders.append((lines, str(path.relative_to(ROOT.parent))))
    return offenders


def test_no_import_cycle_between_files():
    cycles = import_cycles(import_graph())
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_cycle_finder_finds_a_cycle():
    # the guard above must be able to fail
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert import_cycles(graph) == [["a", "b", "c"]]


def test_no_lower_layer_imports_a_higher_one():
    upward = upward_imports(import_graph())
    assert not upward, "imports from a lower layer into a higher one (see LAYERS):\n" + "\n".join(upward)


def test_layer_guard_finds_an_upward_import():
    # the guard above must be able to fail
    graph = {"whatif.specs.a": {"whatif.roofline.b"}, "whatif.roofline.b": {"whatif.specs.a", "whatif"},
             "whatif.cli.c": {"whatif.api"}}
    assert upward_imports(graph) == ["whatif.specs.a -> whatif.roofline.b"]


def test_no_long_file_without_a_stated_reason():
    offenders = long_files()
    assert not offenders, (
        f"files over {MAX_LINES} lines without a '{LONG_MARKER}' line in the module docstring:\n"
        + "\n".join(f"{n:5d} {p}" for n, p in offenders))


def test_no_technique_family_imports_a_sibling_family():
    # families (modules that @register techniques) share pieces through base.py, kit.py and
    # decoding.py only, so the registry is the one module that imports them all
    graph, modules = import_graph(), package_modules()
    prefix = f"{PACKAGE}.roofline.techniques."
    families = {m for m, p in modules.items()
                if m.startswith(prefix) and "\n@register\n" in p.read_text()}
    crossing = sorted(f"{m} -> {d}" for m in families for d in graph[m] if d in families)
    assert not crossing, "technique families importing each other:\n" + "\n".join(crossing)


def test_roofline_core_takes_no_basic_types_from_techniques():
    # the vocabulary a pass is priced in lives in roofline/context.py, below the techniques
    graph = import_graph()
    core = f"{PACKAGE}.roofline."
    upward = sorted(f"{m} -> {d}" for m, deps in graph.items()
                    if m.startswith(core) and not m.startswith(core + "techniques")
                    for d in deps if d.startswith(core + "techniques") and not d.endswith(".compose"))
    assert not upward, "roofline core importing from techniques/ beyond TechniqueSet:\n" + "\n".join(upward)
