"""Promises the repository makes to a newcomer: the commands, the layers, the sizes."""

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

TEST_COMMAND = "pip install -r requirements-dev.txt && python -m pytest"
# Arrows point down: a package imports its own layer's modules or lower layers', never a sibling's.
LAYERS = {
    "core": 0,
    "links": 1,
    "figures": 1,
    "export": 1,
    "lessons": 2,
    "runs": 3,
    "curriculum": 3,
    "rooms": 4,
}


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


def layer(module: str) -> str:
    """'lessons' for mlp.lessons.*, 'figures' for mlp.figures.* (and so on), 'core' for the rest."""
    part = module.split(".")[1] if module.count(".") else ""
    return part if part in LAYERS else "core"


def mlp_imports(path: Path) -> set[str]:
    """Every mlp module `path` imports, at the top or inside a function (not for annotations only,
    under `if TYPE_CHECKING:`, which imports nothing when the program runs)."""
    found = set()
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            node.body = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("mlp")}
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("mlp"):
            found.add(node.module)
    return found


GRAPH = {module_name(p): mlp_imports(p) for p in sorted((ROOT / "mlp").rglob("*.py"))}


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    assert TEST_COMMAND in readme and TEST_COMMAND in ci
    assert "streamlit run app.py" in readme


def test_requirements_never_pin_a_cuda_build():
    requirements = (ROOT / "requirements.txt").read_text()
    assert re.search(r"^torch>=2\.10$", requirements, re.MULTILINE)
    assert not re.search(r"torchvision", requirements)
    assert re.search(r"^streamlit>=[\d.]+,<[\d.]+$", requirements, re.MULTILINE)  # a tested range


def test_only_the_internals_module_reaches_inside_streamlit():
    """Beyond `import streamlit as st` (and its documented `streamlit.components.v1` and
    `streamlit.testing`), only pages/ui/internals.py imports from inside the package."""
    allowed = {ROOT / "pages" / "ui" / "internals.py"}
    for path in [ROOT / "app.py", *(ROOT / "pages").rglob("*.py"), *(ROOT / "deploy").rglob("*.py")]:
        if path in allowed:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("streamlit"):
                assert node.module in ("streamlit",) and all(a.name != "config" for a in node.names), (
                    f"{path.relative_to(ROOT)} imports from {node.module}: put it in pages/ui/internals.py"
                )
            if isinstance(node, ast.Import):
                assert all(a.name == "streamlit" for a in node.names if a.name.startswith("streamlit")), path


def test_the_library_never_imports_streamlit():
    for path in (ROOT / "mlp").rglob("*.py"):
        assert not re.search(r"^\s*(import|from)\s+streamlit", path.read_text(), re.MULTILINE), path


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_arrows_point_down(module):
    """core < links, figures < lessons < runs, curriculum < rooms: each imports lower layers and its own."""
    for imported in GRAPH[module]:
        here, there = layer(module), layer(imported)
        assert here == there or LAYERS[there] < LAYERS[here], (
            f"{module} ({here}) imports {imported} ({there})"
        )


def test_no_import_cycles_in_mlp():
    def resolve(name: str) -> str:  # `from mlp.data import x` is the package's __init__
        return name if name in GRAPH else name.rsplit(".", 1)[0]

    state: dict[str, str] = {}

    def visit(module: str, trail: list[str]) -> None:
        state[module] = "open"
        for imported in sorted(resolve(i) for i in GRAPH[module]):
            if imported == module or imported not in GRAPH:
                continue
            assert state.get(imported) != "open", " -> ".join([*trail, module, imported])
            if imported not in state:
                visit(imported, [*trail, module])
        state[module] = "done"

    for module in GRAPH:
        if module not in state:
            visit(module, [])


def test_every_module_and_folder_says_what_it_is_for():
    for path in (ROOT / "mlp").rglob("*.py"):
        assert ast.get_docstring(ast.parse(path.read_text())), f"{path.relative_to(ROOT)} has no docstring"
    package = ast.get_docstring(ast.parse((ROOT / "mlp" / "__init__.py").read_text()))
    for sub in ("data", "train", "lessons", "figures"):
        assert f"{sub}/" in package, sub


def test_every_class_says_its_one_job_and_no_layout_is_squeezed():
    """A class does one job and its docstring says which, in its first sentence (a reader knows
    where a change goes without counting lines). No formatter skips: the formatter lays out
    every line, so nothing is packed to look small."""
    skip = re.compile(r"#\s*fmt:\s*(skip|off)\b")
    for path in [ROOT / "app.py", *(ROOT / "mlp").rglob("*.py"), *(ROOT / "pages").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                doc = ast.get_docstring(node) or ""
                assert len(doc.split()) >= 4, (
                    f"{path.relative_to(ROOT)}: class {node.name} doesn't say its job"
                )
    for path in [ROOT / "app.py", *ROOT.glob("[mpbt]*/**/*.py")]:
        assert not skip.search(path.read_text()), path.relative_to(ROOT)


def test_bundled_sample_is_package_data():
    sample = ROOT / "mlp" / "data" / "assets" / "mnist-sample"
    assert sorted(p.name for p in sample.glob("*.gz")) == [
        "sample-images-idx3-ubyte.gz",
        "sample-labels-idx1-ubyte.gz",
    ]
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert '"mlp.data" = ["assets/mnist-sample/*.gz"]' in pyproject


def test_every_uploader_asks_for_what_it_needs_and_the_server_cap_is_the_largest():
    import tomllib

    from mlp.data.digits import MAX_IMAGE_MB
    from mlp.data.points import MAX_CSV_BYTES
    from mlp.lessons.mnist import MAX_MODEL_MB

    limits = {}
    for path in (ROOT / "pages").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "file_uploader":
                words = {k.arg: ast.unparse(k.value) for k in node.keywords}
                assert "max_upload_size" in words, f"{path.name}: an uploader without its own limit"
                limits[ast.literal_eval(words["key"])] = words["max_upload_size"]
    assert limits == {
        "pg_upload": str(MAX_CSV_BYTES // 1_000_000),
        "mn_image": "MAX_IMAGE_MB",
        "mn_model_file": "MAX_MODEL_MB",
    }
    server = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())["server"]["maxUploadSize"]
    assert server == max(MAX_CSV_BYTES // 1_000_000, MAX_IMAGE_MB, MAX_MODEL_MB)


def test_pages_show_a_caught_error_only_through_say():
    """An exception's text reaches the screen one way: ui.say(err) (pages/ui/text.py), which
    shows a person's own text literally and a fault as what it means, never its text."""

    def name(call: ast.Call) -> str:
        return getattr(call.func, "attr", getattr(call.func, "id", ""))

    for path in (ROOT / "pages").rglob("*.py"):
        tree = ast.parse(path.read_text())
        sayers = ("say", "unexpected")  # say(err) on a page; unexpected(err) where a job keeps it
        calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and name(node) in sayers]
        said = {id(arg) for call in calls for arg in call.args}
        for handler in ast.walk(tree):
            if isinstance(handler, ast.ExceptHandler) and handler.name:
                for node in ast.walk(handler):
                    if isinstance(node, ast.Name) and node.id == handler.name:
                        assert id(node) in said, f"{path.name}:{node.lineno}: {node.id} shown without say()"


def test_the_architecture_picture_matches_the_tree():
    """docs/architecture.md names every package of the library and of the pages, nested ones too,
    and no other."""
    doc = (ROOT / "docs" / "architecture.md").read_text()
    packages = {
        p.parent.relative_to(ROOT).as_posix()
        for top in ("mlp", "pages")
        for p in (ROOT / top).rglob("__init__.py")
        if p.parent != ROOT / top
    }
    for package in packages:
        assert f"{package.split('/')[-1]}/" in doc, f"docs/architecture.md doesn't show {package}"
    named = set(re.findall(r"\b(?:mlp|pages)/(?:\w+/)*?(\w+)/", doc))
    assert named <= {p.split("/")[-1] for p in packages}, named - {p.split("/")[-1] for p in packages}


def page_imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("pages"):
            found |= {node.module, *(f"{node.module}.{a.name}" for a in node.names)}
    return found


def test_serving_stays_apart_from_learning_and_below_the_widgets():
    """mlp/ knows nothing of visitors: no module of it imports pages/, and mlp/train/ holds
    learning only (no threads of its own, no executor). pages/serving/ (the frame route, turns,
    jobs, live panels) sits below the widgets: of pages/ui/ it uses only Streamlit's fenced
    internals (pages/ui/internals.py), and the widgets and pages use it."""
    for path in (ROOT / "mlp").rglob("*.py"):
        assert not any(i.startswith("pages") for i in mlp_imports(path) | page_imports(path)), path
    for path in (ROOT / "mlp" / "train").rglob("*.py"):
        text = path.read_text()
        assert not re.search(r"threading\.Thread\b|\bconcurrent\b|^\s*import queue\b", text, re.M), path
    for path in (ROOT / "pages" / "serving").rglob("*.py"):
        modules = {i for i in page_imports(path) if i.startswith("pages.ui")}
        assert modules <= {"pages.ui.internals"} | {
            i for i in modules if i.startswith("pages.ui.internals.")
        }, f"{path.relative_to(ROOT)} imports {modules}"


def test_the_readme_states_no_test_count():
    """A count of tests rots the day a test is added: the README says how long, not how many."""
    readme = (ROOT / "README.md").read_text()
    assert not re.search(r"\b\d{3} tests\b", readme)


FRONT_END = re.compile(
    r"(export default|=>|function\s*\(|<(div|style|canvas|svg|table|span)\b|\{[^}]*:[^}]*;)"
)


def test_no_python_module_holds_more_than_a_few_lines_of_front_end():
    """JavaScript, CSS and HTML live in files of their own (pages/ui/components/), where Biome
    lints them and Node tests them; a Python string holds a few lines of markup at most."""
    for path in [ROOT / "app.py", *(ROOT / "pages").rglob("*.py"), *(ROOT / "mlp").rglob("*.py")]:
        tree = ast.parse(path.read_text())
        docstrings = {
            id(n.body[0].value)
            for n in ast.walk(tree)
            if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef)
            and n.body
            and isinstance(n.body[0], ast.Expr)
            and isinstance(n.body[0].value, ast.Constant)
        }
        for node in ast.walk(tree):
            if id(node) in docstrings:
                continue
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and FRONT_END.search(node.value)
            ):
                lines = node.value.strip().count("\n") + 1
                assert lines <= 5, f"{path.relative_to(ROOT)}:{node.lineno}: {lines} lines of front-end"


def test_every_component_is_in_files_and_the_architecture_names_them():
    components = ROOT / "pages" / "ui" / "components"
    doc = (ROOT / "docs" / "architecture.md").read_text()
    assert "ui/components/" in doc and "styles/" in doc
    for folder in sorted(p for p in components.iterdir() if p.is_dir() and p.name != "__pycache__"):
        files = {f.suffix for f in folder.iterdir()}
        assert files <= {".js", ".css", ".html"}, folder
        if folder.name != "styles":
            assert (folder / f"{folder.name}.js").exists(), f"{folder.name} has no entry script"
    for test in (ROOT / "tests" / "js").glob("*.test.mjs"):  # each imports what it tests from the files
        assert "pages/ui/components/" in test.read_text(), test


# Prints each collected test as tests/conftest.py left it: its marks that matter here, in order.
ORDER_PLUGIN = """
import pytest

@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    for item in items:
        marks = [m for m in ("browser", "load", "xdist_group") if item.get_closest_marker(m)]
        print("ITEM", item.nodeid, ",".join(marks))
"""


def collect_only(plugin: str, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """pytest's collection (one process) from the project's root, with `plugin` loaded."""
    command = [
        "-m",
        "pytest",
        "-p",
        plugin,
        "--collect-only",
        "-q",
        "-n",
        "0",
        "-p",
        "no:cacheprovider",
        *args,
    ]
    return subprocess.run([sys.executable, *command], cwd=ROOT, capture_output=True, text=True, env=env)


@pytest.mark.slow
def test_the_browser_tests_share_one_worker_and_the_load_tests_come_last(tmp_path):
    (tmp_path / "order_plugin.py").write_text(ORDER_PLUGIN)
    done = collect_only("order_plugin", env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    items = [line.split(" ")[1:] for line in done.stdout.splitlines() if line.startswith("ITEM ")]
    marks = [set(rest[0].split(",")) if rest else set() for _, *rest in items]
    assert len(items) > 1000
    assert all("xdist_group" in m for m in marks if "browser" in m or "load" in m)  # one worker
    assert all("xdist_group" not in m for m in marks if not {"browser", "load"} & m)  # the other
    load = [i for i, m in enumerate(marks) if "load" in m]
    assert load and load == list(range(len(items) - len(load), len(items)))  # the last ones, together


@pytest.mark.parametrize("marked", [False, True])
def test_a_test_that_uses_the_browser_unmarked_is_refused_at_collection(tmp_path, marked):
    mark = "import pytest\n\n\n@pytest.mark.browser\n" if marked else ""
    (tmp_path / "test_it.py").write_text(f"{mark}def test_it(page):\n    pass\n")
    done = collect_only("tests.conftest", str(tmp_path))
    if marked:
        assert done.returncode == 0, done.stdout + done.stderr
    else:
        assert (
            done.returncode != 0
            and "uses app_url, browser, page: mark it `browser`" in done.stdout + done.stderr
        )
